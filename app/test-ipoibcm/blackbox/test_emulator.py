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
  persona  4 hosts of each personality (--personality linux, illumos),
           in both receive modes: every host answers; Linux's unicast UD
           (no GRH) is received, nothing dropped as from an unknown LID.
  linux_spill  4 Linux hosts, max_conns=2, both receive modes: the two
           hosts whose REQ the port refuses are told to use UD (an ARP
           reply without the connected-mode flag), every host answers,
           the two over UD; none is left retrying REQs for ever.
  illumos_big  2 illumos hosts, both receive modes, 65534-byte frames
           (IP 65520, DF: none fragmented onto UD while connecting): the
           hosts echo them over RC in full 65524-byte IPoIB frames
           (illumos sends up to its own buffers whatever the peer
           advertised); the port receives them whole, drops none.

Each phase of the ping tool lasts until what the scenario waits for has
shown in its reports (then SIGUSR1 ends it), never a fixed time: GUARD_S
only catches a hang.

usage: test_emulator.py spill|reap|budget|scale|persona|linux_spill|
                        illumos_big
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ipoibtest import BUILD, ENV, HANG_S, check, done

SCENARIO = sys.argv[1]
FABRIC = "bb_emu_%s_%d" % (SCENARIO, os.getpid())
PREFIX = "bbemu_%s_%d" % (SCENARIO, os.getpid())
PEERS = os.path.join(BUILD, "app/ipoibcm-peers/dpdk-ipoibcm-peers")
PING = os.path.join(BUILD, "app/ipoibcm-ping/dpdk-ipoibcm-ping")
# How long a wait may take: 10,000 hosts take minutes to come up, resolve
# and connect in a sanitized build on a loaded machine.
GUARD_S = HANG_S * (5 if SCENARIO == "scale" else 1)
# a phase "until SIGUSR1": longer than any wait of the test
UNTIL_SIGNAL = str(4 * GUARD_S)


