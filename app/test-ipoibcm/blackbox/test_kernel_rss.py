#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Several receive queues with RSS, the Linux kernel as the client.

Two network namespaces as in test_kernel.py, A and B, each a kernel
bridged by stock dpdk-testpmd (net_tap <-> net_ipoibcm, "io"). B's
testpmd runs both its ports with two rx and two tx queues and RSS over
UDP (--rxq=2 --txq=2 --rss-udp); B offers no connected mode
(shm_cm_listen=none), so A's kernel reaches B's over UD, which B's port
spreads over its queues by flow (addresses and UDP ports: ipoib_rss.c).

The flows: UDP echoes from 8 fixed source ports of A's kernel to B's, over
IPv4 and over IPv6 (ARP and Neighbor Discovery through the fabric first).
testpmd reads B's hash functions and key back (show port rss-hash key).
Every datagram must come back, and both of B's ipoibcm receive queues
must have received some of them (rx_q0_packets, rx_q1_packets, counted
around the flows). The flows and addresses are fixed, so is their hash:
the test says whether this port spreads what the kernel sends, not how
evenly. Traffic stays between the namespaces made here.
"""

import os
import subprocess
import sys

from ipoibtest import check, done
from netns import KernelHost, finish, patience, ping, wait_listen

FABRIC = "bb_krss_%d" % os.getpid()
HERE = os.path.dirname(os.path.abspath(__file__))
ECHO = os.path.join(HERE, "udp_echo.py")
SPORTS = range(40001, 40009)	# the flows' source ports
ECHOES = 10			# per flow
NQ = 2
# the driver's default key (Microsoft's RSS verification suite's)
MS_KEY = "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c" \
    "6a42b73bbeac01fa"


def queues(host):
    x = host.xstats()
    return [x.get("rx_q%d_packets" % q, 0) for q in range(NQ)]


def flows(a, b, addr, port):
    """ECHOES datagrams from each source port of SPORTS, each echoed."""
    srv = b.ns.popen([sys.executable, ECHO, "server", addr, str(port)],
                     stdout=subprocess.PIPE)
    try:
        check(wait_listen(b, port, "u"), "B's UDP echo listens on %d" %
              port)
        before = queues(b)
        for sport in SPORTS:
            p = a.ns.run([sys.executable, ECHO, "client", addr, str(port),
                          str(ECHOES), "200", str(patience(10)),
                          str(sport)], check=False, timeout=patience(300))
            check(p.returncode == 0, "UDP %d -> %s: every datagram "
                  "echoed (%s)" % (sport, addr, p.stdout.strip()))
        after = queues(b)
    finally:
        srv.kill()
        srv.wait()
    got = [after[q] - before[q] for q in range(NQ)]
    print("  %s: B's ipoibcm rx queues received %s" % (addr, got),
          flush=True)
    check(all(n > 0 for n in got),
          "the flows to %s spread over B's %d queues: %s" % (addr, NQ, got))


def main():
    hosts = []
    try:
        hosts.append(KernelHost("ra", FABRIC, "0x0002c9030000a2a2", "on",
                                "10.78.0.1", "fd78::1", main_lcore=0))
        hosts.append(KernelHost("rb", FABRIC, "0x0002c9030000b2b2", "on",
                                "10.78.0.2", "fd78::2", main_lcore=1,
                                pmd_args=["--rxq=%d" % NQ,
                                          "--txq=%d" % NQ, "--rss-udp"],
                                devargs=",shm_cm_listen=none"))
        a, b = hosts
        out = b.pmd.cmd("show port 1 rss-hash key")
        check("udp" in out.lower() and MS_KEY in out.lower().replace(
            " ", "").replace("\n", ""),
              "testpmd reads B's hash functions and key back: %s" %
              out.strip())
        for h in hosts:
            h.up()
        check(a.wait_dad() and b.wait_dad(), "IPv6 addresses usable")
        check(ping(a, b.ipv4), "IPv4 ping")
        check(ping(a, b.ipv6), "IPv6 ping")
        flows(a, b, b.ipv4, 7101)
        flows(a, b, b.ipv6, 7102)
        xb = b.xstats()
        check(xb.get("conns_rx", 0) == 0,
              "all of it over UD: B accepted no connection")
        print("  rb port xstats: %s" % {
            k: v for k, v in xb.items() if v and (
                k.startswith("rx_q") or k.endswith("_packets") or
                "drop" in k)}, flush=True)
    finally:
        finish(hosts, FABRIC, check)
    done()


main()
