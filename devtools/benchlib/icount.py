# SPDX-License-Identifier: BSD-3-Clause
"""Instructions per packet, counted by callgrind inside the bursts.

dpdk-ipoibcm-bench icount runs both hosts as two ports of one process,
in one thread: a burst of 32 frames sent on port 0, then port 1 polled
until they are all back. Under valgrind --tool=callgrind with
--toggle-collect=bench_icount_rx (the app's out-of-line wrapper around
rte_eth_rx_burst, so the driver's rx burst and everything it calls) only
the receive side is counted; a second run counts bench_icount_tx. The
app dumps the counts after each size, so one run gives every size:
dump total / packets = instructions per packet, and the exclusive counts
per function say where they go. Valgrind counts instructions, not time:
the figures are the same however loaded the machine is.
"""

import glob
import os
import re
import subprocess
import tempfile

from benchlib import configs

SIDES = ("rx", "tx")
VALGRIND_S = 1200	# a hang guard


def parse_dump(path):
    """(trigger, total Ir, {function: exclusive Ir}) of one dump file."""
    names = {}
    excl = {}
    trigger, total = "", 0
    fn = obj = None
    burst = set()	# what the wrapper calls: the driver's burst
    objs = {}
    skip = False
    with open(path) as f:
        for line in f:
            if line.startswith("desc: Trigger:"):
                trigger = line.split("Client Request:", 1)[-1].strip()
            elif line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith(("ob=", "fn=", "cob=", "cfn=")):
                # a name is given once, at its first use, called or not
                m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?",
                             line.rstrip())
                table = objs if m.group(2) == "ob" else names
                if m.group(4) is not None:
                    table[m.group(3)] = m.group(4)
                if m.group(1):
                    if (m.group(2) == "fn" and fn is not None and
                            fn.startswith("bench_icount_")):
                        burst.add(table[m.group(3)])
                    continue
                if m.group(2) == "ob":
                    obj = table[m.group(3)]
                else:
                    fn = table[m.group(3)]
                    if fn.startswith("0x"):
                        # a stripped library's function: where it lies
                        fn = "%s+%s" % (os.path.basename(obj or "?"), fn)
            elif line.startswith("calls="):
                skip = True	# the next cost line is a call's inclusive
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and fn is not None:
                    excl[fn] = excl.get(fn, 0) + int(parts[1])
    # a stripped library (Debian's net_memif) has addresses for names;
    # the function the wrapper calls is its burst function
    for name in burst:
        for f in list(excl):
            if f.endswith("+" + name):
                excl[f + " (its burst function)"] = excl.pop(f)
    return trigger, total, excl


def run(build, plugin, env, eal_args, cfg, name, sizes, packets, top=8,
        notes=None, loopback=False, burst=None):
    """{size: {"rx": {"ir", "top"}, "tx": {...}, "calls": ...}}.

    loopback: the harness's --loopback (port 0 to itself in loopback
    mode; net_ipoibcm sends datagrams to its own UD QP, the path of
    pmd_perf_autotest). burst: frames per burst, the harness's 32 unless
    given (1: a ping-pong's bursts, whose fixed costs no packet shares).

    Stock net_memif (the baseline, not our code) sometimes dies of SIGSEGV
    under callgrind while its ports close, after every count was printed
    and dumped (EAL's interrupt thread, in rte_free or rte_intr_fd_get:
    6 of 50 such processes on 2026-12-03). Such a run's counts are
    complete and kept, and what happened is appended to notes; any other
    failure, and any failure of net_ipoibcm, fails the count.
    """
    exe = os.path.join(build, "app/ipoibcm-bench/dpdk-ipoibcm-bench")
    res = {s: {} for s in sizes}
    with tempfile.TemporaryDirectory(prefix="ipoibcm-bench-cg-") as tmp:
        for side in SIDES:
            out_file = os.path.join(tmp, "cg.%s.out" % side)
            prefix = "%s_%s" % (name, side)
            cmd = ["valgrind", "--tool=callgrind", "--fair-sched=yes",
                   "--toggle-collect=bench_icount_%s" % side,
                   "--callgrind-out-file=" + out_file, exe, "-l", "0"] + \
                list(eal_args) + ["--file-prefix=" + prefix, "-d", plugin]
            cmd += ["--vdev=" + v for v in
                    configs.one_process_vdevs(cfg, prefix)]
            # the link wait is a hang guard: under callgrind on a busy
            # machine net_memif's connection (its interrupt thread) can
            # take minutes, which must not fail the count
            cmd += ["--", "icount", "--packets", str(packets), "--sizes",
                    ",".join(str(s) for s in sizes),
                    "--timeout", str(VALGRIND_S * 3 // 4)]
            if loopback:
                cmd.append("--loopback")
            if burst is not None:
                cmd += ["--burst", str(burst)]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   env=env, timeout=VALGRIND_S)
            finally:
                configs.cleanup(cfg, prefix)
            counts = {}
            for line in p.stdout.splitlines():
                if line.startswith("icount "):
                    kv = dict(f.split("=", 1) for f in line.split()[1:])
                    counts[int(kv["size"])] = {k: int(v) for k, v in
                                               kv.items()}
            complete = set(counts) == set(sizes)
            if (p.returncode < 0 and complete and cfg == configs.MEMIF and
                    notes is not None):
                notes.append("%s %s: died of signal %d after its counts "
                             "(net_memif closing under callgrind); counts "
                             "kept" % (cfg, side, -p.returncode))
            elif p.returncode != 0 or not complete:
                raise RuntimeError("%s %s: icount failed (%d):\n%s" %
                                   (cfg, side, p.returncode,
                                    (p.stdout + p.stderr)[-2000:]))
            dumps = sorted(glob.glob(out_file + ".*"),
                           key=lambda f: int(f.rsplit(".", 1)[1]))
            for d in dumps:
                trigger, total, excl = parse_dump(d)
                m = re.match(r"icount size=(\d+)", trigger)
                if m is None:
                    continue
                size = int(m.group(1))
                n = counts[size]["packets"]
                if n == 0 or counts[size]["lost"]:
                    raise RuntimeError("%s %s: %d B frames lost: %s" %
                                       (cfg, side, size, counts[size]))
                fns = sorted(excl.items(), key=lambda kv: -kv[1])
                res[size][side] = {
                    "ir": total / n,
                    "top": [(f, v / n) for f, v in fns[:top] if v],
                }
                res[size]["calls_" + side] = counts[size]
    for size in sizes:
        if set(SIDES) - set(res[size]):
            raise RuntimeError("%s: no callgrind dump for %d B" %
                               (cfg, size))
    return res


def version():
    try:
        return subprocess.run(["valgrind", "--version"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return None
