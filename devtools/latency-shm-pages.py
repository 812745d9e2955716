#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Round trips of net_ipoibcm with the shm fabric on 4 KiB and on huge pages.

    devtools/latency-shm-pages.py [--build DIR] [--rounds N] [--pings N]
                                  [--sizes 64,1500]

The shm fabric keeps its queues in files under /dev/shm. Each round runs
the ping-pong of devtools/bench.py (benchlib/latency.py) for memif, then
for srq=on and srq=off with /dev/shm remounted huge=never (4 KiB pages,
Debian's default), huge=advise (2 MiB pages where a mapping asks: the
fabric asks for its CQs of 2 MiB and more, shm_arena.c) and
huge=within_size (every file range large enough), in turn, so that a
machine whose speed changes slows them alike. memif's memory is not under
/dev/shm: it runs once per round. Prints each round, then per
configuration and size the median of the rounds' medians, p99 and p99.9,
and the best round's p99. Figures only: nothing is judged.

Needs root and nothing else using /dev/shm's mount options; /dev/shm's
huge= option is put back as it was, also on an error.
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "app", "test-ipoibcm", "blackbox"))

from benchlib import ab, configs, latency  # noqa: E402
from ipoibtest import EAL  # noqa: E402

SHM = "/dev/shm"
PAGES = ("never", "advise", "within_size")


def huge_option():
    """/dev/shm's huge= option now ("never" when not given)."""
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[1] == SHM:
                for opt in fields[3].split(","):
                    if opt.startswith("huge="):
                        return opt[len("huge="):]
    return "never"


def remount(huge):
    subprocess.run(["mount", "-o", "remount,huge=" + huge, SHM], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pings", type=int, default=50000)
    ap.add_argument("--sizes", default="64,1500")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    plugin = os.path.join(build, "drivers/net/ipoib_cm/librte_net_ipoibcm.so")
    sizes = [int(s) for s in args.sizes.split(",")]
    env = dict(os.environ)
    was = huge_option()
    res = {}
    try:
        for rnd in range(args.rounds):
            for pages in PAGES:
                remount(pages)
                cfgs = configs.IPOIB
                if pages == PAGES[0]:
                    cfgs = [configs.MEMIF] + cfgs
                for cfg in cfgs:
                    label = cfg if cfg == configs.MEMIF else \
                        "%s %s" % (cfg.split()[1], pages)
                    out = latency.measure(build, plugin, env, EAL, cfg,
                                          ab.name("lsp", rnd, label), sizes,
                                          args.pings)
                    latency.record(res, rnd, label, out, 24)
    finally:
        remount(was)
        ab.cleanup_runtime("lsp")
    latency.summary(res, args.rounds, args.pings, 24)


if __name__ == "__main__":
    main()
