#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Secondary processes against a running port: DPDK's own tools.

Host A is stock testpmd on hugepages (secondaries share its memory) with
one net_ipoibcm port; host B (testpmd, --no-huge) on the same fabric
exchanges frames with it. Against A:

- dpdk-proc-info --stats and --xstats: with A's traffic stopped, the
  values it prints are the ones A's own testpmd prints;
- A's telemetry: /ethdev/xstats and /ipoibcm/summary;
- dpdk-dumpcap (it takes no -d: the plugin is preloaded) captures frames
  of the running port into pcapng, which tshark reads: IPv4/UDP frames in
  both directions, none malformed. DPDK processes sharing mempools must
  register the mempool drivers in the same order; Debian's testpmd links
  librte_mempool_dpaa and dumpcap does not, so the libraries testpmd
  links are preloaded into dumpcap too (with net_null as well);
- testpmd as a secondary forwarding: its bursts return nothing and the
  driver says why, once; nothing crashes, A keeps running;
- once A closed its port, a secondary is told so and finds no port.

Hugepages are reserved and mounted for the test and given back after.
The outputs of proc-info and dumpcap are printed.

usage: test_secondary.py on|off   (the ports' srq)
"""

import os
import re
import subprocess
import sys
import tempfile
import time

from hugepages import Hugepages
from ipoibtest import ENV, TESTPMD, check, done, plugin
from telemetry import telemetry
from testpmd import TestPmd, bounce

SRQ = sys.argv[1]
FABRIC = "bb_sec_%s_%d" % (SRQ, os.getpid())
PROC_INFO = "/usr/bin/dpdk-proc-info"
DUMPCAP = "/usr/bin/dpdk-dumpcap"
CAPTURE = 40		# frames dumpcap takes


def run(cmd, env=None, timeout=120, stdout_only=False):
    """Run a tool; its output is printed and returned (stderr too)."""
    print("  $ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=env or ENV)
    out = p.stdout + p.stderr
    print("    " + "\n    ".join(out.splitlines()), flush=True)
    return p.returncode, p.stdout if stdout_only else out


def proc_info(prefix, *args):
    return run([PROC_INFO, "--file-prefix=" + prefix, "-d", plugin(),
                "--no-pci", "--log-level=pmd.net.ipoibcm:info", "--"] +
               list(args))


def check_proc_info(a):
    """proc-info's numbers are A's own, traffic stopped."""
    own_stats = a.stats()
    rc, out = proc_info(a.prefix, "--stats")
    check(rc == 0, "proc-info --stats runs")
    m = re.search(r"RX-packets:\s+(\d+)", out)
    check(m is not None and int(m.group(1)) == own_stats["rx"],
          "proc-info RX-packets = testpmd's (%s)" % own_stats["rx"])
    rc, out = proc_info(a.prefix, "--xstats")
    check(rc == 0, "proc-info --xstats runs")
    theirs = {k: int(v) for k, v in re.findall(r"^(\w+):\s+(\d+)\s*$", out,
                                                re.M)}
    own = a.xstats()
    names = ["tx_rc_packets", "rx_rc_packets", "rx_ud_packets",
             "conns_tx_connected", "mcast_groups", "mcast_joins"]
    check(all(theirs.get(n) == own.get(n) for n in names),
          "proc-info's driver xstats are A's: %s" %
          {n: (theirs.get(n), own.get(n)) for n in names})
    check(own.get("secondary_attaches", 0) >= 1,
          "A counted the secondaries (%s)" % own.get("secondary_attaches"))


def mempool_libs():
    """The mempool drivers testpmd links: dumpcap registers them first too."""
    out = subprocess.run(["ldd", TESTPMD], capture_output=True,
                         text=True).stdout
    return sorted(set(re.findall(r"=> (\S*librte_mempool_\w+\.so[.\d]*)",
                                 out)))


def check_dumpcap(a, tmp):
    """dumpcap on the running port; tshark reads what it wrote."""
    out_file = os.path.join(tmp, "a.pcapng")
    env = dict(ENV)
    env["LD_PRELOAD"] = " ".join(filter(None, [ENV.get("LD_PRELOAD")] +
                                        mempool_libs() + [plugin()]))
    rc, out = run([DUMPCAP, "--file-prefix=" + a.prefix, "-i",
                   "net_ipoibcm0", "-w", out_file, "-c", str(CAPTURE)],
                  env=env)
    check(rc == 0, "dumpcap captured from the running primary")
    rc, frames = run(["tshark", "-r", out_file, "-T", "fields", "-e",
                      "frame.protocols", "-e",
                      "frame.packet_flags_direction"], env=os.environ,
                     stdout_only=True)
    rows = [l.split("\t") for l in frames.splitlines() if l.strip()]
    check(rc == 0 and len(rows) >= CAPTURE,
          "tshark reads %d frames" % len(rows))
    check(all(r[0] == "eth:ethertype:ip:udp:data" for r in rows),
          "every frame is Ethernet/IPv4/UDP: %s" %
          sorted(set(r[0] for r in rows)))
    dirs = set(int(r[1], 0) for r in rows if len(r) > 1 and r[1])
    check(dirs == {1, 2}, "received (1) and sent (2) frames both "
          "captured: %s" % sorted(dirs))
    rc, bad = run(["tshark", "-r", out_file, "-Y", "_ws.malformed"],
                  env=os.environ, stdout_only=True)
    check(rc == 0 and bad.strip() == "", "no malformed frame")
    rc, info = run(["capinfos", "-I", out_file], env=os.environ)
    check(rc == 0 and "net_ipoibcm0" in info,
          "the capture names the interface net_ipoibcm0")


def check_secondary_burst(a):
    """testpmd as a secondary: it forwards nothing, it says why, once."""
    s = TestPmd("sec_fwd", [], main_lcore=0, prefix=a.prefix,
                eal=["--proc-type=secondary", "--no-pci"], start_timeout=300)
    try:
        s.cmd("set fwd rxonly")
        s.cmd("start")
        s.cmd("stop")
    finally:
        rc = s.quit()
    log = "".join(s.log)
    print("    " + "\n    ".join(l for l in log.splitlines()
                                 if "ipoib" in l), flush=True)
    check(rc == 0, "the secondary testpmd exits cleanly (%s)" % rc)
    check(log.count("runs in the primary only") == 1,
          "its bursts said once that the datapath runs in the primary")
    check(a.p.poll() is None, "A still runs")


def main():
    hp = Hugepages(512)
    tmp = tempfile.mkdtemp(prefix="ipoibcm-sec-")
    a = b = None
    try:
        b = TestPmd("sec_b", ["net_ipoibcm0,fabric=%s,guid=0xb2,srq=%s" %
                              (FABRIC, SRQ)], main_lcore=1)
        a = TestPmd("sec_a", ["net_ipoibcm0,fabric=%s,guid=0xa2,srq=%s" %
                              (FABRIC, SRQ)], main_lcore=0, eal=hp.eal())
        a.cmd("set eth-peer 0 %s" % b.mac())
        sa, sb = bounce(a, b, a.mac(), 0.5, 30)	# both ways, then stop
        # testpmd's main lcore flushes A's queue at start: its mempool
        # cache and the forwarding lcore's must not strand the spare of the
        # connection's pool (ipoib_pool.c), or A's ring runs out
        check(sa["tx"] == sb["rx"] and sb["tx"] == sa["rx"],
              "bounce: every frame sent was received (A tx %d rx %d, "
              "B tx %d rx %d)" % (sa["tx"], sa["rx"], sb["tx"], sb["rx"]))
        check_proc_info(a)
        reply = telemetry(a.prefix, "/ethdev/xstats,0")
        check("tx_rc_packets" in reply.get("/ethdev/xstats", {}),
              "telemetry /ethdev/xstats has the driver's xstats")
        reply = telemetry(a.prefix, "/ipoibcm/summary,0")
        check(reply.get("/ipoibcm/summary", {}).get("receive") is not None,
              "telemetry /ipoibcm/summary answers")
        # frames flowing while dumpcap captures
        for t in (a, b):
            t.cmd("set fwd mac")
        b.cmd("start")
        a.cmd("start tx_first 4")
        check_dumpcap(a, tmp)
        for t in (a, b):
            t.cmd("stop")
        check_secondary_burst(a)
        a.cmd("port stop 0")
        a.cmd("port close 0")
        rc, out = proc_info(a.prefix, "--stats")
        check(rc != 0 and "no such port" in out,
              "after close, a secondary is told the port is gone")
    finally:
        for t in (a, b):
            if t is not None:
                check(t.quit() == 0, "%s exits cleanly" % t.name)
        hp.release()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    leftover = [f for f in os.listdir("/dev/shm") if FABRIC in f]
    check(not leftover, "no fabric objects left: %s" % leftover)
    done()


main()
