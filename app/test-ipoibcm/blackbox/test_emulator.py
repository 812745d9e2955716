#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The connection manager, black-box: dpdk-ipoibcm-peers emulates the
hosts, dpdk-ipoibcm-ping is the DPDK application, dpdk-telemetry.py reads
the port. One scenario per run:

  spill    max_conns=4, 16 hosts that also connect back: every host gets
           every echo, 4 on RC and 12 spilled; the passive side refuses
           the other 12 with REJ reason 1; telemetry agrees.
  reap     max_conns=2, reap_idle=1: hosts 0-1 connected then idle, the
           busy spilled hosts 2-5 get promoted after the reaping.
  budget   non-SRQ with a budget that fits 3 connections: the hosts
           connecting to us are refused with REJ 3 beyond the third.
  scale    10,000 hosts and max_conns=1024 in SRQ mode: all reachable,
           1024 on RC; memory per connection printed.

usage: test_emulator.py spill|reap|budget|scale
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from ipoibtest import BUILD, ENV, check, done

SCENARIO = sys.argv[1]
FABRIC = "bb_emu_%s_%d" % (SCENARIO, os.getpid())
PREFIX = "bbemu_%s_%d" % (SCENARIO, os.getpid())
PEERS = os.path.join(BUILD, "app/ipoibcm-peers/dpdk-ipoibcm-peers")
PING = os.path.join(BUILD, "app/ipoibcm-ping/dpdk-ipoibcm-ping")


