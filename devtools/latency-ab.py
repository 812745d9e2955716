#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Round trips of two builds of net_ipoibcm against net_memif, interleaved.

    devtools/latency-ab.py --before DIR --after DIR [--rounds N] [--pings N]
                           [--sizes 64,1500]

Each round runs the ping-pong of devtools/bench.py (benchlib/latency.py:
dpdk-ipoibcm-bench echo on core 1, ping on core 0) for memif, then for
srq=on and srq=off with the build before and the build after a change, in
turn, so that a machine whose speed changes slows them alike. Prints each
round, then per configuration and size the median of the rounds' medians,
p99 and p99.9, and the best round's p99. Figures only: nothing is judged.
The two build directories must not be under a world-writable directory
such as /tmp (EAL refuses to load a plugin from there).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "app", "test-ipoibcm", "blackbox"))

from benchlib import ab, latency  # noqa: E402
from ipoibtest import EAL  # noqa: E402

SIZES = (64, 1500)


def plugin(build):
    return os.path.join(build, "drivers/net/ipoib_cm/librte_net_ipoibcm.so")


def main():
    ap = ab.parser(__doc__)
    ap.add_argument("--pings", type=int, default=20000)
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    builds = ab.builds(args)
    res = {}
    env = dict(os.environ)
    for rnd in range(args.rounds):
        for label, cfg, which in ab.runs():
            b = builds[which]
            out = latency.measure(b, plugin(b), env, EAL, cfg,
                                  ab.name("lab", rnd, label), sizes,
                                  args.pings)
            latency.record(res, rnd, label, out)
    ab.cleanup_runtime("lab")
    latency.summary(res, args.rounds, args.pings)


if __name__ == "__main__":
    main()