def start_peers(hosts, *args):
    tmp = tempfile.NamedTemporaryFile(prefix="ipoibcm-peers-",
                                      suffix=".json", delete=False)
    tmp.close()
    cmd = [PEERS, "--fabric", FABRIC, "--hosts", str(hosts), "--json",
           tmp.name] + list(args)
    print("  $ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=ENV)
    for line in p.stdout:	# wait until every host is up
        if line.startswith("ready:"):
            print("  peers " + line.strip(), flush=True)
            break
    print("  %d hosts up in %.1f s (a figure, not judged)" %
          (hosts, time.monotonic() - t0), flush=True)
    p.json_path = tmp.name
    return p


def stop_peers(p):
    p.terminate()
    p.communicate(timeout=HANG_S)	# its table at exit fills the pipe
    with open(p.json_path) as f:
        data = json.load(f)
    os.unlink(p.json_path)
    return data


class Ping:
    """dpdk-ipoibcm-ping in the background; a thread collects its lines."""

    def __init__(self, devargs, *args):
        cmd = [PING, "-l", "0", "--no-huge", "-m", "1024", "--no-pci",
               "--file-prefix=" + PREFIX,
               "--log-level=pmd.net.ipoibcm:warning",
               "--vdev=net_ipoibcm0,fabric=%s,%s" % (FABRIC, devargs), "--",
               "--require-all", "--arp-timeout", str(GUARD_S)] + list(args)
        print("  $ " + " ".join(cmd), flush=True)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  env=ENV)
        self.lines = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.p.stdout:
            with self._cv:
                self.lines.append(line)
                self._cv.notify_all()
        with self._cv:
            self.lines.append(None)	# end of output
            self._cv.notify_all()

    def wait_report(self, phase, cond, what):
        """The first report of the phase for which cond(report) holds.

        A report line comes every --report seconds; the wait ends when
        one satisfies cond, or the ping tool exits, or after GUARD_S.
        """
        deadline = time.monotonic() + GUARD_S
        seen = 0
        rep = {}
        with self._cv:
            while time.monotonic() < deadline:
                for line in self.lines[seen:]:
                    if line is None:
                        check(False, "%s (the ping tool exited)" % what)
                        return rep
                    if line.startswith("[phase %d " % phase):
                        rep = parse_report(line)
                        if cond(rep):
                            check(True, "%s: %s" % (what, line.strip()))
                            return rep
                seen = len(self.lines)
                self._cv.wait(1)
        check(False, "%s within %d s (last report %s)" % (what, GUARD_S,
                                                            rep))
        return rep

    def next_phase(self):
        self.p.send_signal(signal.SIGUSR1)

    def finish(self):
        """Wait for the exit (the last phase ended); its whole output."""
        try:
            self.p.wait(HANG_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._reader.join(HANG_S)
        out = [line for line in self.lines if line is not None]
        text = "".join(out)
        # the grid's lines start with spaces; a sanitizer's frames too
        print("".join("    " + l for l in out if not l.startswith("  ") or
                      l.lstrip().startswith("#")), flush=True)
        check(self.p.returncode == 0, "ping exits 0 (every host served)")
        check("every host was served" in text, "every host of every phase "
              "answered")


def telemetry(cmd):
    r = subprocess.run(["dpdk-telemetry.py", "-f", PREFIX], input=cmd + "\n",
                       capture_output=True, text=True, timeout=HANG_S)
    m = re.search(r"^\{.*\}$", r.stdout, re.M)
    return json.loads(m.group(0))[cmd.split(",")[0]] if m else {}


def wait_telemetry(cmd, cond):
    """Poll a telemetry command until cond(answer); the last answer."""
    deadline = time.monotonic() + GUARD_S
    answer = telemetry(cmd)
    while not cond(answer) and time.monotonic() < deadline:
        answer = telemetry(cmd)
    return answer


REPORT_KEYS = {
    "conns_tx": r"conns tx (\d+)", "conns_rx": r"rx (\d+) spilled",
    "spilled": r"spilled (\d+)", "promoted": r"promoted (\d+)",
    "retried": r"retried (\d+)", "reaped": r"reaped (\d+)",
    "evicted": r"evicted (\d+)", "rej_sent": r"REJ sent (\d+)",
    "served": r"served (\d+)/", "hosts": r"served \d+/(\d+)",
    "heap": r"(\d+) B heap"}


def parse_report(line):
    return {k: int(re.search(v, line).group(1))
            for k, v in REPORT_KEYS.items()}


def all_served(r):
    return r["served"] == r["hosts"]


def scenario_spill():
    peers = start_peers(16, "--connect")
    ping = Ping("max_conns=4", "--hosts", "16", "--rate", "20000",
                "--report", "1", "--phase", UNTIL_SIGNAL + ":0-15", "--grid")
    rep = ping.wait_report(0, lambda r: all_served(r) and
                           r["conns_tx"] == 4 and r["spilled"] == 12 and
                           r["conns_rx"] == 4 and r["rej_sent"] >= 12,
                           "every host served, 4 on RC, 12 spilled")
    summary = telemetry("/ipoibcm/summary,0")
    conns = telemetry("/ipoibcm/conns,0")
    print("  telemetry summary: %s" % summary, flush=True)
    ping.next_phase()
    ping.finish()
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
    ping = Ping("max_conns=2,reap_idle=1", "--hosts", "6", "--rate",
                "20000", "--report", "1", "--phase", UNTIL_SIGNAL + ":0-1",
                "--phase", UNTIL_SIGNAL + ":0-5", "--phase",
                UNTIL_SIGNAL + ":2-5", "--grid")
    ping.wait_report(0, lambda r: all_served(r) and r["conns_tx"] == 2,
                     "hosts 0-1 served, on RC")
    ping.next_phase()
    ping.wait_report(1, lambda r: all_served(r) and r["spilled"] == 4,
                     "hosts 0-5 served, the table full: 4 spilled")
    ping.next_phase()
    # only 2-5 busy: 0-1 go idle and are reaped, two of 2-5 take their
    # places (promoted, or retried if a loaded machine made them fail once)
    rep = ping.wait_report(2, lambda r: all_served(r) and
                           r["conns_tx"] == 2 and
                           r["reaped"] + r["evicted"] >= 2 and
                           r["promoted"] + r["retried"] >= 2,
                           "hosts 2-5 served, 2 of them moved to RC")
    ping.next_phase()
    ping.finish()
    check(rep.get("reaped", 0) + rep.get("evicted", 0) >= 2,
          "idle connections made room (%s)" % rep)
    check(rep.get("promoted", 0) + rep.get("retried", 0) >= 2,
          "busy spilled hosts promoted")
    check(rep.get("conns_tx") == 2, "the table is full again")
    stop_peers(peers)


def scenario_budget():
    # one non-SRQ connection (MTU 1500, 1024 descriptors) costs the pool
    # the port prints as mem_used; a budget for three and a half of them
    ping = Ping("srq=off", "--hosts", "1", "--rate", "1000", "--report", "1",
                "--phase", UNTIL_SIGNAL + ":0-0")
    peers = start_peers(1, "--connect")
    ping.wait_report(0, all_served, "the host served")
    per_conn = wait_telemetry("/ipoibcm/summary,0",
                              lambda s: s.get("rx_connections", 0) >= 1
                              ).get("mem_used", 0)
    ping.next_phase()
    ping.finish()
    stop_peers(peers)
    check(per_conn > 0, "one connection charges %d bytes" % per_conn)
    if per_conn <= 0:
        return
    ping = Ping("srq=off,mem_budget=%d" % (per_conn * 7 // 2), "--hosts",
                "6", "--rate", "6000", "--report", "1", "--phase",
                UNTIL_SIGNAL + ":0-5")
    peers = start_peers(6, "--connect")
    ping.wait_report(0, all_served, "the 6 hosts served")
    summary = wait_telemetry("/ipoibcm/summary,0",
                             lambda s: s.get("rx_connections", 0) >= 3)
    xs = wait_telemetry("/ethdev/xstats,0",
                        lambda x: x.get("rej_sent_reason_3", 0) >= 3)
    ping.next_phase()
    ping.finish()
    stop_peers(peers)
    print("  telemetry summary: %s" % summary, flush=True)
    check(summary.get("rx_connections") == 3, "3 connections accepted")
    check(summary.get("mem_used", 1 << 62) <= summary.get("mem_budget", 0),
          "the budget is never exceeded")
    check(xs.get("rej_sent_reason_3", 0) >= 3,
          "the others refused with REJ 3 (no resources): %s" %
          xs.get("rej_sent_reason_3"))


def scenario_scale():
    peers = start_peers(10000)
    ping = Ping("max_conns=1024,srq=on", "--hosts", "10000", "--rate",
                "200000", "--report", "2", "--phase",
                UNTIL_SIGNAL + ":0-9999")
    rep = ping.wait_report(0, lambda r: all_served(r) and
                           r["conns_tx"] == 1024 and
                           r["spilled"] == 10000 - 1024,
                           "10,000 hosts served, 1024 on RC, 8976 spilled")
    summary = telemetry("/ipoibcm/summary,0")
    ping.next_phase()
    ping.finish()
    stop_peers(peers)
    print("  telemetry summary: %s" % summary, flush=True)
    check(rep.get("conns_tx") == 1024, "1024 hosts on RC (%s)" % rep)
    check(rep.get("spilled") == 10000 - 1024, "8976 spilled to UD")
    check(rep.get("heap", 0) > 0,
          "the port's EAL heap memory is counted: %d bytes" %
          rep.get("heap", 0))


def scenario_persona():
    for persona in ["linux", "illumos"]:
        for srq in ["on", "off"]:
            what = "%s hosts, srq=%s" % (persona, srq)
            peers = start_peers(4, "--personality", persona)
            ping = Ping("srq=" + srq, "--hosts", "4", "--rate", "2000",
                        "--report", "1", "--phase", UNTIL_SIGNAL + ":0-3")
            ping.wait_report(0, all_served, "%s: every host answers" % what)
            xs = telemetry("/ethdev/xstats,0")
            ping.next_phase()
            ping.finish()
            data = stop_peers(peers)
            print("  xstats: rx_ud_packets %s rx_drop_unknown_lid %s" %
                  (xs.get("rx_ud_packets"), xs.get("rx_drop_unknown_lid")),
                  flush=True)
            check(xs.get("rx_ud_packets", 0) > 0,
                  "%s: the port received UD from them" % what)
            check(xs.get("rx_drop_unknown_lid") == 0,
                  "%s: nothing dropped as from an unknown LID" % what)
            check(all(h["ud_rx"] + h["rc_rx"] > 0 for h in data["hosts"]),
                  "%s: the emulator saw every host receive" % what)


def scenario_linux_spill():
    for srq in ["on", "off"]:
        what = "4 Linux hosts, max_conns=2, srq=%s" % srq
        peers = start_peers(4, "--personality", "linux")
        ping = Ping("max_conns=2,srq=" + srq, "--hosts", "4", "--rate",
                    "2000", "--report", "1", "--phase",
                    UNTIL_SIGNAL + ":0-3")
        ping.wait_report(0, all_served, "%s: every host answers" % what)
        xs = wait_telemetry("/ethdev/xstats,0",
                            lambda x: x.get("cm_adv_no_rc", 0) >= 2)
        ping.next_phase()
        ping.finish()
        data = stop_peers(peers)
        print("  xstats: conns_rx %s rej_sent_reason_1 %s cm_adv_no_rc %s "
              "cm_adv_untold %s tx_adv_no_rc %s" %
              (xs.get("conns_rx"), xs.get("rej_sent_reason_1"),
               xs.get("cm_adv_no_rc"), xs.get("cm_adv_untold"),
               xs.get("tx_adv_no_rc")), flush=True)
        hosts = data["hosts"]
        for h in hosts:
            print("  host: ud_tx %s rc_tx %s neigh_rc_lost %s "
                  "neigh_locked %s cm_queue_drops %s" %
                  (h.get("ud_tx"), h.get("rc_tx"), h.get("neigh_rc_lost"),
                   h.get("neigh_locked"), h.get("cm_queue_drops")),
                  flush=True)
        check(xs.get("conns_rx") == 2, "%s: 2 connections accepted" % what)
        check(xs.get("rej_sent_reason_1", 0) >= 2,
              "%s: the other hosts' REQs refused (REJ 1)" % what)
        check(xs.get("cm_adv_no_rc", 0) >= 2,
              "%s: the refused hosts told, without the RC flag" % what)
        told = [h for h in hosts if h.get("neigh_rc_lost", 0) > 0]
        check(len(told) == 2, "%s: 2 hosts dropped connected mode for the "
              "port (%d)" % (what, len(told)))
        check(len(told) == 2 and all(h.get("ud_tx", 0) > 0 for h in told),
              "%s: those hosts answered over UD" % what)
        check(all(h["ud_rx"] + h["rc_rx"] > 0 for h in hosts),
              "%s: the emulator saw every host receive" % what)


# what a drop at the receiving port is counted as
RX_DROPS = ["rx_drop_malformed", "rx_drop_too_long", "rx_drop_unknown_conn",
            "rx_drop_unknown_lid", "rx_nombuf", "hca_len_errors",
            "rx_missed_errors"]
BIG = 14 + 65520	# an Ethernet frame of the connected-mode MTU


def scenario_illumos_big():
    for srq in ["on", "off"]:
        what = "2 illumos hosts, %d-byte frames, srq=%s" % (BIG, srq)
        peers = start_peers(2, "--personality", "illumos")
        ping = Ping("srq=" + srq, "--hosts", "2", "--size", str(BIG),
                    "--rate", "100", "--report", "1", "--phase",
                    UNTIL_SIGNAL + ":0-1")
        ping.wait_report(0, lambda r: all_served(r) and
                         r["conns_tx"] == 2 and r["conns_rx"] == 2,
                         "%s: both hosts answer, connected both ways" %
                         what)
        x0 = telemetry("/ethdev/xstats,0")
        # 50 more frames of theirs over RC, whatever the machine's speed
        xs = wait_telemetry("/ethdev/xstats,0", lambda x: x.get(
            "rx_rc_packets", 0) >= x0.get("rx_rc_packets", 0) + 50)
        ping.next_phase()
        ping.finish()
        data = stop_peers(peers)
        pkts = xs.get("rx_rc_packets", 0) - x0.get("rx_rc_packets", 0)
        size = (xs.get("rx_rc_bytes", 0) - x0.get("rx_rc_bytes", 0)) / \
            max(pkts, 1)
        drops = {k: xs.get(k) for k in RX_DROPS}
        print("  xstats: %d RC frames of %.1f bytes on average; drops %s" %
              (pkts, size, drops), flush=True)
        check(pkts >= 50, "%s: the port received their frames over RC" %
              what)
        check(size == BIG, "%s: every one whole (%d bytes)" % (what, BIG))
        check(all(v == 0 for v in drops.values()),
              "%s: the port dropped none" % what)
        for h in data["hosts"]:
            print("  host: ud_rx %s ud_tx %s rc_rx %s rc_tx %s udp_echoed %s "
                  "dropped %s" % (h.get("ud_rx"), h.get("ud_tx"),
                                  h.get("rc_rx"), h.get("rc_tx"),
                                  h.get("udp_echoed"), h.get("dropped")),
                  flush=True)
        check(all(h["rc_tx"] > 0 for h in data["hosts"]),
              "%s: both hosts sent over RC" % what)


{"spill": scenario_spill, "reap": scenario_reap, "budget": scenario_budget,
 "scale": scenario_scale, "persona": scenario_persona,
 "linux_spill": scenario_linux_spill,
 "illumos_big": scenario_illumos_big}[SCENARIO]()
left = [f for f in os.listdir("/dev/shm") if FABRIC in f]
check(not left, "no fabric objects left: %s" % left)
done()
