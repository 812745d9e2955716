# SPDX-License-Identifier: BSD-3-Clause
"""Stock dpdk-test pmd_perf_autotest on two ports of one driver.

The test forwards between the two ports of one process and prints the
cycles per packet of its rx + tx loop. It enables promiscuous mode and
asks for loopback, so a driver without them cannot run it: then the
reason (the test's own "Cause:" line) is returned instead of a figure.
"""

import re
import shutil
import subprocess

from benchlib import configs

AUTOTEST_S = 600	# a hang guard


def measure(plugin, env, eal_args, cfg, name):
    """{"cycles": cycles per packet} or {"unavailable": reason}."""
    exe = shutil.which("dpdk-test")
    if exe is None:
        return {"unavailable": "dpdk-test not installed (package dpdk)"}
    cmd = [exe, "-l", "0,1"] + list(eal_args) + [
        "--file-prefix=" + name, "-d", plugin]
    cmd += ["--vdev=" + v for v in configs.one_process_vdevs(cfg, name)]
    env = dict(env, DPDK_TEST="pmd_perf_autotest")
    try:
        p = subprocess.run(cmd, input="", capture_output=True, text=True,
                           env=env, timeout=AUTOTEST_S)
    finally:
        configs.cleanup(cfg, name)
    out = p.stdout + p.stderr
    m = re.search(r"Result: (\d+) cycles per packet", out)
    if m and "Test OK" in out:
        return {"cycles": int(m.group(1))}
    cause = re.search(r"Cause: (.*)", out)
    return {"unavailable": cause.group(1).strip() if cause else
            "pmd_perf_autotest failed (exit %d): %s" %
            (p.returncode, out.strip().splitlines()[-1:])}
