#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Linux kernel's IP stack as a client of the port, in a receive mode.

Two network namespaces made here, A and B: in each, stock dpdk-testpmd
bridges a net_tap port (the namespace's interface) and a net_ipoibcm
port; both ipoibcm ports are on one fabric. A's testpmd forwards with
"io", B's with "csum" (checksums checked and set in software). Over it:

- IPv4 ping; ping with 3000 bytes, which the kernel fragments;
- IPv6 ping: Neighbor Discovery through the fabric (B's port joined its
  solicited-node group from the kernel's own DAD/MLD; A's NS reaches it);
- TCP, IPv4 and IPv6: a known number of random bytes, checked whole at
  the far end (count and SHA-256);
- UDP: datagrams echoed one at a time (each must come back), and iperf3
  at a fixed rate, whose loss is printed, not asserted;
- testpmd "icmpecho" on a third port answers the kernel's ARP and ping;
- the peer emulator (dpdk-ipoibcm-peers) answers the kernel's ARP, and
  its NS sent to an emulated host's solicited-node group: IPv4 and IPv6
  ping an emulated host.

Traffic stays between the namespaces made here; no other address is a
target. Every namespace is removed on every exit path.

usage: test_kernel.py on|off
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

from ipoibtest import BUILD, ENV, check, done
from netns import SANITIZED, KernelHost, finish, patience, ping, \
    wait_listen
from testpmd import TestPmd

SRQ = sys.argv[1]
FABRIC = "bb_kern_%s_%d" % (SRQ, os.getpid())
TCP_BYTES = (1 if SANITIZED else 4) << 20
UDP_ECHOES = 50 if SANITIZED else 200
HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(BUILD, "app/ipoibcm-peers/dpdk-ipoibcm-peers")


def tcp_transfer(a, b, family, port):
    """A sends TCP_BYTES to B over TCP; B's copy must be the same."""
    data = os.urandom(TCP_BYTES)
    with tempfile.NamedTemporaryFile(prefix="ipoibcm-tcp-") as f, \
            tempfile.NamedTemporaryFile(prefix="ipoibcm-tcp-rx-") as r:
        f.write(data)
        f.flush()
        if family == 4:
            listen = "TCP4-LISTEN:%d,bind=%s,reuseaddr" % (port, b.ipv4)
            connect = "TCP4:%s:%d" % (b.ipv4, port)
        else:
            listen = "TCP6-LISTEN:%d,bind=[%s],reuseaddr" % (port, b.ipv6)
            connect = "TCP6:[%s]:%d" % (b.ipv6, port)
        rx = b.ns.popen(["socat", "-u", listen, "OPEN:" + r.name])
        check(wait_listen(b, port), "IPv%d: B listens on TCP %d" %
              (family, port))
        tx = a.ns.run(["socat", "-u", "FILE:" + f.name, connect],
                      check=False, timeout=patience(300))
        rx.wait(timeout=patience(60))
        got = open(r.name, "rb").read()
    print("  IPv%d TCP: sent %d bytes, B received %d" %
          (family, len(data), len(got)), flush=True)
    check(tx.returncode == 0, "IPv%d TCP: the sender finished" % family)
    check(len(got) == len(data), "IPv%d TCP: %d bytes arrived" %
          (family, len(got)))
    check(hashlib.sha256(got).hexdigest() ==
          hashlib.sha256(data).hexdigest(),
          "IPv%d TCP: the bytes are the ones sent" % family)


def udp_echo(a, b, addr, port):
    echo = os.path.join(HERE, "udp_echo.py")
    srv = b.ns.popen([sys.executable, echo, "server", addr, str(port)],
                     stdout=subprocess.PIPE)
    try:
        check(wait_listen(b, port, "u"), "B's UDP echo listens")
        p = a.ns.run([sys.executable, echo, "client", addr, str(port),
                      str(UDP_ECHOES), "1000", str(patience(10))],
                     check=False, timeout=patience(600))
        check(p.returncode == 0, "UDP to %s: every datagram echoed" % addr)
    finally:
        srv.kill()
        srv.wait()


IPERF_TRIES = 3


def iperf_report(p):
    """The client's UDP totals, or None when it did not report them."""
    if p is None or p.returncode != 0:
        return None
    try:
        return json.loads(p.stdout)["end"]["sum"]
    except (ValueError, KeyError, TypeError):
        return None


def udp_loss(a, b):
    """iperf3 at 50 Mbit/s for 2 s: the loss is printed, not judged.

    iperf3 sets up its UDP stream with one 4-byte datagram each way and
    no retry: if either is lost (UDP may be lost on this path; that is
    what the figure measures) client and server wait for ever
    (esnet/iperf issue 351, the retry of pull request 1144 unmerged; one
    ASan run in CI hung so). A client that then gives up leaves its
    server waiting for a test that never starts (another CI run). An
    attempt whose client hangs or reports no totals, or whose server
    does not end, is ended by its guard and run again, up to
    IPERF_TRIES times, each said.
    """
    s = None
    for attempt in range(1, IPERF_TRIES + 1):
        srv = b.ns.popen(["iperf3", "-s", "-1", "-B", b.ipv4, "-p", "5201",
                          "-J"], stdout=subprocess.PIPE)
        p = None
        try:
            check(wait_listen(b, 5201), "iperf3 listens")
            try:
                p = a.ns.run(["iperf3", "-c", b.ipv4, "-p", "5201", "-u",
                              "-b", "50M", "-t", "2", "-l", "1200", "-J"],
                             check=False, timeout=60, quiet=True)
                srv.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                print("  iperf3 attempt %d of %d: %s did not end (its UDP "
                      "set-up datagram or the reply lost): ended" %
                      (attempt, IPERF_TRIES,
                       "the client" if p is None else "the server"),
                      flush=True)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        s = iperf_report(p)
        if s is not None:
            break
        if p is not None:
            print("  iperf3 attempt %d of %d: the client exited %d without "
                  "totals: %s" % (attempt, IPERF_TRIES, p.returncode,
                                  (p.stdout or "")[-600:]), flush=True)
    if not check(s is not None, "iperf3 UDP reported within %d attempts" %
                 IPERF_TRIES):
        return
    print("  UDP loss (iperf3 -u -b 50M -t 2 -l 1200): %d of %d datagrams "
          "lost (%.2f %%)" % (s["lost_packets"], s["packets"],
                              s["lost_percent"]), flush=True)
    check(s["packets"] > 0 and 0 <= s["lost_packets"] <= s["packets"],
          "iperf3 counted its datagrams")


def icmpecho(a):
    """testpmd icmpecho on a third port answers the kernel's ARP and ping."""
    c = TestPmd("kc_" + SRQ, ["net_ipoibcm0,fabric=%s,guid=0x0002c9030000c1c1"
                              ",srq=%s" % (FABRIC, SRQ)], main_lcore=1,
                start_timeout=patience(60))
    try:
        c.cmd("set fwd icmpecho")
        c.cmd("start")
        if not check(ping(a, "10.77.0.3"),
                     "testpmd icmpecho answers ARP and ping"):
            for n, x in (("a", a.xstats()), ("icmpecho", c.xstats())):
                print("  %s port xstats: %s" % (
                    n, {k: v for k, v in x.items() if v}), flush=True)
        c.cmd("stop")
    finally:
        check(c.quit() == 0, "the icmpecho testpmd exits cleanly")


def emulator(a):
    """Emulated hosts answer the kernel: ARP, and NS to their groups."""
    with tempfile.NamedTemporaryFile(prefix="ipoibcm-peers-",
                                     suffix=".json") as js:
        cmd = [PEERS, "--fabric", FABRIC, "--hosts", "4", "--ipv4",
               "10.77.0.100", "--ipv6-prefix", "fd77::/64", "--json", js.name]
        print("  $ " + " ".join(cmd), flush=True)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=ENV)
        try:
            for line in p.stdout:	# until every host is up
                if line.startswith("ready:"):
                    print("  peers " + line.strip(), flush=True)
                    break
            check(ping(a, "10.77.0.100"), "IPv4 ping of an emulated host")
            # host 0 is fd77:: + 10.77.0.100
            check(ping(a, "fd77::a4d:64"), "IPv6 ping of an emulated host "
                  "(its solicited-node group)")
        finally:
            p.terminate()
            p.communicate(timeout=60)
        data = json.load(open(js.name))
    h0 = data["hosts"][0]
    print("  emulated host 0: %s" % h0, flush=True)
    check(h0.get("nd_answered", 0) >= 1 and
          h0.get("echo_replies", 0) >= 10,
          "the emulated host answered NS and echo requests")


