#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two stock testpmd processes are two hosts on one shm fabric.

txonly -> rxonly at 64 B, 1500 B and 64000 B (multi-segment) frames, and
mac forwarding both ways (a ping-pong), in the receive mode given on the
command line (srq=on or srq=off): once connected, every frame goes over RC
and sent == received, exactly.

usage: test_testpmd_pair.py on|off
"""

import os
import sys
import time

from ipoibtest import HANG_S, check, done
from testpmd import TestPmd, bounce

SRQ = sys.argv[1]
FABRIC = "bb_pair_%s_%d" % (SRQ, os.getpid())
RUN_S = 1.0		# traffic duration of one measurement
# 64 KiB-class frames are four 16000-byte segments (testpmd's txpkts)
SIZES = [("64", 64), ("1500", 1500), ("16000,16000,16000,16000", 64000)]
PMD_ARGS = ["--max-pkt-len=65534", "--enable-scatter",
            "--tx-offloads=0x8000", "--mbuf-size=16512", "--rxd=1024",
            "--txd=1024"]


def host(name, guid, main_lcore):
    vdev = "net_ipoibcm0,fabric=%s,guid=%s,srq=%s" % (FABRIC, guid, SRQ)
    return TestPmd(name, [vdev], PMD_ARGS, main_lcore=main_lcore,
                   mbufs=16384)


def connect(a, b, b_mac):
    """a sends until its connection to b is up; the warm-up is not counted."""
    a.cmd("set eth-peer 0 %s" % b_mac)
    a.cmd("set fwd txonly")
    a.cmd("set txpkts 64")
    b.cmd("set fwd rxonly")
    b.cmd("start")
    a.cmd("start")
    ok = a.wait_xstat("conns_tx_connected", 1)
    if not ok:
        print("  %s xstats: %s" % (a.name, {k: v for k, v in
                                           a.xstats().items() if v}))
        print("  %s xstats: %s" % (b.name, {k: v for k, v in
                                           b.xstats().items() if v}))
    a.cmd("stop")
    # what A sent is in B's CQ already (the copy is synchronous): drain it
    b.settle_rx()
    b.cmd("stop")
    return ok


def measure(a, b, spec, size):
    out = a.cmd("set txpkts %s" % spec)
    check("Bad" not in out, "testpmd takes txpkts %s" % spec)
    a.cmd("clear port stats 0")
    b.cmd("clear port stats 0")
    a.cmd("clear port xstats 0")
    b.cmd("clear port xstats 0")
    b.cmd("start")
    a.cmd("start")
    time.sleep(RUN_S)	# traffic for a while, not a synchronisation
    a.cmd("stop")
    sent = a.stats()["tx"]
    deadline = time.monotonic() + HANG_S
    got = b.stats()
    while got["rx"] < sent and time.monotonic() < deadline:
        got = b.stats()
    b.cmd("stop")
    got = b.stats()
    xs = b.xstats()
    print("  %5d B: sent %d received %d (RC %d), %.2f Mpps" %
          (size, sent, got["rx"], xs.get("rx_rc_packets", -1),
           sent / RUN_S / 1e6), flush=True)
    check(sent > 0, "%d B: frames were sent" % size)
    check(got["rx"] == sent, "%d B: sent %d == received %d" %
          (size, sent, got["rx"]))
    check(xs.get("rx_rc_packets") == sent,
          "%d B: all of them over RC" % size)
    check(got["rx"] == 0 or got["rx_bytes"] == got["rx"] * size,
          "%d B: frames arrive whole" % size)


def ping_pong(a, b, a_mac, b_mac):
    """mac forwarding on both sides: frames bounce between the hosts."""
    # tx_first 4 sends 4 bursts of 32: more means frames came back
    sa, sb = bounce(a, b, a_mac, RUN_S, HANG_S, min_tx=128)
    print("  ping-pong: A tx %d rx %d, B tx %d rx %d" %
          (sa["tx"], sa["rx"], sb["tx"], sb["rx"]), flush=True)
    check(sa["tx"] > 128, "ping-pong: frames bounced (%d)" % sa["tx"])
    check(sa["tx"] == sb["rx"], "ping-pong: A sent == B received")
    check(sb["tx"] == sa["rx"], "ping-pong: B sent == A received")


def main():
    # forwarding lcores on different cores: 1 for A, 0 for B
    b = host("bbp_b_" + SRQ, "0x0002c90300000b0b", 1)
    a = host("bbp_a_" + SRQ, "0x0002c90300000a0a", 0)
    try:
        a_mac, b_mac = a.mac(), b.mac()
        mode = a.cmd("show rxq info 0 0")
        check(("SRQ" if SRQ == "on" else "non-SRQ") in mode,
              "rx burst mode reported: %s" %
              [l for l in mode.splitlines() if "Burst mode" in l])
        check(connect(a, b, b_mac), "A connected to B over RC")
        for spec, size in SIZES:
            measure(a, b, spec, size)
        check(connect(b, a, a_mac), "B connected to A over RC")
        ping_pong(a, b, a_mac, b_mac)
    finally:
        for t in (a, b):
            rc = t.quit()
            check(rc == 0, "%s exits cleanly (%s)" % (t.name, rc))
    leftover = [f for f in os.listdir("/dev/shm") if FABRIC in f]
    check(not leftover, "no fabric objects left: %s" % leftover)
    done()


main()
