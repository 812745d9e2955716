# SPDX-License-Identifier: BSD-3-Clause
"""Connection setups per second: dpdk-test-ipoibcm perf_connect.

One process, port A and 1 or 16 peer ports on the shm fabric; A connects
to each peer, waits until both ends are up, disconnects, again (the test's
header says exactly what a setup is). It prints, per receive mode and
number of peers at once, the median of five 1-second windows; one run of
it is one round's figure.

It runs in two core layouts. "shared": EAL's default, every core an
lcore, so EAL puts the ports' control threads on the main lcore's core,
where the test's own thread polls without pause; they get that core's
time in turns with it. "own core": ``-l 1``, the main lcore on core 1,
and the control threads on core 0, which no lcore polls (as DPDK
deployments place them: lcores on their own cores, the rest for control
threads). A setup is control-thread work, so the layout weighs. "shared,
ctrl_nice=-10" is the shared layout with the ports' devarg ctrl_nice=-10
(passed by IPOIBCM_PERF_CONN_DEVARGS): the control threads weigh more
against the polling thread when the scheduler picks who runs.
"""

import os
import re

from benchlib import testapp

CONNECT_S = 300		# a hang guard
# (name, EAL arguments, devargs added to every port's)
LAYOUTS = [("shared", [], ""), ("own core", ["-l", "1"], ""),
           ("shared, ctrl_nice=-10", [], "ctrl_nice=-10")]
MODES = [("on", 1), ("on", 16), ("off", 1), ("off", 16)]
KEYS = [m + (lay,) for lay, _, _ in LAYOUTS for m in MODES]
# issue 15: non-SRQ one at a time >= 10,000/s
TARGETS = [("off", 1, lay) for lay, _, _ in LAYOUTS]


def name(key):
    return "srq=%s, %d peer%s at once, %s" % (
        key[0], key[1], "" if key[1] == 1 else "s", key[2])


def measure(build, env, eal_args, prefix):
    """{(srq, peers, layout): median setups/s}."""
    res = {}
    for i, (lay, args, devargs) in enumerate(LAYOUTS):
        lenv = dict(os.environ if env is None else env)
        if devargs:
            lenv["IPOIBCM_PERF_CONN_DEVARGS"] = devargs
        p = testapp.run(build, lenv, args + list(eal_args),
                        "%s_%d" % (prefix, i), "perf_connect", CONNECT_S)
        got = {(srq, int(n), lay): float(v) for srq, n, v in re.findall(
            r"srq=(on|off)\s+(\d+) peer\(s\) at once: median (\d+) "
            r"setups/s", p.stdout)}
        if p.returncode != 0 or len(got) != len(MODES):
            raise testapp.failed("perf_connect (%s)" % lay, p)
        res.update(got)
    return res