def main():
    hosts = []
    try:
        hosts.append(KernelHost("a" + SRQ, FABRIC, "0x0002c9030000a1a1", SRQ,
                                "10.77.0.1", "fd77::1", main_lcore=0))
        hosts.append(KernelHost("b" + SRQ, FABRIC, "0x0002c9030000b1b1", SRQ,
                                "10.77.0.2", "fd77::2", main_lcore=1,
                                fwd="csum"))
        a, b = hosts
        for h in hosts:
            h.up()
        check(a.wait_dad() and b.wait_dad(), "IPv6 addresses usable")
        check(ping(a, b.ipv4), "IPv4 ping")
        check(ping(a, b.ipv4, "-s", "3000", "-M", "dont"),
              "IPv4 ping of 3000 bytes (fragmented by the kernel)")
        check(ping(a, b.ipv6), "IPv6 ping (ND through the fabric)")
        xb = b.xstats()
        check(xb.get("rx_mcast_solicited_packets", 0) >= 1,
              "B received A's NS on its solicited-node group (%d)" %
              xb.get("rx_mcast_solicited_packets", 0))
        check(xb.get("mcast_groups", 0) >= 3,
              "B joined its solicited-node group(s): %d groups" %
              xb.get("mcast_groups", 0))
        tcp_transfer(a, b, 4, 5001)
        tcp_transfer(a, b, 6, 5002)
        udp_echo(a, b, b.ipv4, 7001)
        udp_echo(a, b, b.ipv6, 7002)
        udp_loss(a, b)
        icmpecho(a)
        emulator(a)
        for h in hosts:
            print("  %s port xstats: %s" % (h.tag, {
                k: v for k, v in h.xstats().items() if v and (
                    k.startswith("rx_mcast") or k.startswith("mcast") or
                    k.endswith("_packets") or "drop" in k)}), flush=True)
    finally:
        finish(hosts, FABRIC, check)
    done()


main()
