# SPDX-License-Identifier: BSD-3-Clause
"""Connection setups per second: dpdk-test-ipoibcm perf_connect.

One process, port A and 1 or 16 peer ports on the shm fabric; A connects
to each peer, waits until both ends are up, disconnects, again (the test's
header says exactly what a setup is). It prints, per receive mode and
number of peers at once, the median of five 1-second windows; one run of
it is one round's figure.
"""

import re

from benchlib import testapp

CONNECT_S = 300		# a hang guard
KEYS = [("on", 1), ("on", 16), ("off", 1), ("off", 16)]
TARGET = ("off", 1)	# issue 15: non-SRQ one at a time >= 10,000/s


def name(key):
    return "srq=%s, %d peer%s at once" % (key[0], key[1],
                                          "" if key[1] == 1 else "s")


def measure(build, env, eal_args, prefix):
    """{(srq, peers): median setups/s}."""
    p = testapp.run(build, env, eal_args, prefix, "perf_connect",
                    CONNECT_S)
    res = {(srq, int(n)): float(v) for srq, n, v in re.findall(
        r"srq=(on|off)\s+(\d+) peer\(s\) at once: median (\d+) setups/s",
        p.stdout)}
    if p.returncode != 0 or set(res) != set(KEYS):
        raise testapp.failed("perf_connect", p)
    return res
