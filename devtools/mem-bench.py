#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: what a net_ipoibcm port costs in host memory, measured.

Figures only, never judged. The application is dpdk-ipoibcm-ping (one
net_ipoibcm port), the peers are dpdk-ipoibcm-peers (the emulator) on a
fabric of this run's own. Host memory is EAL's heap as EAL reports it
(telemetry /eal/heap_info,0: Alloc_size), read in the same process:

  - before the first connection, at each max_conns (16, 1024, 16384):
    the port started, its hosts not yet up;
  - per connection, SRQ mode: max_conns=16384, the ping's first phase
    sends to host 0 (one connection), the second to all N: (heap with N
    connections - heap with 1) / (N - 1). The ping resolves every host
    before (the categories that changed are printed: only the connection
    table): the figure is per connection. The line after it puts
    everything together: the port's heap with N connections and their
    peers at max_conns=16384 against an idle port at max_conns=16, / N;
  - per known peer: max_conns=1024 (a table of 16384 peers), host 0 on
    RC, all hosts resolved (known): heap with N hosts - heap with 1,
    / (N - 1); the ping's own table of hosts (one entry a host) is in the
    difference, the port's own figure (mem_heap_bytes) is not;
  - per connection, non-SRQ mode: max_conns=64, --hosts M connecting
    back (the hosts open connections to the port, which then owns a
    receive ring for each): (difference) / M.

Beside EAL's whole heap, the port's own figures from /ipoibcm/summary:
its EAL heap by category (mem_*_bytes, measured by the driver around each
of its allocations; mem_heap_bytes their sum), its receive buffers in the
fabric's arena (mem_rx_buffer_bytes) and its HCA's queues there (CQs,
receive queues, CM ring: mem_hca_bytes). The shm fabric's process memory
outside the arena (malloc: QP contexts, CM ids) is not measured.

usage: devtools/mem-bench.py [--build DIR] [--hosts N] [--nosrq-hosts M]
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HANG_S = 900	# 10,000 emulated hosts take minutes on a loaded machine
CATS = ["mem_port_bytes", "mem_peer_table_bytes", "mem_hash_bytes",
        "mem_ring_bytes", "mem_conn_table_bytes", "mem_queue_bytes",
        "mem_mempool_bytes", "mem_mcast_bytes"]
PING_HOST_BYTES = 4 + 6 + 2 + 4 + 8 + 2 * 8 * 8	# struct host, ping.c


def tel(prefix, cmd):
    """The answer's dict, whatever key telemetry files it under."""
    r = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input=cmd + "\n",
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"\{.*\}", r.stdout, re.S)
    if m is None:
        return None
    d = json.loads(m.group(0))
    return next(iter(d.values())) if len(d) == 1 else d


def heap(prefix):
    d = tel(prefix, "/eal/heap_info,0")
    return int(d["Alloc_size"])


def wait(what, cond, guard=HANG_S):
    deadline = time.monotonic() + guard
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            sys.exit("mem-bench: no %s after %d s" % (what, guard))
        time.sleep(0.5)


