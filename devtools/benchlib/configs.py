# SPDX-License-Identifier: BSD-3-Clause
"""What is compared: the drivers' configurations, sizes and names.

Every measurement runs each configuration in turn, in the order of
CONFIGS, once per round; names are unique per process and round, so
nothing of one run can meet another engineer's (or the previous round's)
fabric, socket or file prefix.
"""

import glob
import os
import shutil

MEMIF = "memif"
SRQ_ON = "ipoibcm srq=on"
SRQ_OFF = "ipoibcm srq=off"
CONFIGS = [MEMIF, SRQ_ON, SRQ_OFF]
IPOIB = [SRQ_ON, SRQ_OFF]

# Frame sizes (bytes, Ethernet header included) and testpmd's txpkts for
# them. net_memif of DPDK 22.11 refuses frames over 1518 bytes
# (max_rx_pktlen): only the small sizes are compared with it. The largest
# frame net_ipoibcm takes is 65534 bytes (CM MTU 65520 + 14), sent as four
# segments of at most 16384 bytes (the mbufs' data room).
SMALL = [64, 1500]
LARGE = [9000, 65534]
TXPKTS = {64: "64", 1500: "1500", 9000: "9000",
          65534: "16384,16384,16384,16382"}
# The same testpmd arguments for memif and net_ipoibcm at the small sizes;
# the large ones need 16 KiB mbufs, scatter and multi-segment sends.
SMALL_ARGS = ["--mbuf-size=2176", "--rxd=1024", "--txd=1024"]
LARGE_ARGS = ["--max-pkt-len=65534", "--enable-scatter",
              "--tx-offloads=0x8000", "--mbuf-size=16512", "--rxd=1024",
              "--txd=1024"]
GUID_A, GUID_B = "0xa1", "0xb1"


def rate_groups(cfg, sizes=SMALL + LARGE):
    """[(sizes, testpmd arguments, tag)]: the sizes of cfg measured with
    one testpmd pair each, small then large; net_memif takes no large
    frame."""
    groups = [([s for s in sizes if s not in LARGE], SMALL_ARGS, "s")]
    if cfg in IPOIB:
        groups.append(([s for s in sizes if s in LARGE], LARGE_ARGS, "l"))
    return [g for g in groups if g[0]]


def tag(cfg):
    """A short name for file names: memif, on, off."""
    return "memif" if cfg == MEMIF else cfg.split("=")[1]


def unique(cfg, what, rnd):
    """A name of at most 31 characters of [A-Za-z0-9_-] (fabric names)."""
    return "b%s%s_%d_%d" % (what, tag(cfg), os.getpid(), rnd)


def memif_socket(name):
    return "/run/ipoibcm-bench-%s.sock" % name


def vdevs(cfg, name):
    """(vdev of host A, vdev of host B): A sends, B receives or echoes.

    memif: B is the server, A the client, on a unix socket named after
    name; net_ipoibcm: two hosts of the shm fabric name.
    """
    if cfg == MEMIF:
        sock = "socket=%s,socket-abstract=no" % memif_socket(name)
        return ("net_memif0,role=client," + sock,
                "net_memif0,role=server," + sock)
    srq = cfg.split("=")[1]
    return tuple("net_ipoibcm0,fabric=%s,guid=%s,srq=%s" % (name, g, srq)
                 for g in (GUID_A, GUID_B))


def one_process_vdevs(cfg, name):
    """Port 0 sends, port 1 receives, in one process.

    net_memif finds a socket by its path: in one process, the port probed
    first makes it, so the server must come first, and sends here (in two
    processes the client sends).
    """
    a, b = vdevs(cfg, name)
    if cfg == MEMIF:
        return [b, a.replace("net_memif0", "net_memif1")]
    return [a, b.replace("net_ipoibcm0", "net_ipoibcm1")]


def cleanup(cfg, name):
    """What a crashed process may leave behind: memif's socket file, the
    shm fabric's segments (/dev/shm/ipoibcm.<fabric>*)."""
    paths = [memif_socket(name)] if cfg == MEMIF else \
        glob.glob("/dev/shm/ipoibcm.%s" % name) + \
        glob.glob("/dev/shm/ipoibcm.%s.*" % name)
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def cleanup_runtime():
    """EAL's runtime directories of this run's processes: every file
    prefix of the run ends in _<pid>_<round> or _<pid> (testpmd.py)."""
    pid = os.getpid()
    for d in glob.glob("/var/run/dpdk/b*_%d_*" % pid) + \
            glob.glob("/var/run/dpdk/b*_%d" % pid):
        shutil.rmtree(d, ignore_errors=True)
