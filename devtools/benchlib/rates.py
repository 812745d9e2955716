# SPDX-License-Identifier: BSD-3-Clause
"""Packet rates: stock dpdk-testpmd txonly on host A -> rxonly on host B.

Two processes, their forwarding lcores on different cores. One call
measures one configuration at some sizes (one window each) and returns
{size: {"mpps", "gbps", "bytes"}}; the rounds and the interleaving are
the caller's. With queues=2 both hosts have two queue pairs polled by
their one forwarding lcore (a second lcore per host would need four free
cores), and the per-queue packet counts come from testpmd's per-stream
statistics, the same for every driver.
"""

import contextlib
import re
import time

from benchlib import configs

WARMUP_S = 0.5		# traffic before a window, at its size
DRAIN_S = 30		# a hang guard while the receiver empties its queue
CONNECT_S = 60	# a hang guard: sanitizer builds connect slowly
LINK_S = 30


def rx_window(a, b, window_s):
    """B's receive rate over one window: (Mpps, bytes per packet)."""
    a0, s0 = a.stats(), b.stats()
    t0 = time.monotonic()
    time.sleep(window_s)	# the measurement window itself
    s1 = b.stats()
    t1 = time.monotonic()
    pkts = s1["rx"] - s0["rx"]
    if pkts == 0:
        raise RuntimeError("%s received nothing in %.1f s; %s sent %d "
                           "frames since %.1f s before" % (
                               b.name, t1 - t0, a.name,
                               a.stats()["tx"] - a0["tx"], t1 - t0))
    return pkts / (t1 - t0) / 1e6, (s1["rx_bytes"] - s0["rx_bytes"]) / pkts


def link_up(t):
    """Until host t's port 0 says its link is up (net_memif's comes up
    once the client has connected, some time after the start)."""
    deadline = time.monotonic() + LINK_S
    while time.monotonic() < deadline:
        if re.search(r"Link status: up", t.cmd("show port info 0")):
            return
    raise RuntimeError("%s: link still down after %d s" % (t.name, LINK_S))


def drain(b):
    """Until B's counters stop moving once A has stopped sending.

    net_memif has no rx_queue_count, so the sign that B has taken every
    frame is two reads of its counters that agree (each read is a
    round trip through testpmd's command line).
    """
    last = None
    deadline = time.monotonic() + DRAIN_S
    while time.monotonic() < deadline:
        s = b.stats()
        if last is not None and s["rx"] == last["rx"]:
            return
        last = s
    raise RuntimeError("%s: still receiving %d s after the sender "
                       "stopped" % (b.name, DRAIN_S))


def per_queue(out, what):
    """{queue: packets} from testpmd's per-stream statistics."""
    return {int(q): int(n) for q, n in re.findall(
        r"Forward Stats for RX Port=\s*\d+/Queue=\s*(\d+).*?\n\s*"
        + what + r":\s*(\d+)", out, re.S)}


@contextlib.contextmanager
def pair(TestPmd, cfg, name, args):
    """Hosts A (txonly, stopped) and B (rxonly, started), links up; for
    net_ipoibcm, A's connection to B is up and B has drained the frames
    that made it. Both quit and what they leave is removed at the end."""
    vdev_a, vdev_b = configs.vdevs(cfg, name)
    a = b = None
    try:
        b = TestPmd(name + "_b", [vdev_b], args, main_lcore=1)
        a = TestPmd(name + "_a", [vdev_a], args, main_lcore=0)
        link_up(a)
        link_up(b)
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        if cfg in configs.IPOIB:
            a.cmd("set txpkts 64")
            a.cmd("start")
            if not a.wait_xstat("conns_tx_connected", 1, CONNECT_S):
                raise RuntimeError("%s: no connection in %d s" %
                                   (name, CONNECT_S))
            a.cmd("stop")
            drain(b)
        yield a, b
    finally:
        for t in (a, b):
            if t is not None:
                t.quit()
        configs.cleanup(cfg, name)


def measure(TestPmd, cfg, name, sizes, args, window_s, queues=None):
    """One pair of testpmd processes, one window per size.

    Returns {size: {...}}; with queues (a count), the frames' source
    addresses vary (--txonly-multi-flow, for RSS) and "rxq" and "txq" say
    {queue: packets} over the run.
    """
    if queues is not None:
        args = args + ["--rxq=%d" % queues, "--txq=%d" % queues,
                       "--txonly-multi-flow"]
    res = {}
    with pair(TestPmd, cfg, name, args) as (a, b):
        for size in sizes:
            out = a.cmd("set txpkts %s" % configs.TXPKTS[size])
            if "Bad" in out:
                raise RuntimeError("%s: testpmd refused txpkts %s: %s" %
                                   (name, configs.TXPKTS[size], out))
            out = a.cmd("start")
            if "Fail" in out or "not all" in out.lower():
                raise RuntimeError("%s: %s" % (name, out))
            time.sleep(WARMUP_S)	# traffic settles at the new size
            mpps, avg = rx_window(a, b, window_s)
            out_a = a.cmd("stop")
            drain(b)
            if abs(avg - size) > 1:
                raise RuntimeError("%s: received %.0f-byte frames, sent "
                                   "%d" % (name, avg, size))
            res[size] = {"mpps": mpps, "gbps": mpps * avg * 8 / 1e3,
                         "bytes": avg}
        out_b = b.cmd("stop")
        if queues is not None:
            res["rxq"] = per_queue(out_b, "RX-packets")
            res["txq"] = per_queue(out_a, "TX-packets")
    return res
