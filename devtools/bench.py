#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: net_ipoibcm (srq=on, srq=off) against DPDK's net_memif.

Interleaved rounds: each round runs every configuration once, in turn
(memif, ipoibcm srq=on, ipoibcm srq=off), measurement by measurement, so
a machine that changes speed during the run (a shared one does) slows
every configuration of a round alike. Per configuration it reports the
median and the best of the rounds, and ratios to memif from the same
rounds (median/median, best/best). A round measures:

  - packet rates: two stock dpdk-testpmd processes, txonly -> rxonly,
    at 64 and 1500 B (all three), 9000 and 65534 B (net_ipoibcm only:
    net_memif of DPDK 22.11 refuses frames over 1518 B), one window each;
  - 1 and 2 queue pairs at 64 B (the same pair, --rxq/--txq 2);
  - round trips at 64 and 1500 B: dpdk-ipoibcm-bench ping against echo;
  - single-core memcpy of 64000 B blocks (dpdk-test-ipoibcm perf_memcpy);
  - connection setups per second, one at a time and 16 at once, in both
    receive modes (dpdk-test-ipoibcm perf_connect);
  - stock dpdk-test pmd_perf_autotest on two ports of each driver.

Once per run, as it does not vary with the machine's load: instructions
per packet of the rx and the tx bursts, counted by callgrind
(benchlib/icount.py), in bursts of 32 and, at 64 B, of one frame (a
ping-pong's); then perf's top symbols of each testpmd process at
64 B (benchlib/profile.py). --out FILE writes the report (reStructuredText)
and the plot beside it (FILE with .png).

usage: devtools/bench.py [--build DIR] [--rounds N] [--window S]
                         [--pings N] [--icount-packets N] [--no-autotest]
                         [--no-perf] [--out FILE] [--smoke]
       devtools/bench.py --icount-only [--icount-packets N]
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import traceback

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "devtools"))
sys.path.insert(0, os.path.join(TOP, "app/test-ipoibcm/blackbox"))

from benchlib import (autotest, configs, icount, latency,  # noqa: E402
                      memcpy, plot, profile, rates, report, setups)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds (default 5)")
    ap.add_argument("--window", type=float, default=2.0,
                    help="seconds of each rate window (default 2)")
    ap.add_argument("--pings", type=int, default=50000,
                    help="round trips per size and round (default 50000)")
    ap.add_argument("--icount-packets", type=int, default=32000,
                    help="packets counted under callgrind per size")
    ap.add_argument("--no-autotest", action="store_true",
                    help="leave out pmd_perf_autotest")
    ap.add_argument("--no-perf", action="store_true",
                    help="leave out the perf profiles")
    ap.add_argument("--icount-only", action="store_true",
                    help="only the instruction counts (two minutes, the "
                    "same on any load: the check after each change)")
    ap.add_argument("--out", help="write the report (RST) here, the plot "
                    "beside it")
    ap.add_argument("--smoke", action="store_true",
                    help="every instrument once with tiny parameters (a "
                    "test that the tools run, not a measurement)")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.window, args.pings = 1, 1.0, 100
        args.icount_packets, args.no_autotest = 320, True
        args.no_perf = True
    if args.icount_only:
        args.rounds, args.no_perf = 0, True
    for key in ("pings", "icount_packets"):
        if getattr(args, key) < 1:
            ap.error("--%s=%s: expected a positive integer" %
                     (key.replace("_", "-"), getattr(args, key)))
    if args.rounds < 0 or (args.rounds == 0 and not args.icount_only):
        ap.error("--rounds=%d: expected a positive integer" % args.rounds)
    if args.window <= 0:
        ap.error("--window=%s: expected a positive number" % args.window)
    if args.out and not os.path.isdir(os.path.dirname(
            os.path.abspath(args.out))):
        ap.error("--out=%s: no such directory" % args.out)
    return args


class Run:
    """The figures of every round, and what failed."""

    def __init__(self, args):
        self.args = args
        self.res = {"rates": {}, "memcpy": [], "setups": [], "mq": {},
                    "latency": {}, "autotest": {}, "icount": {},
                    "icount_lpbk": {}, "icount_b1": {},
                    "profile": {}, "errors": []}

    def attempt(self, what, fn, *a):
        """fn(*a), or None with the failure kept for the report."""
        try:
            return fn(*a)
        except Exception as e:	# a failed point must not end the run
            msg = "%s: %s" % (what, e)
            print("  FAILED " + msg, flush=True)
            if not isinstance(e, RuntimeError):
                traceback.print_exc()
            self.res["errors"].append(msg)
            return None


