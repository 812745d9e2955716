#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packet rates of two builds of net_ipoibcm against net_memif, interleaved.

    devtools/rates-ab.py --before DIR --after DIR [--rounds N] [--window S]
                         [--sizes 64,1500,9000,65534]

Each round runs the testpmd pair of devtools/bench.py (benchlib/rates.py:
txonly on host A, rxonly on host B, forwarding lcores on different cores)
for memif, then for srq=on and srq=off with the build before and the
build after a change, in turn, so that a machine whose speed changes
slows them alike. Prints each round, then per configuration and size the
median and the best of the rounds and their ratios to memif (from the same
rounds). Figures only: nothing is judged. The two build directories must
not be under a world-writable directory such as /tmp (EAL refuses to load
a plugin from there).
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "app", "test-ipoibcm", "blackbox"))

import ipoibtest  # noqa: E402
from benchlib import ab, configs, rates  # noqa: E402
from testpmd import TestPmd  # noqa: E402


def main():
    ap = ab.parser(__doc__)
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--sizes", default="64,1500")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    builds = ab.builds(args)
    res = {}
    for rnd in range(args.rounds):
        for label, cfg, which in ab.runs():
            ipoibtest.BUILD = builds[which]	# read by plugin() per process
            out = {}
            # as bench.py: large frames in a pair of their own
            for part, targs, group in configs.rate_groups(cfg, sizes):
                out.update(rates.measure(
                    TestPmd, cfg, ab.name("rab", rnd, label + group),
                    part, targs, args.window))
            for size in out:
                res.setdefault((size, label), []).append(out[size]["mpps"])
                print("round %d %-16s %5d B: %.3f Mpps" %
                      (rnd, label, size, out[size]["mpps"]), flush=True)
    ab.cleanup_runtime("rab")
    print("\nper configuration, over %d rounds of %.1f s windows (Mpps):" %
          (args.rounds, args.window))
    for (size, label), vs in sorted(res.items()):
        memif = res.get((size, "memif"))
        line = "%-16s %5d B: median %7.3f  best %7.3f" % (
            label, size, statistics.median(vs), max(vs))
        if label != "memif" and memif:
            line += "  vs memif %.2fx / %.2fx" % (
                statistics.median(vs) / statistics.median(memif),
                max(vs) / max(memif))
        print(line)


if __name__ == "__main__":
    main()
