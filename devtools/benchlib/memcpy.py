# SPDX-License-Identifier: BSD-3-Clause
"""The bandwidth baseline: one core copying 64000-byte blocks.

dpdk-test-ipoibcm perf_memcpy prints three patterns; the one compared
with is the hot-source case, the fabric's own (the sender's mbufs come
from the mempool cache; a posted receive buffer is written a whole ring
after it was last used).
"""

import re

from benchlib import testapp

BASELINE = "hot source, 64 MB destination ring"
MEMCPY_S = 300		# a hang guard


def measure(build, env, eal_args, prefix):
    """{pattern: Gbit/s}."""
    p = testapp.run(build, env, eal_args, prefix, "perf_memcpy", MEMCPY_S)
    res = {k: float(v) for k, v in re.findall(
        r"memcpy \d+ B blocks, ([^:]+): ([\d.]+) Gbit/s", p.stdout)}
    if p.returncode != 0 or BASELINE not in res:
        raise testapp.failed("perf_memcpy", p)
    return res
