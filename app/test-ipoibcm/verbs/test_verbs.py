#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""transport=verbs end to end on a real verbs device (soft-RoCE in CI).

Stock testpmd processes open the same RDMA port (rxe0 in the guest of
devtools/soft-roce-vm.sh): each has its own UD QPN, hence its own IPoIB
address, and they are hosts to each other through the device. Peers find
each other's address in the verbs transport's subnet directory
(/run/ipoibcm-verbs), as testpmd never ARPs.

  pair on|off   A -> B at 64, 1500 and 8000 (4 segments) bytes, then both
                ways (mac forwarding): sent == received, all over RC; then
                broadcast frames (the multicast group, over UD) arrive
  spill         B accepts max_conns=1: a second sender is refused (REJ
                reason 1), spills to UD and is served there
  death         B is killed while A sends to it over RC: A tears the
                connection down (DREQ from B's kernel), goes on sending

Every run prints the port's counters (non-zero xstats) of each process.
Environment: RXE_DEV, RXE_GID_INDEX (set by soft-roce-vm.sh), IPOIBCM_BUILD.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "blackbox"))
from ipoibtest import check, done  # noqa: E402
from testpmd import TestPmd, bounce, wait_stat  # noqa: E402

DEV = os.environ.get("RXE_DEV", "")
GID_INDEX = os.environ.get("RXE_GID_INDEX", "")
RUN_S = 1.0		# traffic duration of one measurement
SETTLE_S = 60		# frames in flight drain within this (TCG is slow)
CONNECT_S = 60
SIZES = [("64", 64), ("1500", 1500), ("2000,2000,2000,2000", 8000)]
# testpmd locks all its memory by default (1 GiB each with -m 1024): three
# of them would not fit in the guest; registration pins what the HCA uses.
PAIR_ARGS = ["--no-mlockall", "--max-pkt-len=9018", "--enable-scatter",
             "--tx-offloads=0x8000", "--rxd=512", "--txd=512"]
SMALL_ARGS = ["--no-mlockall", "--rxd=256", "--txd=256"]


T0 = time.monotonic()


def log(msg):
    print("  %6.1fs %s" % (time.monotonic() - T0, msg), flush=True)


def vdev(srq="on", extra=""):
    return "net_ipoibcm0,transport=verbs,dev=%s,gid_index=%s,srq=%s%s" % (
        DEV, GID_INDEX, srq, extra)


