#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Applications receiving multicast over the port, in a receive mode.

The sender is the Linux kernel in namespace A (bridged to the fabric by
testpmd, as in test_kernel.py). Two kinds of receivers:

- real programs on the kernel of namespace B: socat joins IPv4 groups
  (IGMP) and an IPv6 group (MLD); the kernel's reports, snooped on B's
  port, join the groups (RFC 4391 MGIDs, seen in telemetry). A receiver
  gets what A sends to its group; once it exits, the kernel's leave
  report makes the port leave, and what A sends to that group no longer
  reaches the port, while a group still joined does;
- a DPDK application: testpmd in rxonly mode on a port of its own joins a
  group with "mcast_addr add" (rte_eth_dev_set_mc_addr_list) and receives
  it, then "mcast_addr remove" and receives it no more.

"No longer reaches" is seen without waiting: a frame sent after it on the
same path (UD, in order) arrives, and it did not come before.

usage: test_mcast_app.py on|off
"""

import ipaddress
import os
import subprocess
import sys
import tempfile
import time

from ipoibtest import check, done
from netns import KernelHost, netns_left, patience
from telemetry import telemetry
from testpmd import TestPmd

SRQ = sys.argv[1]
FABRIC = "bb_mca_%s_%d" % (SRQ, os.getpid())
G1, G2, G3 = "239.1.2.3", "239.1.2.4", "224.1.2.5"
G6 = "ff05::1234"
PKEY = 0xffff


def mgid(group):
    """RFC 4391 s4: the MGID of an IP group, as the driver must build it."""
    ip = ipaddress.ip_address(group)
    if ip.version == 4:
        low = int(ip) & 0x0fffffff
        raw = bytes([0xff, 0x12, 0x40, 0x1b, PKEY >> 8, PKEY & 0xff] +
                    [0] * 6) + low.to_bytes(4, "big")
    else:
        raw = bytes([0xff, 0x12, 0x60, 0x1b, PKEY >> 8, PKEY & 0xff]) + \
            ip.packed[6:]
    return str(ipaddress.IPv6Address(raw))


def groups(host):
    """The port's groups from its telemetry: {mgid: words}."""
    r = telemetry(host.pmd.prefix, "/ipoibcm/mcast,1", show=0)
    return {g.split()[0]: g.split()[1:]
            for g in r["/ipoibcm/mcast"].get("groups", [])}


def wait_group(host, group, joined, timeout=patience(30)):
    """Poll telemetry until the group is joined (or gone)."""
    m = mgid(group)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        g = groups(host)
        if (m in g and "joined" in g[m]) == joined:
            print("  %s: %s %s %s" % (host.tag, group, m,
                                      g.get(m, ["left"])), flush=True)
            return True
    print("  %s groups: %s" % (host.tag, groups(host)))
    return False


def wait_file(path, text, timeout=patience(30)):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, "rb") as f:
            if text.encode() in f.read():
                return True
    return False


def send(host, group, port, text):
    """A sends one datagram to a group (socat, kernel stack)."""
    ip = ipaddress.ip_address(group)
    if ip.version == 4:
        addr = "UDP4-DATAGRAM:%s:%d,ip-multicast-if=%s" % (group, port,
                                                          host.ipv4)
    else:
        addr = "UDP6-DATAGRAM:[%s]:%d" % (group, port)	# route: dtap0
    p = subprocess.run(host.ns.cmd(["socat", "-u", "-", addr]),
                       input=text.encode(), capture_output=True, timeout=30)
    check(p.returncode == 0, "A sent %r to %s" % (text, group))


def receiver(host, group, port, path):
    ip = ipaddress.ip_address(group)
    if ip.version == 4:
        addr = "UDP4-RECV:%d,ip-add-membership=%s:%s,reuseaddr" % (
            port, group, host.ipv4)
    else:
        addr = "UDP6-RECV:%d,ipv6-join-group=[%s]:dtap0,reuseaddr" % (
            port, group)
    return host.ns.popen(["socat", "-u", addr, "OPEN:%s,append" % path])