def record(table, cfg, key, value):
    table.setdefault(cfg, {}).setdefault(key, []).append(value)


def round_rates(run, TestPmd, rnd):
    res, args = run.res, run.args
    for cfg in configs.CONFIGS:
        for sizes, targs, what in configs.rate_groups(cfg):
            name = configs.unique(cfg, what, rnd)
            r = run.attempt("%s rates %s round %d" % (cfg, sizes, rnd),
                            rates.measure, TestPmd, cfg, name, sizes,
                            targs, args.window) or {}
            for size in sizes:
                record(res["rates"], cfg, size, r.get(size))
                if r.get(size):
                    print("  %-16s %6d B: %8.3f Mpps %8.2f Gbit/s" %
                          (cfg, size, r[size]["mpps"], r[size]["gbps"]),
                          flush=True)


def round_mq(run, TestPmd, rnd):
    for cfg in configs.CONFIGS:
        for q in (1, 2):
            name = configs.unique(cfg, "q%d" % q, rnd)
            r = run.attempt("%s %d queue(s) round %d" % (cfg, q, rnd),
                            rates.measure, TestPmd, cfg, name, [64],
                            configs.SMALL_ARGS, run.args.window, q)
            point = None
            if r:
                point = dict(r[64], rxq=r.get("rxq"), txq=r.get("txq"))
                print("  %-16s %d queue(s): %8.3f Mpps rx by queue %s" %
                      (cfg, q, point["mpps"], point["rxq"]), flush=True)
            record(run.res["mq"], cfg, q, point)


def round_latency(run, env, rnd):
    args = run.args
    for cfg in configs.CONFIGS:
        name = configs.unique(cfg, "p", rnd)
        r = run.attempt("%s latency round %d" % (cfg, rnd), latency.measure,
                        args.build, run.plugin, env, run.eal, cfg, name,
                        configs.SMALL, args.pings) or {}
        for size in configs.SMALL:
            record(run.res["latency"], cfg, size, r.get(size))
            if r.get(size):
                print("  %-16s %6d B: rtt median %.2f us p99 %.2f us "
                      "p99.9 %.2f us" % (cfg, size, r[size]["median_us"],
                                         r[size]["p99_us"],
                                         r[size]["p999_us"]), flush=True)


def round_other(run, env, rnd):
    r = run.attempt("memcpy round %d" % rnd, memcpy.measure, run.args.build,
                    env, run.eal, "bmemcpy_%d_%d" % (os.getpid(), rnd))
    run.res["memcpy"].append(r)
    if r:
        print("  memcpy %s: %.2f Gbit/s" % (memcpy.BASELINE,
                                           r[memcpy.BASELINE]), flush=True)
    r = run.attempt("perf_connect round %d" % rnd, setups.measure,
                    run.args.build, env, run.eal,
                    "bconn_%d_%d" % (os.getpid(), rnd))
    run.res["setups"].append(r)
    for key in (r or {}):
        print("  setups %s: %.0f/s" % (setups.name(key), r[key]),
              flush=True)
    if run.args.no_autotest:
        return
    for cfg in configs.CONFIGS:
        r = run.attempt("%s pmd_perf_autotest round %d" % (cfg, rnd),
                        autotest.measure, run.plugin, env, run.eal, cfg,
                        configs.unique(cfg, "t", rnd))
        run.res["autotest"].setdefault(cfg, []).append(r)
        if r:
            print("  %-16s pmd_perf_autotest: %s" % (
                cfg, r.get("cycles", r.get("unavailable"))), flush=True)


