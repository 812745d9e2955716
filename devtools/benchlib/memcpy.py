# SPDX-License-Identifier: BSD-3-Clause
"""The bandwidth baseline: one core copying 64000-byte blocks.

dpdk-test-ipoibcm perf_memcpy prints three patterns; the one compared
with is the hot-source case, the fabric's own (the sender's mbufs come
from the mempool cache; a posted receive buffer is written a whole ring
after it was last used).
"""

import os
import re
import subprocess

BASELINE = "hot source, 64 MB destination ring"
MEMCPY_S = 300		# a hang guard


def measure(build, env, eal_args, prefix):
    """{pattern: Gbit/s}."""
    exe = os.path.join(build, "app/test-ipoibcm/dpdk-test-ipoibcm")
    p = subprocess.run([exe] + list(eal_args) +
                       ["--no-shconf", "--file-prefix=" + prefix, "--",
                        "perf_memcpy"], capture_output=True, text=True,
                       env=env, timeout=MEMCPY_S)
    res = {k: float(v) for k, v in re.findall(
        r"memcpy \d+ B blocks, ([^:]+): ([\d.]+) Gbit/s", p.stdout)}
    if p.returncode != 0 or BASELINE not in res:
        raise RuntimeError("perf_memcpy failed (%d):\n%s" %
                           (p.returncode, (p.stdout + p.stderr)[-2000:]))
    return res