def start_hosts(specs):
    """Start testpmd processes in parallel: (name, vdev, args, main_lcore)."""
    hosts = [None] * len(specs)
    errors = []

    def run(i, spec):
        try:
            name, v, args, lcore = spec
            hosts[i] = TestPmd(name, [v], args, main_lcore=lcore, mbufs=8192)
        except Exception as e:  # reported below, with the output
            errors.append("%s: %s" % (spec[0], e))

    threads = [threading.Thread(target=run, args=(i, s))
               for i, s in enumerate(specs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for h in hosts:
            if h is not None:
                h.kill()
        raise RuntimeError("; ".join(errors))
    return hosts


def counters(t, what):
    """Print the non-zero counters of host t: the CI log shows them."""
    xs = t.xstats()
    line = " ".join("%s=%d" % (k, v) for k, v in sorted(xs.items()) if v)
    print("  [%s] counters %s: %s" % (t.name, what, line), flush=True)
    return xs


def show_device(t):
    """The port runs on the verbs transport on the device: say so."""
    out = t.cmd("show rxq info 0 0")
    mode = [l.strip() for l in out.splitlines() if "Burst mode" in l]
    print("  [%s] %s" % (t.name, mode), flush=True)
    check(any(("verbs:%s/" % DEV) in l for l in mode),
          "%s: port 0 runs on verbs:%s" % (t.name, DEV))
    return mode


def wait_rx(t, want, timeout=SETTLE_S):
    deadline = time.monotonic() + timeout
    s = t.stats()
    while s["rx"] < want and time.monotonic() < deadline:
        time.sleep(0.2)
        s = t.stats()
    return s


def settle(t, want, timeout=SETTLE_S):
    """Wait until t received want frames, or its count stopped moving
    for a second (frames sent over UD while connecting may be lost)."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    s = t.stats()
    while s["rx"] < want and time.monotonic() < deadline:
        if s["rx"] != last:
            last, since = s["rx"], time.monotonic()
        elif time.monotonic() - since > 1.0:
            break
        time.sleep(0.2)
        s = t.stats()
    return s


def connect(a, b, b_mac):
    """a sends until its RC connection to b is up; the warm-up is not
    counted."""
    a.cmd("set eth-peer 0 %s" % b_mac)
    a.cmd("set fwd txonly")
    a.cmd("set txpkts 64")
    b.cmd("set fwd rxonly")
    b.cmd("start")
    a.cmd("start")
    ok = a.wait_xstat("conns_tx_connected", 1, timeout=CONNECT_S)
    a.cmd("stop")
    settle(b, a.stats()["tx"])
    b.cmd("stop")
    if not ok:
        counters(a, "connect failed")
        counters(b, "connect failed")
    return ok


def measure(a, b, spec, size):
    out = a.cmd("set txpkts %s" % spec)
    check("Bad" not in out and "error" not in out.lower(),
          "testpmd takes txpkts %s" % spec)
    for t in (a, b):
        t.cmd("clear port stats 0")
        t.cmd("clear port xstats 0")
    b.cmd("start")
    a.cmd("start")
    time.sleep(RUN_S)	# traffic for a while, not a synchronisation
    a.cmd("stop")
    sent = a.stats()["tx"]
    got = wait_rx(b, sent)
    b.cmd("stop")
    got = b.stats()
    xa = counters(a, "%d B sender" % size)
    xb = counters(b, "%d B receiver" % size)
    print("  %5d B: sent %d received %d (RC %d, UD %d)" %
          (size, sent, got["rx"], xb.get("rx_rc_packets", 0),
           xb.get("rx_ud_packets", 0)), flush=True)
    check(sent > 0, "%d B: frames were sent" % size)
    check(got["rx"] == sent, "%d B: sent %d == received %d" %
          (size, sent, got["rx"]))
    check(xb.get("rx_rc_packets") == sent and
          xa.get("tx_rc_packets") == sent,
          "%d B: all of them over RC" % size)
    check(got["rx"] == 0 or got["rx_bytes"] == got["rx"] * size,
          "%d B: frames arrive whole" % size)


def ping_pong(a, b, a_mac):
    """mac forwarding on both sides: frames bounce between the hosts."""
    sa, sb = bounce(a, b, a_mac, RUN_S, SETTLE_S, min_tx=4)
    counters(a, "ping-pong")
    counters(b, "ping-pong")
    print("  ping-pong: A tx %d rx %d, B tx %d rx %d" %
          (sa["tx"], sa["rx"], sb["tx"], sb["rx"]), flush=True)
    check(sa["tx"] > 4, "ping-pong: frames bounced (%d)" % sa["tx"])
    check(sa["tx"] == sb["rx"], "ping-pong: A sent == B received")
    check(sb["tx"] == sa["rx"], "ping-pong: B sent == A received")


def dead_logs(hosts):
    """The output of hosts that exited on their own."""
    for t in hosts:
        if t is not None and t.p.poll() is not None:
            try:
                while True:
                    data = t._read(0.2)
                    if not data:
                        break
                    t.log.append(data)
            except (OSError, ValueError):
                pass	# killed by the test: its terminal is closed
            print("  [%s] exited (%s); its output:\n%s" %
                  (t.name, t.p.poll(), "".join(t.log)[-4000:]), flush=True)


def broadcast(a, b):
    """Broadcast: the IPoIB broadcast group, on RoCE an IPv4 group joined
    with rdma_cm; it goes over UD, where frames may be lost."""
    for t in (a, b):
        t.cmd("clear port stats 0")
        t.cmd("clear port xstats 0")
    a.cmd("set eth-peer 0 ff:ff:ff:ff:ff:ff")
    a.cmd("set fwd txonly")
    a.cmd("set txpkts 64")
    b.cmd("set fwd rxonly")
    b.cmd("start")
    a.cmd("start")
    time.sleep(RUN_S / 2)
    a.cmd("stop")
    sent = a.stats()["tx"]
    got = settle(b, sent)
    b.cmd("stop")
    xa = counters(a, "broadcast sender")
    xb = counters(b, "broadcast receiver")
    print("  broadcast: sent %d (multicast %d), received %d (UD %d)" %
          (sent, xa.get("tx_mcast_packets", 0), got["rx"],
           xb.get("rx_ud_packets", 0)), flush=True)
    check(sent > 0 and xa.get("tx_mcast_packets") == sent,
          "broadcast frames sent to the broadcast group")
    check(got["rx"] > 0 and xb.get("rx_ud_packets") == got["rx"],
          "broadcast frames received over UD (%d of %d)" %
          (got["rx"], sent))


def quit_all(hosts):
    dead_logs(hosts)
    for t in hosts:
        if t is not None and t.p.poll() is None:
            log("%s: quit" % t.name)
            rc = t.quit()
            check(rc == 0, "%s exits cleanly (%s)" % (t.name, rc))


def test_pair(srq):
    mode = "SRQ" if srq == "on" else "non-SRQ"
    print("== %s pair on %s (gid_index %s)" % (mode, DEV, GID_INDEX),
          flush=True)
    b, a = start_hosts([("vb_" + srq, vdev(srq), PAIR_ARGS, 1),
                        ("va_" + srq, vdev(srq), PAIR_ARGS, 0)])
    try:
        for t in (a, b):
            m = show_device(t)
            check(any(l.startswith("Burst mode: " + mode) for l in m),
                  "%s: %s receive" % (t.name, mode))
        a_mac, b_mac = a.mac(), b.mac()
        log("started")
        check(connect(a, b, b_mac), "A connected to B over RC")
        for spec, size in SIZES:
            log("measure %d B" % size)
            measure(a, b, spec, size)
        log("B connects to A")
        check(connect(b, a, a_mac), "B connected to A over RC")
        log("ping-pong")
        ping_pong(a, b, a_mac)
        log("broadcast")
        broadcast(a, b)
    finally:
        quit_all([a, b])


def test_spill():
    """B takes one connection; the second sender spills to UD."""
    print("== max_conns=1: spilling to UD on %s" % DEV, flush=True)
    b, a1, a2 = start_hosts([
        ("vs_b", vdev("on", ",max_conns=1"), SMALL_ARGS, 1),
        ("vs_a1", vdev("on"), SMALL_ARGS, 0),
        ("vs_a2", vdev("on"), SMALL_ARGS, 0)])
    try:
        b_mac = b.mac()
        check(connect(a1, b, b_mac), "A1 connected to B over RC")
        for t in (a1, a2, b):
            t.cmd("clear port stats 0")
            t.cmd("clear port xstats 0")
        a2.cmd("set eth-peer 0 %s" % b_mac)
        a2.cmd("set fwd txonly")
        a2.cmd("set txpkts 64")
        b.cmd("start")
        a2.cmd("start")
        refused = False
        deadline = time.monotonic() + CONNECT_S
        while time.monotonic() < deadline:
            xs = a2.xstats()
            if xs.get("rej_rcvd_reason_1", 0) > 0 and \
                    xs.get("conn_spills", 0) > 0:
                refused = True
                break
            time.sleep(0.2)
        time.sleep(RUN_S)
        a2.cmd("stop")
        sent = a2.stats()["tx"]
        got = wait_rx(b, sent)
        b.cmd("stop")
        x2 = counters(a2, "spilled sender")
        xb = counters(b, "receiver with max_conns=1")
        counters(a1, "connected sender")
        print("  A2 sent %d (RC %d, UD %d); B received %d (UD %d)" %
              (sent, x2.get("tx_rc_packets", 0), x2.get("tx_ud_packets", 0),
               got["rx"], xb.get("rx_ud_packets", 0)), flush=True)
        check(refused, "A2 refused with REJ reason 1 (no QP) and spilled")
        check(xb.get("rej_sent_reason_1", 0) > 0,
              "B sent REJ reason 1: its table was full")
        check(x2.get("conns_tx_connected", 0) == 0 and
              x2.get("tx_ud_packets", 0) > 0,
              "A2's frames went over UD")
        check(xb.get("conns_rx", 0) == 1, "B keeps A1's connection")
        # UD may lose frames (a receive ring overrun): counted, not failed
        check(sent > 0 and got["rx"] > 0 and
              xb.get("rx_ud_packets") == got["rx"],
              "the spilled peer is served over UD: received %d of %d" %
              (got["rx"], sent))
    finally:
        quit_all([a1, a2, b])


def test_death():
    """B is killed while A sends to it over RC."""
    print("== peer killed on %s" % DEV, flush=True)
    b, a = start_hosts([("vd_b", vdev("on"), SMALL_ARGS, 1),
                        ("vd_a", vdev("on"), SMALL_ARGS, 0)])
    try:
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        a.cmd("set txpkts 512")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        a.cmd("start")
        check(a.wait_xstat("conns_tx_connected", 1, timeout=CONNECT_S),
              "A connected to B")
        counters(a, "before the kill")
        b.kill()
        t0 = time.monotonic()
        gone = a.wait_xstat("conns_tx_connected", 0, timeout=30)
        took = time.monotonic() - t0
        print("  connection torn down %.0f ms after the kill" %
              (took * 1000), flush=True)
        check(gone, "A noticed the death (%.1f s)" % took)
        tx0 = a.stats()["tx"]
        check(wait_stat(a, "tx", tx0, SETTLE_S)["tx"] > tx0,
              "A goes on sending")
        check(a.p.poll() is None, "A's testpmd keeps running")
        a.cmd("stop")
        xs = counters(a, "after the kill")
        check(xs.get("conns_tx_connected", 0) == 0,
              "no connection left to the dead peer")
    finally:
        quit_all([a])


def main():
    if not DEV or not GID_INDEX:
        print("RXE_DEV and RXE_GID_INDEX are not set: run me inside "
              "devtools/soft-roce-vm.sh (devtools/verbs-tests.sh)")
        sys.exit(1)
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    t0 = time.monotonic()
    if what == "pair" and len(sys.argv) > 2:
        test_pair(sys.argv[2])
    elif what == "spill":
        test_spill()
    elif what == "death":
        test_death()
    else:
        sys.exit(__doc__)
    print("  (%s took %.0f s)" % (" ".join(sys.argv[1:]),
                                   time.monotonic() - t0), flush=True)
    done()


main()