def kernel_receivers(a, b, tmp):
    """socat on B's kernel: IGMP/MLD joins, receive, leave."""
    out = {g: os.path.join(tmp, g.replace(":", "_")) for g in (G1, G2, G6)}
    for f in out.values():
        open(f, "w").close()
    r1 = receiver(b, G1, 6001, out[G1])
    r2 = receiver(b, G2, 6002, out[G2])
    r6 = receiver(b, G6, 6006, out[G6])
    try:
        check(wait_group(b, G1, True), "IGMP report joined %s" % G1)
        check(wait_group(b, G2, True), "IGMP report joined %s" % G2)
        check(wait_group(b, G6, True), "MLD report joined %s" % G6)
        send(a, G1, 6001, "to-g1")
        send(a, G6, 6006, "to-g6")
        check(wait_file(out[G1], "to-g1"), "B's receiver of %s got it" % G1)
        check(wait_file(out[G6], "to-g6"), "B's receiver of %s got it" % G6)
        before = b.xstats()
        r1.kill()		# the kernel leaves G1: an IGMP leave report
        r1.wait()
        check(wait_group(b, G1, False), "B's port left %s" % G1)
        left = b.xstats()
        check(left["mcast_leaves"] > before["mcast_leaves"],
              "the leave is counted (%d)" % left["mcast_leaves"])
        send(a, G1, 6001, "after-leave")
        send(a, G2, 6002, "marker")
        check(wait_file(out[G2], "marker"), "B's receiver of %s got the "
              "marker" % G2)
        after = b.xstats()
        check(after["rx_mcast_ipv4_packets"] ==
              left["rx_mcast_ipv4_packets"] + 1,
              "B's port got the marker and not the frame to %s (%d -> %d)"
              % (G1, left["rx_mcast_ipv4_packets"],
                 after["rx_mcast_ipv4_packets"]))
    finally:
        for r in (r1, r2, r6):
            r.kill()
            r.wait()


def wait_xstat_grows(r, name, base, timeout=patience(30)):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        x = r.xstats()
        if x[name] > base[name]:
            return x
    return r.xstats()


def dpdk_receiver(a):
    """testpmd on a port of its own: mcast_addr add, then remove.

    Its list also names an IPv6 group, the marker: frames from A to it
    follow the same path as A's frames to G3.
    """
    mac, marker_mac = "01:00:5E:01:02:05", "33:33:00:00:56:78"
    r = TestPmd("mca_r" + SRQ, ["net_ipoibcm0,fabric=%s,guid=0x0002c90300"
                                "00d1d1,srq=%s" % (FABRIC, SRQ)],
                main_lcore=1, start_timeout=patience(60))
    try:
        r.cmd("set fwd rxonly")
        r.cmd("start")
        for m in (mac, marker_mac):
            out = r.cmd("mcast_addr add 0 %s" % m)
            check("rror" not in out and "ailed" not in out,
                  "mcast_addr add %s (set_mc_addr_list) accepted" % m)
        x0 = r.xstats()
        send(a, G3, 6003, "to-g3")
        x1 = wait_xstat_grows(r, "rx_mcast_ipv4_packets", x0)
        check(x1["rx_mcast_ipv4_packets"] == x0["rx_mcast_ipv4_packets"] + 1,
              "the DPDK application received %s (default resolution of "
              "%s)" % (G3, mac))
        r.cmd("mcast_addr remove 0 %s" % mac)
        x2 = r.xstats()
        check(x2["mcast_leaves"] == x1["mcast_leaves"] + 1, "left %s" % G3)
        send(a, G3, 6003, "after-remove")
        send(a, "ff05::5678", 6008, "marker")
        x3 = wait_xstat_grows(r, "rx_mcast_ipv6_packets", x2)
        check(x3["rx_mcast_ipv6_packets"] == x2["rx_mcast_ipv6_packets"] + 1,
              "R received the marker")
        check(x3["rx_mcast_ipv4_packets"] == x2["rx_mcast_ipv4_packets"],
              "R no longer received %s" % G3)
        r.cmd("stop")
    finally:
        check(r.quit() == 0, "the receiving testpmd exits cleanly")


def main():
    hosts = []
    tmp = tempfile.mkdtemp(prefix="ipoibcm-mca-")
    try:
        hosts.append(KernelHost("ma" + SRQ, FABRIC, "0x0002c9030000a2a2",
                                SRQ, "10.77.0.1", "fd77::1", main_lcore=0))
        hosts.append(KernelHost("mb" + SRQ, FABRIC, "0x0002c9030000b2b2",
                                SRQ, "10.77.0.2", "fd77::2", main_lcore=1))
        a, b = hosts
        for h in hosts:
            h.up()
        check(a.wait_dad() and b.wait_dad(), "IPv6 addresses usable")
        a.ns.run(["ip", "route", "add", "224.0.0.0/4", "dev", "dtap0"])
        a.ns.run(["ip", "-6", "route", "add", "ff05::/16", "dev", "dtap0"])
        kernel_receivers(a, b, tmp)
        dpdk_receiver(a)
    finally:
        for h in hosts:
            check(h.close() == 0, "%s's testpmd exits cleanly" % h.tag)
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    check(not netns_left(), "no namespace left")
    leftover = [f for f in os.listdir("/dev/shm") if FABRIC in f]
    check(not leftover, "no fabric objects left: %s" % leftover)
    done()


main()
