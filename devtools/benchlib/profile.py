# SPDX-License-Identifier: BSD-3-Clause
"""Where the time goes at 64 B: perf record on each testpmd process of a
txonly -> rxonly pair, top symbols by share of samples.

Unlike the instruction counts, this sees stalls (a cache line another
core wrote) as well as instructions; it varies with the machine's load.
"""

import os
import re
import subprocess
import tempfile
import time

from benchlib import configs, rates

TOP = 12


def perf_top(pid, seconds, data):
    rec = subprocess.run(["perf", "record", "-q", "-o", data, "-p",
                          str(pid), "--", "sleep", str(seconds)],
                         capture_output=True, text=True)
    if rec.returncode != 0:
        raise RuntimeError("perf record failed: %s" % rec.stderr[-500:])
    rows = []
    # by library first: a stripped one (Debian's net_memif) has no
    # symbols, and its samples would scatter over addresses
    for sort, top in (("dso", 4), ("symbol", TOP)):
        out = subprocess.run(["perf", "report", "-i", data, "--stdio",
                              "--no-children", "--sort", sort, "-g",
                              "none"], capture_output=True, text=True).stdout
        rows += ["by %s:" % sort] + [
            "  " + " ".join(line.split()) for line in out.splitlines()
            if re.match(r"\s+[\d.]+%", line)][:top]
    return rows


def measure(TestPmd, cfg, name, seconds):
    """{"sender": [rows], "receiver": [rows]} at 64 B."""
    vdev_a, vdev_b = configs.vdevs(cfg, name)
    a = b = None
    report = {}
    try:
        b = TestPmd(name + "_b", [vdev_b], configs.SMALL_ARGS, main_lcore=1)
        a = TestPmd(name + "_a", [vdev_a], configs.SMALL_ARGS, main_lcore=0)
        rates.link_up(a)
        rates.link_up(b)
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        a.cmd("set txpkts 64")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        a.cmd("start")
        if cfg in configs.IPOIB and not a.wait_xstat(
                "conns_tx_connected", 1, rates.CONNECT_S):
            raise RuntimeError("%s: no connection" % name)
        time.sleep(rates.WARMUP_S)	# traffic settles
        with tempfile.TemporaryDirectory(prefix="ipoibcm-bench-perf-") as d:
            for side, t in (("sender", a), ("receiver", b)):
                report[side] = perf_top(t.p.pid, seconds,
                                        os.path.join(d, side + ".data"))
        a.cmd("stop")
        b.cmd("stop")
    finally:
        for t in (a, b):
            if t is not None:
                t.quit()
        configs.cleanup(cfg, name)
    return report
