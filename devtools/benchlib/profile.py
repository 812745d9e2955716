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
    report = {}
    with rates.pair(TestPmd, cfg, name, configs.SMALL_ARGS) as (a, b):
        a.cmd("set txpkts 64")
        a.cmd("start")
        time.sleep(rates.WARMUP_S)	# traffic settles
        with tempfile.TemporaryDirectory(prefix="ipoibcm-bench-perf-") as d:
            for side, t in (("sender", a), ("receiver", b)):
                report[side] = perf_top(t.p.pid, seconds,
                                        os.path.join(d, side + ".data"))
        a.cmd("stop")
        b.cmd("stop")
    return report
