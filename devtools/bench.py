#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark: net_ipoibcm against DPDK's net_memif, and memcpy.

Two stock dpdk-testpmd processes (one host each, forwarding lcores on
different cores) run txonly -> rxonly over:
  - net_ipoibcm on the shm fabric, SRQ and non-SRQ, connected mode (RC),
  - net_memif (server/client on a unix socket),
at 64, 1500 and 9000 bytes, and net_ipoibcm also at 64000 bytes (memif
moves 2 KiB buffers). The receiver's packet count is sampled over several
windows; the median rate is reported. A single-core memcpy of 64000-byte
blocks (dpdk-test-ipoibcm perf_memcpy) is the bandwidth baseline.

Everything runs in one invocation on the same machine, so the ratios are
what to read on a shared, noisy machine.

usage: devtools/bench.py [--build DIR] [--windows N] [--out FILE]
"""

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "app/test-ipoibcm/blackbox"))

SIZES = [(64, "64"), (1500, "1500"), (9000, "9000"),
         (64000, "16000,16000,16000,16000")]
WINDOW_S = 1.0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--windows", type=int, default=5,
                    help="measurement windows per point (median)")
    ap.add_argument("--out", help="also write the report (markdown) here")
    return ap.parse_args()


def rx_rate(rx_host, windows):
    """Median receive rate over windows: (Mpps, bytes per packet)."""
    rates, sizes = [], []
    prev = rx_host.stats()
    t_prev = time.monotonic()
    for _ in range(windows):
        time.sleep(WINDOW_S)	# a measurement window
        cur = rx_host.stats()
        t = time.monotonic()
        pkts = cur["rx"] - prev["rx"]
        rates.append(pkts / (t - t_prev) / 1e6)
        if pkts:
            sizes.append((cur["rx_bytes"] - prev["rx_bytes"]) / pkts)
        prev, t_prev = cur, t
    return statistics.median(rates), (statistics.median(sizes)
                                      if sizes else 0)


def run_pair(TestPmd, name, vdev_a, vdev_b, args, sizes, windows,
             connect=None):
    """txonly on A -> rxonly on B for each size; {size: (Mpps, Gbit/s)}."""
    b = TestPmd(name + "_b", [vdev_b], args, main_lcore=1, mbufs=16384)
    a = TestPmd(name + "_a", [vdev_a], args, main_lcore=0, mbufs=16384)
    res = {}
    try:
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        if connect is not None:
            a.cmd("set txpkts 64")
            a.cmd("start")
            if not a.wait_xstat(connect, 1):
                raise RuntimeError("%s: no connection" % name)
            a.cmd("stop")
        for size, spec in sizes:
            out = a.cmd("set txpkts %s" % spec)
            if "Bad" in out:
                raise RuntimeError("%s: testpmd refused txpkts %s" %
                                   (name, spec))
            out = a.cmd("start")
            if "Fail" in out or "not all" in out.lower():
                raise RuntimeError("%s: %s" % (name, out))
            mpps, avg = rx_rate(b, windows)
            a.cmd("stop")
            b.settle_rx()
            res[size] = (mpps, mpps * 1e6 * avg * 8 / 1e9, avg)
            print("  %-18s %6d B: %7.3f Mpps %7.2f Gbit/s" %
                  (name, size, mpps, res[size][1]), flush=True)
        b.cmd("stop")
    finally:
        a.quit()
        b.quit()
    return res


def memcpy_baseline(build):
    exe = os.path.join(build, "app/test-ipoibcm/dpdk-test-ipoibcm")
    out = subprocess.run([exe, "--no-huge", "-m", "1024", "--no-pci",
                          "--no-shconf", "--file-prefix=bench_memcpy",
                          "--", "perf_memcpy"], capture_output=True,
                         text=True, check=True).stdout
    return {k: float(v) for k, v in
            re.findall(r"memcpy \d+ B blocks, ([^:]+): ([\d.]+) Gbit/s", out)}


def perf_profile(TestPmd, windows):
    """Where the time goes at 64 B: perf on both sides, top symbols."""
    fab = "bench_prof_%d" % os.getpid()
    args = ["--rxd=1024", "--txd=1024"]
    b = TestPmd("bprof_b", ["net_ipoibcm0,fabric=%s,guid=0xb2" % fab], args,
                main_lcore=1)
    a = TestPmd("bprof_a", ["net_ipoibcm0,fabric=%s,guid=0xa2" % fab], args,
                main_lcore=0)
    report = {}
    try:
        a.cmd("set eth-peer 0 %s" % b.mac())
        a.cmd("set fwd txonly")
        a.cmd("set txpkts 64")
        b.cmd("set fwd rxonly")
        b.cmd("start")
        a.cmd("start")
        a.wait_xstat("conns_tx_connected", 1)
        for side, t in (("sender", a), ("receiver", b)):
            data = "/tmp/bench-perf-%s.data" % side
            subprocess.run(["perf", "record", "-q", "-o", data, "-p",
                            str(t.p.pid), "--", "sleep", str(windows)],
                           capture_output=True)
            out = subprocess.run(["perf", "report", "-i", data, "--stdio",
                                  "--no-children", "--sort", "symbol",
                                  "-g", "none"], capture_output=True,
                                 text=True).stdout
            rows = [l.strip() for l in out.splitlines()
                    if re.match(r"\s+[\d.]+%", l)][:12]
            report[side] = rows
            os.unlink(data)
        a.cmd("stop")
        b.cmd("stop")
    finally:
        a.quit()
        b.quit()
    return report


def main():
    args = parse_args()
    os.environ["IPOIBCM_BUILD"] = args.build
    from testpmd import TestPmd

    pid = os.getpid()
    common = ["--max-pkt-len=65534", "--enable-scatter",
              "--tx-offloads=0x8000", "--mbuf-size=16512", "--rxd=1024",
              "--txd=1024"]
    results = {}
    for srq in ("on", "off"):
        fab = "bench_%s_%d" % (srq, pid)
        results["ipoibcm srq=" + srq] = run_pair(
            TestPmd, "ipoibcm_" + srq,
            "net_ipoibcm0,fabric=%s,guid=0xa1,srq=%s" % (fab, srq),
            "net_ipoibcm0,fabric=%s,guid=0xb1,srq=%s" % (fab, srq),
            common, SIZES, args.windows, connect="conns_tx_connected")
    sock = "/run/ipoibcm-bench-memif-%d.sock" % pid
    # net_memif of DPDK 22.11 takes frames of at most 1518 bytes
    # (max_rx_pktlen): no 9000-byte point for it
    results["memif"] = run_pair(
        TestPmd, "memif",
        "net_memif0,role=client,socket=%s,socket-abstract=no" % sock,
        "net_memif0,role=server,socket=%s,socket-abstract=no" % sock,
        ["--mbuf-size=2176", "--rxd=1024", "--txd=1024"],
        [(64, "64"), (1500, "1500")], args.windows)
    mc = memcpy_baseline(args.build)
    prof = perf_profile(TestPmd, 2)
    report = format_report(results, mc, prof)
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


def format_report(results, mc, prof):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    lines = ["Date: %s  " % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
             "Machine: %s, %d CPUs, %s, kernel %s  " %
             (cpu, os.cpu_count(), platform.machine(), platform.release()),
             "Command: `devtools/bench.py` (medians of 1-second windows)",
             "", "Single-core memcpy of 64000 B blocks (dpdk-test-ipoibcm "
             "perf_memcpy):", ""] + ["- %s: %.2f Gbit/s" % kv for kv in
                                     mc.items()] + [
             "", "The baseline below is the hot-source case, the fabric's own "
             "pattern (sender mbufs come from the mempool cache; a posted "
             "receive buffer is written a ring after it was last used).", "",
             "| path | size B | Mpps | Gbit/s | vs memif (pps) | "
             "vs memcpy (bw) |",
             "|---|---:|---:|---:|---:|---:|"]
    memif = results.get("memif", {})
    base = mc["hot source, 64 MB destination ring"]
    for name, res in results.items():
        for size, (mpps, gbps, _) in sorted(res.items()):
            vs = ("%.2fx" % (mpps / memif[size][0])
                  if size in memif and memif[size][0] > 0 and
                  name != "memif" else "")
            lines.append("| %s | %d | %.3f | %.2f | %s | %.2fx |" %
                         (name, size, mpps, gbps, vs, gbps / base))
    lines += ["", "net_memif on DPDK 22.11 takes frames of at most 1518 "
              "bytes, so it has no 9000 B point; ratios are against memif's "
              "rate at the same size."]
    for side, rows in prof.items():
        lines += ["", "perf, 64 B txonly -> rxonly, %s side "
                  "(top symbols):" % side, "```"] + rows + ["```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
