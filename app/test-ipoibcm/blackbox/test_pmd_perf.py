#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stock dpdk-test's pmd_perf_autotest on two net_ipoibcm ports.

pmd_perf_autotest configures every port it finds with lpbk_mode=1,
enables promiscuous mode (it exits if either is refused), injects 2048
frames into each port and, on one lcore, sends back out of each port what
it receives there, until two seconds' worth of the link rate have been
counted; then it drains the ports and prints the cycles per packet.

The measurement loop is cut after 30 s with the test's own SIGUSR1
("Force Stop!"); the test then finishes as it would have.

On net_ipoibcm loopback goes through the fabric to the port's own UD QP:
the test must complete ("Test OK") having lost nothing (0 drop, the 2048
frames of each port drained back). The same run measures two net_memif
ports (a server and a client in one process) for comparison: both
figures are printed, neither is judged.

usage: test_pmd_perf.py on|off   (the ipoibcm ports' srq)
"""

import os
import re
import signal
import subprocess
import sys
import time

from ipoibtest import ENV, check, done, plugin

SRQ = sys.argv[1]
TAG = "bb_pp_%s_%d" % (SRQ, os.getpid())
DPDK_TEST = "/usr/bin/dpdk-test"
# Its measurement lasts as long as 2 s of the link rate takes to forward
# (595 M frames at 100 Gb/s): minutes on a loaded machine, more in
# sanitizer builds. After BOUND_S, SIGUSR1 (its "Force Stop!") ends the
# loop; it then drains and reports over what it counted.
BOUND_S = 30


def pmd_perf(name, vdevs, extra=()):
    cmd = [DPDK_TEST, "-l", "0,1", "--no-huge", "-m", "1024", "--no-pci",
           "--file-prefix=%s_%s" % (TAG, name)] + list(extra)
    cmd += ["--vdev=" + v for v in vdevs]
    print("  $ echo pmd_perf_autotest | " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         env=ENV)
    try:
        out, _ = p.communicate(input="pmd_perf_autotest\n",
                               timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGUSR1)
        out, _ = p.communicate(timeout=300)
    lines = [l for l in out.splitlines() if not l.startswith("EAL:")]
    print("    " + "\n    ".join(lines[-16:]), flush=True)
    print("  (%s: %.0f s)" % (name, time.monotonic() - t0), flush=True)
    return p.returncode, out


def main():
    fabric = TAG
    rc, out = pmd_perf("ipoibcm", [
        "net_ipoibcm0,fabric=%s,srq=%s" % (fabric, SRQ),
        "net_ipoibcm1,fabric=%s,srq=%s" % (fabric, SRQ)],
        ["-d", plugin()])
    check(rc == 0 and "Test OK" in out,
          "pmd_perf_autotest completes on net_ipoibcm (rc %d)" % rc)
    check("err=" not in out, "promiscuous mode and loopback accepted")
    m = re.search(r"(\d+) packet, (\d+) drop", out)
    check(m is not None and int(m.group(1)) > 0 and m.group(2) == "0",
          "frames forwarded, none dropped: %s" % (m.group(0) if m else None))
    freed = re.findall(r"free (\d+) \(expected (\d+)\)", out)
    check(len(freed) == 2 and all(a == b for a, b in freed),
          "every injected frame came back to its port: %s" % freed)
    ours = re.search(r"Result: (\d+) cycles per packet", out)
    sock = "/tmp/%s.memif" % TAG
    rc, out = pmd_perf("memif", [
        "net_memif0,role=server,socket=%s" % sock,
        "net_memif1,role=client,socket=%s" % sock])
    theirs = re.search(r"Result: (\d+) cycles per packet", out)
    print("  pmd_perf_autotest cycles per packet: net_ipoibcm (srq=%s) %s, "
          "net_memif %s" % (SRQ, ours.group(1) if ours else "?",
                            theirs.group(1) if theirs else "?"), flush=True)
    if os.path.exists(sock):
        os.unlink(sock)
    leftover = [f for f in os.listdir("/dev/shm") if fabric in f]
    check(not leftover, "no fabric objects left: %s" % leftover)
    done()


main()