class Run:
    """dpdk-ipoibcm-ping with one port, and optionally the emulator."""

    def __init__(self, build, tag, devargs, hosts, peers_args=None):
        self.build = build
        self.prefix = "membench_%s_%d" % (tag, os.getpid())
        self.fabric = "mb_%s_%d" % (tag, os.getpid())
        self.hosts = hosts
        self.peers = None
        cmd = [os.path.join(build, "app/ipoibcm-ping/dpdk-ipoibcm-ping"),
               "-l", "0", "--no-huge", "-m", "2048", "--no-pci",
               "--file-prefix=" + self.prefix,
               "--log-level=pmd.net.ipoibcm:warning",
               "--vdev=net_ipoibcm0,fabric=%s,%s" % (self.fabric, devargs),
               "--", "--hosts", str(hosts), "--rate", "100000",
               "--report", "2", "--arp-timeout", str(HANG_S),
               "--phase", "%d:0-0" % (4 * HANG_S),
               "--phase", "%d:0-%d" % (4 * HANG_S, hosts - 1)]
        self.ping = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        # started: the ping's own pool and host table are allocated
        wait("port", lambda: (lambda x: x is not None and
                              x["receive"] != "stopped")(self.summary()),
             60)
        self.peers_args = peers_args

    def summary(self):
        try:
            return tel(self.prefix, "/ipoibcm/summary,0")
        except (subprocess.SubprocessError, ValueError, OSError):
            return None

    def start_peers(self):
        tmp = tempfile.NamedTemporaryFile(prefix="membench-", delete=False)
        tmp.close()
        self.json = tmp.name
        cmd = [os.path.join(self.build,
                            "app/ipoibcm-peers/dpdk-ipoibcm-peers"),
               "--fabric", self.fabric, "--hosts", str(self.hosts),
               "--json", tmp.name] + (self.peers_args or [])
        self.peers = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        for line in self.peers.stdout:
            if line.startswith("ready:"):
                break
        # drain its output meanwhile, or it blocks on a full pipe
        self.peers.stdout.close()

    def stop(self):
        self.ping.send_signal(signal.SIGINT)
        try:
            self.ping.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.ping.kill()
            self.ping.wait()
        if self.peers is not None:
            self.peers.terminate()
            try:
                self.peers.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.peers.kill()
                self.peers.wait()
            os.unlink(self.json)
        # EAL leaves its runtime directory behind
        shutil.rmtree(os.path.join("/var/run/dpdk", self.prefix),
                      ignore_errors=True)


def idle_cost(build, max_conns):
    """Heap of a started port, no host up; the port's summary."""
    r = Run(build, "idle%d" % max_conns, "max_conns=%d,srq=on" % max_conns,
            1)
    try:
        return heap(r.prefix), r.summary()
    finally:
        r.stop()


def cats(s):
    return " ".join("%s=%d" % (c[4:-6], s[c]) for c in CATS)


def cats_delta(s0, s, n):
    """The categories that changed from s0 to s, per unit of n."""
    return ", ".join("%s %+.0f" % (c[4:-6], (s[c] - s0[c]) / n)
                     for c in CATS if s[c] != s0[c]) or "none"


def port_delta(s0, s, n):
    """The port's own figures from summary s0 to s, per unit of n."""
    return ("port's EAL heap (mem_heap_bytes) %d -> %d: %.0f bytes per "
            "connection (by category: %s); fabric arena: receive buffers "
            "%d -> %d, HCA queues (mem_hca_bytes) %d -> %d: %.0f bytes per "
            "connection" %
            (s0["mem_heap_bytes"], s["mem_heap_bytes"],
             (s["mem_heap_bytes"] - s0["mem_heap_bytes"]) / n,
             cats_delta(s0, s, n),
             s0["mem_rx_buffer_bytes"], s["mem_rx_buffer_bytes"],
             s0["mem_hca_bytes"], s["mem_hca_bytes"],
             (s["mem_hca_bytes"] - s0["mem_hca_bytes"]) / n))


def known_cost(build, hosts):
    """Heap with hosts known (resolved) and host 0 on RC."""
    r = Run(build, "known%d" % hosts, "max_conns=1024,srq=on", hosts)
    try:
        r.start_peers()
        wait("peers", lambda: (lambda x: x and x["peers"] >= hosts and
                               x["tx_connected"] >= 1)(r.summary()))
        return heap(r.prefix), r.summary()
    finally:
        r.stop()


def settle(r, s):
    """
    The summary once the port holds still: on a busy machine a host's REQ
    can time out while the port builds its receive pool, and the retry
    makes a second passive connection; until the stale one times out and
    its pool (kept as a spare for reuse) is freed, the port holds more
    than its connections. Read again every 2 s until two reads agree.
    """
    keys = ("rx_connections", "tx_connected", "mem_used", "mem_hca_bytes",
            "mem_heap_bytes")

    def still():
        nonlocal s
        time.sleep(2)
        x = r.summary()
        same = x is not None and all(x[k] == s[k] for k in keys)
        if x is not None:
            s = x
        return same
    wait("a still port", still)
    return s


