# SPDX-License-Identifier: BSD-3-Clause
"""Before/after comparisons of two builds (devtools/latency-ab.py,
devtools/rates-ab.py, devtools/autotest-ab.py): their common arguments,
the runs of one round and the names of their processes.

A round runs memif once (the driver under test is not in it; its tools
come from the build after), then each net_ipoibcm mode with the build
before and the build after, in turn.
"""

import argparse
import glob
import os
import shutil

from benchlib import configs


def parser(doc):
    """--before, --after and --rounds; the caller adds its own."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    return ap


def builds(args):
    return {"before": os.path.abspath(args.before),
            "after": os.path.abspath(args.after)}


def runs():
    """(label, configuration, "before" or "after") in the order of a
    round."""
    out = [("memif", configs.MEMIF, "after")]
    for cfg in configs.IPOIB:
        for which in ("before", "after"):
            out.append(("%s %s" % (cfg.split()[1], which), cfg, which))
    return out


def name(what, rnd, label):
    """A fabric / file-prefix name unique per process, round and run."""
    return "%s%d_%d_%s" % (what, os.getpid(), rnd,
                           label.replace(" ", "").replace("=", ""))


def cleanup_runtime(what):
    """EAL's runtime directories of this run's processes: their file
    prefixes begin as name(what, ...) makes them."""
    for d in glob.glob("/var/run/dpdk/%s%d_*" % (what, os.getpid())):
        shutil.rmtree(d, ignore_errors=True)
