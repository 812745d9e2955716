#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pmd_perf_autotest of two builds of net_ipoibcm against net_memif.

    devtools/autotest-ab.py --before DIR --after DIR [--rounds N]

Each round runs stock dpdk-test pmd_perf_autotest (benchlib/autotest.py:
two ports of one driver in one process, both in loopback mode, so that
net_ipoibcm's frames go as datagrams to the port's own UD QP) for memif,
then for srq=on and srq=off with the build before and the build after a
change, in turn. Prints each round, then per configuration the median and
the best (lowest) cycles per packet of the rounds and their ratios to
memif's from the same rounds. Figures only: nothing is judged. The build
directories must not be under a world-writable directory such as /tmp
(EAL refuses to load a plugin from there).
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "app", "test-ipoibcm", "blackbox"))

import ipoibtest  # noqa: E402
from benchlib import ab, autotest  # noqa: E402


def main():
    ap = ab.parser(__doc__)
    args = ap.parse_args()
    builds = ab.builds(args)
    res = {}
    for rnd in range(args.rounds):
        for label, cfg, which in ab.runs():
            ipoibtest.BUILD = builds[which]
            out = autotest.measure(ipoibtest.plugin(), ipoibtest.stock_env(),
                                   ipoibtest.EAL, cfg,
                                   ab.name("aab", rnd, label))
            if "cycles" not in out:
                print("round %d %-16s: %s" % (rnd, label, out["unavailable"]),
                      flush=True)
                continue
            res.setdefault(label, []).append(out["cycles"])
            print("round %d %-16s: %d cycles per packet" %
                  (rnd, label, out["cycles"]), flush=True)
    ab.cleanup_runtime("aab")
    print("\nper configuration, over %d rounds (cycles per packet):" %
          args.rounds)
    memif = res.get("memif")
    for label, vs in sorted(res.items()):
        line = "%-16s median %6.1f  best %4d" % (
            label, statistics.median(vs), min(vs))
        if label != "memif" and memif:
            line += "  vs memif %.2fx / %.2fx" % (
                statistics.median(vs) / statistics.median(memif),
                min(vs) / min(memif))
        print(line)


if __name__ == "__main__":
    main()