def conn_cost(build, tag, devargs, hosts, first, until, peers_args=None):
    """
    Heap once the first phase (host 0 only) has first(summary), and once
    the second (all hosts) has until(summary).
    """
    r = Run(build, tag, devargs, hosts, peers_args)
    try:
        r.start_peers()
        s0 = wait(tag, lambda: (lambda x: x if x and first(x) else None)(
            r.summary()))
        h0 = heap(r.prefix)
        r.ping.send_signal(signal.SIGUSR1)
        s = wait(tag, lambda: (lambda x: x if x and until(x) else None)(
            r.summary()))
        s = settle(r, s)
        h1 = heap(r.prefix)
        return h0, h1, s0, s
    finally:
        r.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--hosts", type=int, default=10000)
    ap.add_argument("--nosrq-hosts", type=int, default=16)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    n, m = a.hosts, a.nosrq_hosts

    print("EAL heap (Alloc_size) of dpdk-ipoibcm-ping, one port, SRQ mode,"
          " before its first connection:")
    base, port = {}, {}
    for mc in (16, 1024, 16384):
        base[mc], s = idle_cost(build, mc)
        port[mc] = s["mem_heap_bytes"]
        print("  max_conns=%-6d %12d bytes; the port's own: %d heap (%s), "
              "%d receive buffers and %d HCA queues in the fabric arena" %
              (mc, base[mc], s["mem_heap_bytes"], cats(s),
               s["mem_rx_buffer_bytes"], s["mem_hca_bytes"]))
    print("  per connection slot (16 -> 16384): %.0f bytes" %
          ((base[16384] - base[16]) / (16384 - 16)))
    print("  the port's own per connection slot (16 -> 16384): %.0f bytes"
          % ((port[16384] - port[16]) / (16384 - 16)))

    h0, h1, s0, s = conn_cost(build, "srq", "max_conns=16384,srq=on", n,
                              lambda x: x["tx_connected"] >= 1,
                              lambda x: x["tx_connected"] >= n)
    c0, c1 = s0["tx_connected"], s["tx_connected"]
    print("SRQ, max_conns=16384, %d hosts known: %d -> %d on RC: heap "
          "%d -> %d: %.0f bytes per connection; %s" %
          (n, c0, c1, h0, h1, (h1 - h0) / (c1 - c0),
           port_delta(s0, s, c1 - c0)))
    print("  everything included: the port's EAL heap with %d connections "
          "and their peers at max_conns=16384 (%d) - at max_conns=16 with "
          "none (%d), / %d: %.0f bytes per connection and its peer" %
          (c1, s["mem_heap_bytes"], port[16], c1,
           (s["mem_heap_bytes"] - port[16]) / c1))

    k1, ks1 = known_cost(build, 1)
    kn, ksn = known_cost(build, n)
    print("SRQ, max_conns=1024, one connection: heap with 1 host known %d, "
          "with %d known %d: %.0f bytes per known peer (the ping's own "
          "table of hosts included, %d bytes a host); the port's own EAL "
          "heap (mem_heap_bytes) %d -> %d: %.0f bytes per known peer (by "
          "category: %s)" %
          (k1, n, kn, (kn - k1) / (n - 1), PING_HOST_BYTES,
           ks1["mem_heap_bytes"], ksn["mem_heap_bytes"],
           (ksn["mem_heap_bytes"] - ks1["mem_heap_bytes"]) / (n - 1),
           cats_delta(ks1, ksn, n - 1)))

    h0, h1, s0, s = conn_cost(build, "nosrq", "max_conns=64,srq=off,"
                              "mem_budget=4G", m,
                              lambda x: x["rx_connections"] >= 1,
                              lambda x: x["rx_connections"] >= m,
                              ["--connect"])
    r0, r1 = s0["rx_connections"], s["rx_connections"]
    print("non-SRQ, %d hosts known, connecting back: %d -> %d receive "
          "rings: heap %d -> %d: %.0f bytes per connection in EAL's heap; "
          "its receive buffers are fabric memory: mem_used %d -> %d, "
          "%.0f bytes per connection; %s" %
          (m, r0, r1, h0, h1, (h1 - h0) / (r1 - r0), s0["mem_used"],
           s["mem_used"], (s["mem_used"] - s0["mem_used"]) / (r1 - r0),
           port_delta(s0, s, r1 - r0)))


main()
