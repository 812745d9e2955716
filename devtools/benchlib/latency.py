# SPDX-License-Identifier: BSD-3-Clause
"""Round-trip times: dpdk-ipoibcm-bench echo on host B, ping on host A.

Two processes busy-polling, on different cores; A sends one frame at a
time and times its echo with the TSC. One call measures one
configuration at some sizes: {size: {"median_us", "p99_us", "p999_us",
"min_us", "max_us", "count", "lost"}}.
"""

import os
import re
import select
import signal
import statistics
import subprocess
import time

from benchlib import configs

READY_S = 60		# hang guards, not measurements
PING_S = 600


def app(build):
    return os.path.join(build, "app/ipoibcm-bench/dpdk-ipoibcm-bench")


def eal(cpu, prefix, vdev, plugin, eal_args):
    return ["-l", str(cpu)] + list(eal_args) + [
        "--file-prefix=%s" % prefix, "-d", plugin, "--vdev=" + vdev]


def wait_ready(p, name):
    """The echo's MAC, from its "echo ready mac=..." line."""
    out = ""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [],
                                deadline - time.monotonic())
        if not r:
            break
        line = p.stdout.readline()
        if not line:
            break
        out += line
        m = re.search(r"echo ready mac=([0-9A-Fa-f:]{17})", line)
        if m:
            return m.group(1)
    raise RuntimeError("%s: echo not ready:\n%s" % (name, out[-2000:]))


def parse(out):
    res = {}
    for line in out.splitlines():
        if not line.startswith("rtt "):
            continue
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        res[int(kv["size"])] = {
            "count": int(kv["count"]), "lost": int(kv["lost"]),
            "min_us": int(kv["min_ns"]) / 1e3,
            "median_us": int(kv["median_ns"]) / 1e3,
            "p99_us": int(kv["p99_ns"]) / 1e3,
            "p999_us": int(kv["p999_ns"]) / 1e3,
            "max_us": int(kv["max_ns"]) / 1e3,
            "ud_rx": int(kv.get("ud_rx", 0))}
    return res


def measure(build, plugin, env, eal_args, cfg, name, sizes, pings):
    vdev_a, vdev_b = configs.vdevs(cfg, name)
    exe = app(build)
    echo = subprocess.Popen(
        [exe] + eal(1, name + "_e", vdev_b, plugin, eal_args) +
        ["--", "echo", "--timeout", str(PING_S)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=env)
    try:
        mac = wait_ready(echo, name)
        cmd = [exe] + eal(0, name + "_p", vdev_a, plugin, eal_args) + [
            "--", "ping", "--peer", mac, "--packets", str(pings),
            "--sizes", ",".join(str(s) for s in sizes)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=PING_S)
        res = parse(p.stdout)
        if p.returncode != 0 or set(res) != set(sizes):
            said = [line for line in (p.stdout + p.stderr).splitlines()
                    if not line.startswith(("EAL:", "TELEMETRY:"))]
            raise RuntimeError("%s: ping failed (%d): %s" %
                               (name, p.returncode, " / ".join(said)[-2000:]))
        return res
    finally:
        echo.send_signal(signal.SIGTERM)
        try:
            echo.wait(60)
        except subprocess.TimeoutExpired:
            echo.kill()
            echo.wait()
        echo.stdout.close()
        configs.cleanup(cfg, name)


def record(res, rnd, label, out, width=16):
    """Print one measure()'s result as round rnd's of label; keep it in
    res ({(size, label): [result, ...]}) for summary()."""
    for size, v in sorted(out.items()):
        res.setdefault((size, label), []).append(v)
        print("round %d %-*s %5d B: median %.2f p99 %.2f p99.9 %.2f us" %
              (rnd, width, label, size, v["median_us"], v["p99_us"],
               v["p999_us"]), flush=True)


def summary(res, rounds, pings, width=16):
    """Per label and size: the median of the rounds' medians, p99 and
    p99.9, and the best round's p99."""
    print("\nper configuration, over %d rounds of %d pings (us):" %
          (rounds, pings))
    for (size, label), vs in sorted(res.items()):
        print("%-*s %5d B: median %.2f  p99 %.2f  p99.9 %.2f  best p99 "
              "%.2f" % (width, label, size,
                        statistics.median(v["median_us"] for v in vs),
                        statistics.median(v["p99_us"] for v in vs),
                        statistics.median(v["p999_us"] for v in vs),
                        min(v["p99_us"] for v in vs)))
