#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzz harnesses (fuzz/corpus/<harness>/).

Hand-made valid inputs, each in the harness's input format (see the
comment at the top of each fuzz_*.c): ARP, Neighbor Discovery, IPv4 and
IPv6 frames as an application sends them and as IPoIB receives them, long
frames to fragment or answer with ICMP, CM message sequences, devargs
strings and emulator command lines. Deterministic: running it again
rewrites the same files.

usage: fuzz/make-corpus.py [OUTDIR]   (default: fuzz/corpus beside it)
"""

import os
import struct
import sys

M64 = (1 << 64) - 1

OWN_GID = bytes.fromhex("fe800000000000000002c90300a1b2c3")
PEER_GID = bytes.fromhex("fe800000000000000002c90300d4e5f6")


def mix64(x):
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M64
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M64
    x ^= x >> 31
    return x


def hwaddr(flags, qpn, gid):
    return bytes([flags]) + qpn.to_bytes(3, "big") + gid


def hw_mac(hw):
    """ipoib_hwaddr_to_mac() (ipoib_wire.h)."""
    qpn = int.from_bytes(hw[1:4], "big")
    hi = int.from_bytes(hw[4:12], "big")
    lo = int.from_bytes(hw[12:20], "big")
    h = mix64(qpn ^ 0x49506f4942)
    h = mix64(h ^ hi)
    h = mix64(h ^ lo)
    return bytes([((h >> 40) & 0xfc) | 0x02, (h >> 32) & 0xff,
                  (h >> 24) & 0xff, (h >> 16) & 0xff, (h >> 8) & 0xff,
                  h & 0xff])


OWN_HW = hwaddr(0x80, 0x48, OWN_GID)
PEER_HW = hwaddr(0x80, 0xa1, PEER_GID)
OWN_MAC = hw_mac(OWN_HW)
PEER_MAC = hw_mac(PEER_HW)
BCAST = b"\xff" * 6
IP_A = bytes([10, 0, 0, 1])
IP_B = bytes([10, 0, 0, 2])
FE80_A = bytes.fromhex("fe800000000000000000000000000001")
FE80_B = bytes.fromhex("fe800000000000000000000000000002")
ALL_NODES = bytes.fromhex("ff020000000000000000000000000001")
SNM_B = bytes.fromhex("ff0200000000000000000001ff000002")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ipv4(src, dst, proto, payload, df=False, ttl=64, opts=b"", off=0,
         tot=None):
    ihl = (20 + len(opts)) // 4
    tot = tot if tot is not None else 20 + len(opts) + len(payload)
    frag = (0x4000 if df else 0) | off
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, 0x1234, frag, ttl,
                    proto, 0, src, dst) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def udp4(src, dst, n, df=False, opts=b""):
    body = bytes((i * 7) & 0xff for i in range(n))
    u = struct.pack("!HHHH", 4000, 5000, 8 + n, 0) + body
    return ipv4(src, dst, 17, u, df=df, opts=opts)


def ipv6(src, dst, nh, payload, hlim=255):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nh, hlim, src,
                       dst) + payload


def icmp6(src, dst, body):
    """ICMPv6 message with its checksum (RFC 8200 pseudo-header)."""
    pseudo = src + dst + struct.pack("!IxxxB", len(body), 58)
    ck = csum(pseudo + body[:2] + b"\0\0" + body[4:])
    return ipv6(src, dst, 58, body[:2] + struct.pack("!H", ck) + body[4:])


def nd(typ, target, opts):
    target = target or bytes(16)
    fixed = {133: b"\0" * 4, 134: b"\0" * 12, 135: b"\0" * 4 + target,
             136: b"\x60\0\0\0" + target,
             137: b"\0" * 4 + target + FE80_B}[typ]
    return bytes([typ, 0, 0, 0]) + fixed + opts


def opt_eth(typ, mac):
    return bytes([typ, 1]) + mac


def opt_ib(typ, hw):
    return bytes([typ, 3, 0, 0]) + hw


def eth(dst, src, typ, payload):
    return dst + src + struct.pack("!H", typ) + payload


def ib(typ, payload):
    return struct.pack("!HH", typ, 0) + payload


def arp_eth(op, sha, sip, tha, tip):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, sip, tha,
                       tip)


def arp_ib(op, sha, sip, tha, tip):
    return struct.pack("!HHBBH20s4s20s4s", 32, 0x0800, 20, 4, op, sha, sip,
                       tha, tip)


def write(outdir, harness, name, data):
    d = os.path.join(outdir, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- Ethernet frames an application sends (fuzz_eth_tx, fuzz_frag) ----

def tx_frames():
    f = {}
    f["arp_req"] = eth(BCAST, OWN_MAC, 0x0806,
                       arp_eth(1, OWN_MAC, IP_A, b"\0" * 6, IP_B))
    f["arp_rep"] = eth(PEER_MAC, OWN_MAC, 0x0806,
                       arp_eth(2, OWN_MAC, IP_A, PEER_MAC, IP_B))
    f["udp4"] = eth(PEER_MAC, OWN_MAC, 0x0800, udp4(IP_A, IP_B, 64))
    f["udp4_mcast"] = eth(bytes.fromhex("01005e000001"), OWN_MAC, 0x0800,
                          udp4(IP_A, bytes([224, 0, 0, 1]), 32))
    f["udp4_bcast"] = eth(BCAST, OWN_MAC, 0x0800,
                          udp4(IP_A, bytes([10, 0, 0, 255]), 32))
    f["ns"] = eth(bytes.fromhex("3333ff000002"), OWN_MAC, 0x86dd,
                  icmp6(FE80_A, SNM_B,
                        nd(135, FE80_B, opt_eth(1, OWN_MAC))))
    f["na"] = eth(PEER_MAC, OWN_MAC, 0x86dd,
                  icmp6(FE80_A, FE80_B,
                        nd(136, FE80_A, opt_eth(2, OWN_MAC))))
    f["rs"] = eth(bytes.fromhex("333300000002"), OWN_MAC, 0x86dd,
                  icmp6(FE80_A, bytes.fromhex("ff02" + "00" * 13 + "02"),
                        nd(133, None, opt_eth(1, OWN_MAC))))
    f["ra"] = eth(bytes.fromhex("333300000001"), OWN_MAC, 0x86dd,
                  icmp6(FE80_A, ALL_NODES,
                        nd(134, None, opt_eth(1, OWN_MAC) +
                           bytes([5, 1, 0, 0, 0, 0, 0x05, 0xdc]))))
    f["redirect"] = eth(PEER_MAC, OWN_MAC, 0x86dd,
                        icmp6(FE80_A, FE80_B,
                              nd(137, FE80_A, opt_eth(2, PEER_MAC))))
    f["udp6_mcast"] = eth(bytes.fromhex("333300000001"), OWN_MAC, 0x86dd,
                          ipv6(FE80_A, ALL_NODES, 17,
                               struct.pack("!HHHH", 1, 2, 12, 0) + b"abcd"))
    f["vlan"] = eth(PEER_MAC, OWN_MAC, 0x8100, b"\0\x05\x08\x00" +
                    udp4(IP_A, IP_B, 8))
    f["llc"] = eth(PEER_MAC, OWN_MAC, 0x0030, b"\xaa\xaa\x03" + b"\0" * 45)
    return f


# ---- IPoIB frames received (fuzz_eth_rx) ----

def rx_frames():
    f = {}
    f["arp_req"] = ib(0x0806, arp_ib(1, PEER_HW, IP_B, b"\0" * 20, IP_A))
    f["arp_rep"] = ib(0x0806, arp_ib(2, PEER_HW, IP_B, OWN_HW, IP_A))
    f["udp4"] = ib(0x0800, udp4(IP_B, IP_A, 64))
    f["udp4_mcast"] = ib(0x0800, udp4(IP_B, bytes([224, 0, 0, 251]), 16))
    f["ns"] = ib(0x86dd, icmp6(FE80_B, bytes.fromhex(
        "ff0200000000000000000001ff000001"),
        nd(135, FE80_A, opt_ib(1, PEER_HW))))
    f["na"] = ib(0x86dd, icmp6(FE80_B, FE80_A,
                               nd(136, FE80_B, opt_ib(2, PEER_HW))))
    f["ra"] = ib(0x86dd, icmp6(FE80_B, ALL_NODES,
                               nd(134, None, opt_ib(1, PEER_HW) +
                                  bytes([5, 1, 0, 0, 0, 0, 0xff, 0xdc]))))
    f["redirect"] = ib(0x86dd, icmp6(FE80_B, FE80_A,
                                     nd(137, FE80_B, opt_ib(2, PEER_HW))))
    f["udp6"] = ib(0x86dd, ipv6(FE80_B, FE80_A, 17,
                                struct.pack("!HHHH", 1, 2, 12, 0) + b"wxyz"))
    f["other"] = ib(0x88b5, b"local experimental ethertype")
    return f


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")

    # fuzz_eth_tx: layout (3), flags, resolve mask, neighbour flags + QPN
    layouts = [b"\x80\x00\x00", b"\x10\x04\x02", b"\xff\x00\x00"]
    for i, (name, fr) in enumerate(sorted(tx_frames().items())):
        hdr = layouts[i % len(layouts)] + bytes([0, 0xff, 0x80, 0, 0, 0xa1])
        write(out, "fuzz_eth_tx", name, hdr + fr)
    write(out, "fuzz_eth_tx", "arp_shared",
          b"\x80\x00\x00" + bytes([1, 0xff, 0x80, 0, 0, 0xa1]) +
          tx_frames()["arp_rep"])

    # fuzz_eth_rx: layout (3), flags (mcast, RC, sender)
    for i, (name, fr) in enumerate(sorted(rx_frames().items())):
        lo = layouts[i % len(layouts)]
        flags = 1 if "mcast" in name or name in ("ns", "ra") else 2
        write(out, "fuzz_eth_rx", name, lo + bytes([flags]) + fr)
    write(out, "fuzz_eth_rx", "udp4_chain",
          b"\x80\x03\x02\x00" + ib(0x0800, udp4(IP_B, IP_A, 600)))

    # fuzz_frag: layout (3), MTU (2), room for fragments, pool flags
    big4 = eth(PEER_MAC, OWN_MAC, 0x0800, udp4(IP_A, IP_B, 700))
    big4df = eth(PEER_MAC, OWN_MAC, 0x0800, udp4(IP_A, IP_B, 700, df=True))
    opts4 = eth(PEER_MAC, OWN_MAC, 0x0800,
                udp4(IP_A, IP_B, 600, opts=bytes([0x94, 4, 0, 0,
                                                     0x07, 3, 4, 0])))
    big6 = eth(PEER_MAC, OWN_MAC, 0x86dd,
               ipv6(FE80_A, FE80_B, 17, struct.pack("!HHHH", 1, 2, 708, 0) +
                    bytes(700)))
    icmp_err = eth(PEER_MAC, OWN_MAC, 0x0800,
                   ipv4(IP_A, IP_B, 1, bytes([3, 4, 0, 0, 0, 0, 5, 0xdc]) +
                        bytes(600)))
    later = eth(PEER_MAC, OWN_MAC, 0x0800,
                ipv4(IP_A, IP_B, 17, bytes(600), off=0x2000 | 185))
    for name, fr, mtu in (("ipv4", big4, 300), ("ipv4_df", big4df, 300),
                          ("ipv4_opts", opts4, 256), ("ipv6", big6, 600),
                          ("icmp_error", icmp_err, 500),
                          ("ipv4_later_frag", later, 300),
                          ("ipv4_small_mtu", big4, 68)):
        write(out, "fuzz_frag", name, b"\x80\x00\x00" +
              struct.pack("!HBB", mtu, 64, 0) + fr)
    write(out, "fuzz_frag", "ipv4_chain", b"\x80\x20\x10" +
          struct.pack("!HBB", 500, 8, 0) + big4)

    # fuzz_cm: fault and connects, then records (see fuzz_cm.c)
    def rec(typ, ctl, idx=0, priv=b"", reason=0, local_id=0x100, raw=0,
            pkey=0xffff, retries=0x7f, act=0):
        return struct.pack("!BBBBH4s4sHBB", typ, ctl, idx, len(priv),
                           reason, local_id.to_bytes(4, "big"),
                           raw.to_bytes(4, "big"), pkey, retries,
                           act) + priv
    cmd = struct.pack("!II", 0x123, 65524)
    seqs = {
        "req_accept_rtu": b"\x00\x00" + rec(1, 0, 0, cmd) +
        rec(4, 0, 0) + rec(5, 0, 0),
        "req_reject": b"\x00\x00" + rec(1, 0, 1, cmd, act=1),
        "req_short_priv": b"\x00\x00" + rec(1, 0, 0, b"\0\0\1"),
        "req_no_listen": b"\x00\x00" + rec(1, 0x10, 0, cmd, raw=0x77),
        "req_rej_after": b"\x80\x00" + rec(1, 0, 0, cmd),
        "req_wrong_pkey": b"\x00\x00" + rec(1, 0x41, 0, cmd, pkey=0x8002),
        "rep_rtu": b"\x00\x01" + rec(2, 0, 0, cmd),
        "rep_small_mtu": b"\x00\x01" + rec(2, 0, 0,
                                           struct.pack("!II", 0x123, 4)),
        "rep_rej": b"\x00\x02" + rec(2, 0, 0, cmd) + rec(3, 0, 1, reason=28),
        "rej_timeout": b"\x00\x01" + rec(3, 0, 0, b"", reason=8),
        "established_dreq": b"\x00\x01" + rec(2, 0, 0, cmd, act=4) +
        rec(6, 0, 0),
        "dreq_unknown": b"\x00\x00" + rec(5, 0x08, 0, raw=0xdead),
        "bad_type": b"\x00\x00" + rec(9, 0, 0),
        "bad_port": b"\x00\x00" + rec(1, 0x03, 0, cmd, raw=0x10000),
        "bad_priv_len": b"\x00\x00" + rec(2, 0, 0, cmd)[:3] + b"\xff" +
        rec(2, 0, 0, cmd)[4:],
        "delayed": b"\x00\x01" + rec(2, 0x80, 0, cmd) + rec(2, 0, 0, cmd),
        "self": b"\x00\x00" + rec(1, 0x02, 0, cmd) + rec(4, 0x02, 0,
                                                         act=8),
    }
    for name, data in seqs.items():
        write(out, "fuzz_cm", name, data)

    # fuzz_devargs
    devargs = {
        "empty": "",
        "all_shm": "transport=shm,fabric=lab-1,guid=0x0002c90300a1b2c3,"
                   "srq=off,max_conns=64,mem_budget=512M,pkey=0x8001,"
                   "ib_mtu=4096,mode=eth,capture=/tmp/x.pcap,reap_idle=0,"
                   "retry_min=10,retry_max=5000",
        "verbs": "transport=verbs,dev=mlx5_0,port=1,gid_index=3",
        "faults": "fault_drop=1000,fault_cm_delay=50,fault_rej=all,"
                  "fault_cm_drop=req:rtu:drep",
        "limits": "shm_max_qp=16,shm_max_srq_wr=1024,shm_max_cqe=4096",
        "bad_key": "nosuchkey=1",
        "dup_key": "srq=on,srq=off",
        "bad_range": "max_conns=0,retry_min=9,retry_max=8",
        "mixed": "transport=verbs,fabric=x",
        "no_value": "srq,mode=",
        "rej_n": "fault_rej=12,mem_budget=64K",
    }
    for name, s in devargs.items():
        write(out, "fuzz_devargs", name, s.encode())

    # fuzz_peers_opts: the command line after the program name
    lines = {
        "empty": "",
        "help": "--help",
        "typical": "--fabric lab --hosts 100 --accept limit:4 --connect "
                   "--duration 2.5 --report-interval 0.5 --quiet",
        "addresses": "--guid-base 0x0002c9fe00000000 --ipv4 192.168.1.10 "
                     "--ipv6-prefix fd12:3456::/48 --pkey 0x8001",
        "mtus": "--ib-mtu 4096 --mtu 9000",
        "times": "--idle-after 1e-3 --die-after 1000000 --json out.json",
        "equals": "--hosts=7 --accept=ud --fabric=f_1",
        "bad_value": "--hosts 0",
        "missing_value": "--fabric",
        "unknown": "--frobnicate",
        "extra_arg": "--quiet extra",
        "prefix_bad": "--ipv6-prefix ff02::/8",
        "overflow": "--ipv4 223.255.255.250 --hosts 10",
    }
    for name, s in lines.items():
        write(out, "fuzz_peers_opts", name, s.encode())


if __name__ == "__main__":
    main()