def start_peers(hosts, *args):
    tmp = tempfile.NamedTemporaryFile(prefix="ipoibcm-peers-",
                                      suffix=".json", delete=False)
    tmp.close()
    cmd = [PEERS, "--fabric", FABRIC, "--hosts", str(hosts), "--json",
           tmp.name] + list(args)
    print("  $ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=ENV)
    for line in p.stdout:	# wait until every host is up
        if line.startswith("ready:"):
            print("  peers " + line.strip(), flush=True)
            break
    p.json_path = tmp.name
    return p


def stop_peers(p):
    p.terminate()
    p.communicate(timeout=60)	# its table at exit fills the pipe
    with open(p.json_path) as f:
        data = json.load(f)
    os.unlink(p.json_path)
    return data


def start_ping(devargs, *args):
    cmd = [PING, "-l", "0", "--no-huge", "-m", "1024", "--no-pci",
           "--file-prefix=" + PREFIX, "--log-level=pmd.net.ipoibcm:warning",
           "--vdev=net_ipoibcm0,fabric=%s,%s" % (FABRIC, devargs), "--",
           "--require-all"] + list(args)
    print("  $ " + " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=ENV)


def read_until(p, pattern, out):
    for line in p.stdout:
        out.append(line)
        if re.search(pattern, line):
            return line
    return None


def telemetry(cmd):
    r = subprocess.run(["dpdk-telemetry.py", "-f", PREFIX], input=cmd + "\n",
                       capture_output=True, text=True, timeout=30)
    m = re.search(r"^\{.*\}$", r.stdout, re.M)
    return json.loads(m.group(0))[cmd.split(",")[0]] if m else {}


def wait_summary(key, want, timeout=20):
    """Poll /ipoibcm/summary until key reaches want; the last summary."""
    deadline = time.monotonic() + timeout
    summary = {}
    while time.monotonic() < deadline:
        summary = telemetry("/ipoibcm/summary,0")
        if summary.get(key, -1) >= want:
            break
    return summary


def last_report(out):
    rep = [l for l in out if l.startswith("[phase")]
    if not rep:
        return {}
    l = rep[-1]
    keys = {"conns_tx": r"conns tx (\d+)", "conns_rx": r"rx (\d+) spilled",
            "spilled": r"spilled (\d+)", "promoted": r"promoted (\d+)",
            "reaped": r"reaped (\d+)", "evicted": r"evicted (\d+)",
            "rej_sent": r"REJ sent (\d+)", "bpc": r"(\d+) B/conn"}
    return {k: int(re.search(v, l).group(1)) for k, v in keys.items()}


def finish(ping, out):
    for line in ping.stdout:
        out.append(line)
    ping.wait(120)
    text = "".join(out)
    print("".join("    " + l for l in out if not l.startswith("  ")),
          flush=True)
    check(ping.returncode == 0, "ping exits 0 (every host served)")
    check("every host was served" in text, "every host of every phase "
          "answered")
    return text


def scenario_spill():
    peers = start_peers(16, "--connect")
    ping = start_ping("max_conns=4", "--hosts", "16", "--rate", "20000",
                      "--report", "1", "--phase", "4:0-15", "--grid")
    out = []
    read_until(ping, r"^\[phase 0\s+2", out)
    summary = telemetry("/ipoibcm/summary,0")
    conns = telemetry("/ipoibcm/conns,0")
    print("  telemetry summary: %s" % summary, flush=True)
    finish(ping, out)
    rep = last_report(out)
    check(rep.get("conns_tx") == 4, "4 hosts on RC (%s)" % rep)
    check(rep.get("spilled") == 12, "12 hosts spilled to UD")
    check(rep.get("conns_rx") == 4, "4 hosts' connections accepted")
    check(rep.get("rej_sent", 0) >= 12, "the rest refused: REJ 1")
    check(summary.get("tx_connected") == 4 and summary.get("spilled") == 12,
          "telemetry: 4 connected, 12 spilled")
    peers_seen = [v for k, v in conns.items() if k != "next"]
    paths = [p.get("path") for p in peers_seen]
    check(len(peers_seen) == 16 and paths.count("RC") == 4,
          "telemetry lists 16 peers, 4 on RC (%s)" % paths)
    data = stop_peers(peers)
    rc_hosts = [h for h in data["hosts"] if h.get("rc_rx", 0) > 0]
    check(len(rc_hosts) == 4, "the emulator saw 4 hosts receive over RC "
          "(%d)" % len(rc_hosts))


def scenario_reap():
    peers = start_peers(6, "--connect")
    ping = start_ping("max_conns=2,reap_idle=1", "--hosts", "6", "--rate",
                      "20000", "--report", "1", "--phase", "3:0-1",
                      "--phase", "3:0-5", "--phase", "8:2-5", "--grid")
    out = []
    finish(ping, out)
    rep = last_report(out)
    check(rep.get("reaped", 0) + rep.get("evicted", 0) >= 2,
          "idle connections made room (%s)" % rep)
    check(rep.get("promoted", 0) >= 2, "busy spilled hosts promoted")
    check(rep.get("conns_tx") == 2, "the table is full again")
    stop_peers(peers)


def scenario_budget():
    # one non-SRQ connection (MTU 1500, 1024 descriptors) costs the pool
    # the port prints as mem_used; a budget for three and a half of them
    ping = start_ping("srq=off", "--hosts", "1", "--rate", "1000",
                      "--phase", "4:0-0")
    peers = start_peers(1, "--connect")
    out = []
    read_until(ping, r"^phase 0", out)
    per_conn = wait_summary("rx_connections", 1).get("mem_used", 0)
    finish(ping, out)
    stop_peers(peers)
    check(per_conn > 0, "one connection charges %d bytes" % per_conn)
    out = []
    ping = start_ping("srq=off,mem_budget=%d" % (per_conn * 7 // 2),
                      "--hosts", "6", "--rate", "6000", "--report", "1",
                      "--phase", "6:0-5")
    peers = start_peers(6, "--connect")
    read_until(ping, r"^phase 0", out)
    summary = wait_summary("rx_connections", 3)
    xs = telemetry("/ethdev/xstats,0")
    finish(ping, out)
    stop_peers(peers)
    print("  telemetry summary: %s" % summary, flush=True)
    check(summary.get("rx_connections") == 3, "3 connections accepted")
    check(summary.get("mem_used", 1 << 62) <= summary.get("mem_budget", 0),
          "the budget is never exceeded")
    check(xs.get("rej_sent_reason_3", 0) >= 3,
          "the others refused with REJ 3 (no resources): %s" %
          xs.get("rej_sent_reason_3"))


def scenario_scale():
    t0 = time.monotonic()
    peers = start_peers(10000)
    print("  10,000 hosts up in %.1f s" % (time.monotonic() - t0), flush=True)
    ping = start_ping("max_conns=1024,srq=on", "--hosts", "10000",
                      "--rate", "200000", "--report", "2", "--phase",
                      "6:0-9999")
    out = []
    read_until(ping, r"^\[phase 0\s+4", out)
    summary = telemetry("/ipoibcm/summary,0")
    finish(ping, out)
    stop_peers(peers)
    print("  telemetry summary: %s" % summary, flush=True)
    rep = last_report(out)
    check(rep.get("conns_tx") == 1024, "1024 hosts on RC (%s)" % rep)
    check(rep.get("spilled") == 10000 - 1024, "8976 spilled to UD")
    check(0 < rep.get("bpc", 0) <= 256,
          "driver memory per connection: %d bytes" % rep.get("bpc", 0))


{"spill": scenario_spill, "reap": scenario_reap, "budget": scenario_budget,
 "scale": scenario_scale}[SCENARIO]()
left = [f for f in os.listdir("/dev/shm") if FABRIC in f]
check(not left, "no fabric objects left: %s" % left)
done()