def icounts(run, env):
    why = None
    if icount.version() is None:
        why = "valgrind not installed (devtools/setup.sh)"
    elif "LD_PRELOAD" in env:
        why = "a sanitizer build: valgrind cannot run it"
    # the RC counts of two ports, then one port in loopback mode:
    # datagrams to its own UD QP, the path pmd_perf_autotest measures
    # (net_memif has no loopback mode)
    # and the RC counts of bursts of one frame at 64 B: what a ping-pong's
    # bursts cost, where no packet shares a burst's fixed costs
    passes = (("icount", configs.CONFIGS, "c", False, None, configs.SMALL),
              ("icount_lpbk", configs.IPOIB, "l", True, None, configs.SMALL),
              ("icount_b1", configs.CONFIGS, "o", False, 1,
               configs.SMALL[:1]))
    if why is not None:
        for key, cfgs, _, _, _, _ in passes:
            for cfg in cfgs:
                run.res[key][cfg] = {"unavailable": why}
        return
    notes = run.res.setdefault("icount_notes", [])
    for key, cfgs, tag, loopback, burst, sizes in passes:
        what = "loopback " if loopback else \
            "bursts of %d: " % burst if burst else ""
        for cfg in cfgs:
            r = run.attempt("%s %sinstruction counts" % (cfg, what),
                            icount.run, run.args.build, run.plugin, env,
                            run.eal, cfg, configs.unique(cfg, tag, 0),
                            sizes, run.args.icount_packets, 8,
                            notes, loopback, burst)
            run.res[key][cfg] = r or {"unavailable": "callgrind run "
                                      "failed (see Failures)"}
            for size in (r or {}):
                print("  %-16s %6d B: %srx %.0f tx %.0f "
                      "instructions/packet" %
                      (cfg, size, what, r[size]["rx"]["ir"],
                       r[size]["tx"]["ir"]), flush=True)


def profiles(run, TestPmd):
    if shutil.which("perf") is None:
        run.res["profile_unavailable"] = "perf not installed (package " \
            "linux-perf, devtools/setup.sh)"
        return
    for cfg in configs.CONFIGS:
        r = run.attempt("%s perf profile" % cfg, profile.measure, TestPmd,
                        cfg, configs.unique(cfg, "f", 0),
                        max(2, int(run.args.window)))
        if r:
            run.res["profile"][cfg] = r


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return "%s, %d CPUs, %s, Linux %s" % (cpu, os.cpu_count(),
                                         platform.machine(),
                                         platform.release())


def commit():
    def git(*a):
        return subprocess.run(["git", "-C", TOP] + list(a),
                              capture_output=True, text=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    return rev + (" (with uncommitted changes)" if git("status",
                                                       "--porcelain") else "")


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    args = parse_args()
    os.environ["IPOIBCM_BUILD"] = args.build
    from ipoibtest import EAL, ENV, plugin
    from testpmd import TestPmd

    run = Run(args)
    run.plugin, run.eal = plugin(), EAL
    load0, code = load(), commit()
    start = datetime.datetime.now(datetime.timezone.utc)
    for rnd in range(args.rounds):
        print("round %d of %d" % (rnd + 1, args.rounds), flush=True)
        round_rates(run, TestPmd, rnd)
        round_mq(run, TestPmd, rnd)
        round_latency(run, ENV, rnd)
        round_other(run, ENV, rnd)
    print("instruction counts (callgrind)", flush=True)
    icounts(run, ENV)
    if not args.no_perf:
        print("perf profiles at 64 B", flush=True)
        profiles(run, TestPmd)
    configs.cleanup_runtime()
    meta = {"date": "%s to %s UTC" % (start.strftime("%Y-%m-%d %H:%M"),
                                      datetime.datetime.now(
                                          datetime.timezone.utc)
                                      .strftime("%H:%M")),
            "machine": machine(), "commit": code,
            "load": "load average %s at the start, %s at the end" %
            (load0, load()),
            "command": " ".join(["devtools/bench.py"] + sys.argv[1:]),
            "rounds": "%d, interleaved; rate windows of %.1f s; %d round "
            "trips per size and round" % (args.rounds, args.window,
                                          args.pings),
            "smoke": args.smoke,
            "valgrind": "%s, %d packets per size" % (
                icount.version() or "valgrind missing", args.icount_packets)}
    if args.icount_only:
        meta["rounds"] = "none (--icount-only)"
    if args.out and run.res["rates"]:
        png = os.path.splitext(args.out)[0] + ".png"
        why = plot.write(run.res, png, "%s, %s, %s" % (
            meta["date"], meta["commit"], meta["machine"]))
        meta["plot"] = os.path.basename(png) if why is None else \
            "unavailable: " + why
    text = report.render(run.res, meta)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    # figures are printed, never judged here; an instrument that gave
    # none at all is a failure of the tool
    got = any(v for c in run.res["rates"].values() for s in c.values()
              for v in s)
    if args.icount_only:
        got = all("unavailable" not in v
                  for key in ("icount", "icount_lpbk", "icount_b1")
                  for v in run.res[key].values())
    return 0 if got and not (args.smoke and run.res["errors"]) else 1


if __name__ == "__main__":
    sys.exit(main())
