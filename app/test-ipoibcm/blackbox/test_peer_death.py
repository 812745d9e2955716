#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A testpmd process killed mid-stream, as seen by the other one.

A sends to B over RC; B is killed with SIGKILL. A must notice (the
fabric's janitor, then the control thread; how long it took is printed),
tear the connection down, keep running (its frames to the dead peer go
on UD and are lost on the wire, like any frame to a dead host), and
connect again when B comes back, with sent == received afterwards. B's
shared memory is reclaimed. Both receive modes.

usage: test_peer_death.py on|off
"""

import os
import sys
import time

from ipoibtest import check, done
from testpmd import TestPmd, wait_stat

SRQ = sys.argv[1]
FABRIC = "bb_death_%s_%d" % (SRQ, os.getpid())
GUID_B = "0x0002c90300000d0b"


def host(name, guid, main_lcore):
    vdev = "net_ipoibcm0,fabric=%s,guid=%s,srq=%s" % (FABRIC, guid, SRQ)
    return TestPmd(name, [vdev], ["--rxd=512", "--txd=512"],
                   main_lcore=main_lcore)


def shm_objects():
    return sorted(f for f in os.listdir("/dev/shm") if FABRIC in f)


def main():
    b = host("bbd_b_" + SRQ, GUID_B, 1)
    a = host("bbd_a_" + SRQ, "0x0002c90300000d0a", 0)
    try:
        before = shm_objects()
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        a.cmd("set txpkts 512")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        a.cmd("start")
        check(a.wait_xstat("conns_tx_connected", 1), "A connected to B")
        b.kill()
        t0 = time.monotonic()
        gone = a.wait_xstat("conns_tx_connected", 0)
        took = time.monotonic() - t0
        print("  connection torn down %.0f ms after the kill (a figure, "
              "not judged)" % (took * 1000), flush=True)
        check(gone, "A noticed the death and tore the connection down")
        tx0 = a.stats()["tx"]
        check(a.wait_xstat("conns_rx", 0), "and its passive side too")
        check(wait_stat(a, "tx", tx0)["tx"] > tx0, "A goes on sending")
        a.cmd("stop")
        # B attached first: it was process 0 of the fabric
        # (segments are ipoibcm.<fabric>.<incarnation>.<proc>.<gen>.<seg>)
        b_objs = [f for f in before if f.startswith("ipoibcm.%s." % FABRIC)
                  and f.split(".")[3:4] == ["0"]]
        left = [f for f in shm_objects() if f in b_objs]
        check(b_objs and not left, "B's %d segments reclaimed (left: %s)" %
              (len(b_objs), left))

        # B returns: a new UD QPN, so a new address (as after an ARP)
        b = host("bbd_b2_" + SRQ, GUID_B, 1)
        a.cmd("set eth-peer 0 %s" % b.mac())
        b.cmd("set fwd rxonly")
        b.cmd("start")
        a.cmd("start")
        check(a.wait_xstat("conns_tx_connected", 1), "A connected again")
        a.cmd("stop")
        b.settle_rx()
        a.cmd("clear port stats 0")
        b.cmd("clear port stats 0")
        a.cmd("start")
        time.sleep(0.5)	# traffic for a while, not a synchronisation
        a.cmd("stop")
        sent = a.stats()["tx"]
        got = b.settle_rx()
        check(sent > 0 and got["rx"] == sent,
              "after the return: sent %d == received %d" %
              (sent, got["rx"]))
        b.cmd("stop")
    finally:
        for t in (a, b):
            if t.p.poll() is None:
                check(t.quit() == 0, "%s exits cleanly" % t.name)
    check(not shm_objects(), "no fabric objects left: %s" % shm_objects())
    done()


main()
