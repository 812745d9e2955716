#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Cycles per packet in the bursts of two builds, interleaved, one thread.

    devtools/cycles-ab.py --before DIR --after DIR [--rounds N]
                          [--packets N] [--sizes 64,1500]

Each round runs dpdk-ipoibcm-bench's icount harness natively (not under
valgrind) for memif, then for srq=on and srq=off with the build before
and the build after, in turn: one process, port 0 sends bursts of 32 to
port 1 in the same thread, and the harness reads the TSC around every
burst call. Prints per configuration and size the median and the best
round of: tx cycles per packet and rx cycles per packet (calls that
received); and per configuration the cycles of an rx call on the
receiving port when nothing arrives (an idle poll, the harness's last
million calls). One
thread and no second core: the figures move with the machine's speed,
not with two processes meeting on cores. Figures only; nothing is judged.
The build directories must not be under a world-writable directory such
as /tmp (EAL refuses to load a plugin from there).
"""

import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "app", "test-ipoibcm", "blackbox"))

import ipoibtest  # noqa: E402
from benchlib import ab, configs  # noqa: E402

RUN_S = 600	# a hang guard


def measure(build, cfg, name, sizes, packets):
    """{size: {"tx": c/pkt, "rx": c/pkt}, "idle": c/idle poll}."""
    ipoibtest.BUILD = build
    plugin = ipoibtest.plugin()
    exe = os.path.join(build, "app/ipoibcm-bench/dpdk-ipoibcm-bench")
    cmd = [exe, "-l", "0"] + list(ipoibtest.EAL) + [
        "--file-prefix=" + name, "-d", plugin]
    cmd += ["--vdev=" + v for v in configs.one_process_vdevs(cfg, name)]
    cmd += ["--", "icount", "--packets", str(packets), "--sizes",
            ",".join(str(s) for s in sizes), "--timeout", str(RUN_S // 2)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env=ipoibtest.ENV, timeout=RUN_S)
    finally:
        configs.cleanup(cfg, name)
    res = {}
    for line in p.stdout.splitlines():
        if not line.startswith(("icount ", "idle ")):
            continue
        kv = {k: int(v) for k, v in
              (f.split("=", 1) for f in line.split()[1:])}
        if line.startswith("idle "):
            res["idle"] = kv["cycles"] / kv["polls"]
            continue
        if kv["lost"] or kv["packets"] == 0:
            raise RuntimeError("%s: frames lost: %s" % (cfg, line))
        res[kv["size"]] = {
            "tx": kv["tx_cycles"] / kv["packets"],
            "rx": kv["rx_cycles"] / kv["packets"],
        }
    if set(res) != set(sizes) | {"idle"}:
        raise RuntimeError("%s: icount failed (%d):\n%s" %
                           (cfg, p.returncode,
                            (p.stdout + p.stderr)[-2000:]))
    return res


def main():
    ap = ab.parser(__doc__)
    ap.add_argument("--packets", type=int, default=3200000)
    ap.add_argument("--sizes", default="64,1500")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    builds = ab.builds(args)
    res, idle = {}, {}
    for rnd in range(args.rounds):
        for label, cfg, which in ab.runs():
            out = measure(builds[which], cfg, ab.name("cab", rnd, label),
                          sizes, args.packets)
            for size in sizes:
                res.setdefault((label, size), []).append(out[size])
                print("round %d %-16s %5d B: tx %6.1f  rx %6.1f" %
                      (rnd, label, size, out[size]["tx"], out[size]["rx"]),
                      flush=True)
            idle.setdefault(label, []).append(out["idle"])
            print("round %d %-16s idle poll %6.1f" %
                  (rnd, label, out["idle"]), flush=True)
    ab.cleanup_runtime("cab")
    print("\nper configuration, %d rounds: cycles per packet, median "
          "(best):" % args.rounds)
    for (label, size), vs in sorted(res.items()):
        print("%-16s %5d B: " % (label, size) + "  ".join(
            "%s %6.1f (%6.1f)" % (k, statistics.median(v[k] for v in vs),
                                  min(v[k] for v in vs))
            for k in ("tx", "rx")))
    print("cycles per idle rx poll, median (best):")
    for label, vs in sorted(idle.items()):
        print("%-16s %6.1f (%6.1f)" % (label, statistics.median(vs),
                                       min(vs)))


if __name__ == "__main__":
    main()
