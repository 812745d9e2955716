# SPDX-License-Identifier: BSD-3-Clause
"""One named test of dpdk-test-ipoibcm, run for the figures it prints
(benchlib/memcpy.py, benchlib/setups.py)."""

import os
import subprocess


def run(build, env, eal_args, prefix, test, timeout):
    """The finished process (stdout and stderr as text)."""
    exe = os.path.join(build, "app/test-ipoibcm/dpdk-test-ipoibcm")
    return subprocess.run([exe] + list(eal_args) +
                          ["--no-shconf", "--file-prefix=" + prefix, "--",
                           test], capture_output=True, text=True, env=env,
                          timeout=timeout)


def failed(test, p):
    """The error for a run that failed or printed no usable figure."""
    return RuntimeError("%s failed (%d):\n%s" %
                        (test, p.returncode, (p.stdout + p.stderr)[-2000:]))
