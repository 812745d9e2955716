#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The net_ipoibcm authors
"""Tests of dpdk-ipoibcm-peers, the peer emulator.

Each test starts the emulator on a fabric of its own, waits for its
"ready:" line, and runs peers_client (a second program on the same fabric)
which checks what the emulated hosts answer and prints "key: value" lines.
Everything is synchronised on events (a line printed, a counter reached)
by polling; HANG_S only catches a hang, no check judges a time, a rate or
a CPU share (those are printed as figures).

usage: test_peers.py TEST   (options, probe, rc, backoff, idle, die, scale,
                            persona, badcm)
"""

import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ipoibtest import BUILD, HANG_S, check, done

APP_DIR = os.path.join(BUILD, "app", "ipoibcm-peers")
PEERS = os.path.join(APP_DIR, "dpdk-ipoibcm-peers")
CLIENT = os.path.join(APP_DIR, "peers_client")

_T0 = time.monotonic()


def say(line):
    """Print with the seconds since the test started."""
    print("%7.3f %s" % (time.monotonic() - _T0, line), flush=True)


def fabric_name(test):
    return "pt%d%s" % (os.getpid(), test[:8])


def shm_objects(fabric):
    return sorted(os.path.basename(p)
                  for p in glob.glob("/dev/shm/ipoibcm.%s*" % fabric)
                  if os.path.basename(p) == "ipoibcm." + fabric or
                  os.path.basename(p).startswith("ipoibcm.%s." % fabric))


class Emulator:
    """dpdk-ipoibcm-peers in the background; threads collect its output
    (a full pipe would stop it)."""

    def __init__(self, fabric, args, ready_timeout=HANG_S):
        self.fabric = fabric
        self.json = os.path.join(tempfile.gettempdir(),
                                 "peers-%s.json" % fabric)
        if os.path.exists(self.json):
            os.unlink(self.json)
        cmd = [PEERS, "--fabric", fabric, "--json", self.json] + args
        say("  $ " + " ".join(cmd))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self._bufs = {"out": bytearray(), "err": bytearray()}
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._drain, args=(f, k), daemon=True)
            for f, k in ((self.proc.stdout, "out"),
                         (self.proc.stderr, "err"))]
        for t in self._threads:
            t.start()
        self.ready = None
        deadline = time.monotonic() + ready_timeout
        while self.ready is None and time.monotonic() < deadline:
            m = re.search(rb"^ready: .*$", self.out, re.M)
            if m:
                self.ready = m.group(0).decode()
            elif self.proc.poll() is not None:
                break
            else:
                time.sleep(0.02)    # polling the output, with a deadline
        say("  " + (self.ready or "not ready: " +
                    self.err.decode(errors="replace")))

    def _drain(self, f, key):
        for chunk in iter(lambda: os.read(f.fileno(), 65536), b""):
            with self._lock:
                self._bufs[key] += chunk

    @property
    def out(self):
        with self._lock:
            return bytes(self._bufs["out"])

    @property
    def err(self):
        with self._lock:
            return bytes(self._bufs["err"])

    def wait(self, timeout):
        """Exit status once it ended by itself, or None at the deadline."""
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        for t in self._threads:
            t.join(5)
        return status

    def stop(self, timeout=HANG_S):
        """SIGINT, then its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        status = self.wait(timeout)
        say("  emulator exit %s" % status)
        return status

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def results(self):
        with open(self.json) as f:
            return json.load(f)

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def status(self, key):
        """A number of /proc/<pid>/status: VmRSS (KiB), ..."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            m = re.search(r"^%s:\s+(\d+)" % key, f.read(), re.M)
        return int(m.group(1))

    def wait_out(self, pattern, timeout=HANG_S):
        """The first line of its output matching pattern, or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.out, re.M)
            if m:
                return m.group(0).decode()
            if self.proc.poll() is not None:
                return None
            time.sleep(0.02)    # polling the output, with a deadline
        return None


def client_cmd(fabric, hosts, args, global_args=(), guard=HANG_S):
    """peers_client's command line; each of its waits ends after guard s."""
    cmd = [CLIENT, "--fabric", fabric, "--hosts", str(hosts),
           "--timeout", str(guard)] + list(global_args) + list(args)
    say("  $ " + " ".join(cmd))
    return cmd


def client_done(returncode, stdout, stderr):
    say("  client exit %d" % returncode)
    for line in stdout.splitlines():
        print("    | " + line)
    for line in stderr.splitlines():
        print("    ! " + line)
    return returncode, stdout


def client(fabric, hosts, args, global_args=(), guard=HANG_S):
    """Run peers_client; (exit status, output)."""
    p = subprocess.run(client_cmd(fabric, hosts, args, global_args, guard),
                       capture_output=True, text=True, timeout=4 * guard)
    return client_done(p.returncode, p.stdout, p.stderr)


class Client:
    """peers_client in the background, talked to on stdin and stdout."""

    def __init__(self, fabric, hosts, args):
        self.proc = subprocess.Popen(client_cmd(fabric, hosts, args),
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []

    def wait_line(self, prefix):
        """Read its output up to a line starting with prefix (or the end)."""
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith(prefix):
                return line
        return None

    def tell(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self):
        out, err = self.proc.communicate(timeout=4 * HANG_S)
        return client_done(self.proc.returncode, "".join(self.lines) + out,
                           err)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def value(out, key):
    m = re.search(r"^%s: (.*)$" % re.escape(key), out, re.M)
    return m.group(1) if m else None


def sent(out, phase):
    """Requests peers_client sent in a phase ("arp: 50/50 in 0.1 s, 52
    sent"), or -1."""
    m = re.search(r", (\d+) sent$", value(out, phase) or "")
    return int(m.group(1)) if m else -1


def cleanup(fabric, procs):
    for p in procs:
        p.kill()
    for name in shm_objects(fabric):
        try:
            os.unlink("/dev/shm/" + name)
        except OSError:
            pass


# ---- tests ------------------------------------------------------------------

def test_options():
    """Bad options and values: status 2 and a message naming the option."""
    out = subprocess.run([PEERS, "--help"], capture_output=True, text=True)
    check(out.returncode == 0, "--help exits 0")
    for opt in ["--fabric", "--hosts", "--guid-base", "--ipv4",
                "--ipv6-prefix", "--pkey", "--ib-mtu", "--mtu", "--accept",
                "--connect", "--personality", "--idle-after",
                "--die-after", "--duration", "--report-interval", "--json",
                "--quiet"]:
        check(opt in out.stdout, "usage documents " + opt)
    bad = [
        (["--hosts", "0"], "--hosts"),
        (["--hosts", "10001"], "--hosts"),
        (["--hosts", "12x"], "--hosts"),
        (["--hosts", "-1"], "--hosts"),
        (["--hosts"], "--hosts"),
        (["--fabric", "a/b"], "--fabric"),
        (["--fabric", "x" * 32], "--fabric"),
        (["--guid-base", "0"], "--guid-base"),
        (["--guid-base", "xyz"], "--guid-base"),
        (["--guid-base", "0xffffffffffffffff", "--hosts", "2"],
         "--guid-base"),
        (["--ipv4", "10.0.0.256"], "--ipv4"),
        (["--ipv4", "223.255.255.255", "--hosts", "2"], "--ipv4"),
        (["--ipv6-prefix", "fd00::"], "--ipv6-prefix"),
        (["--ipv6-prefix", "fd00::/97"], "--ipv6-prefix"),
        (["--ipv6-prefix", "ff02::/64"], "--ipv6-prefix"),
        (["--personality", "solaris"], "--personality"),
        (["--personality"], "--personality"),
        (["--pkey", "0"], "--pkey"),
        (["--pkey", "0x10000"], "--pkey"),
        (["--ib-mtu", "1500"], "--ib-mtu"),
        (["--mtu", "65521"], "--mtu"),
        (["--mtu", "67"], "--mtu"),
        (["--accept", "some"], "--accept"),
        (["--accept", "limit:"], "--accept"),
        (["--accept", "limit:x"], "--accept"),
        (["--accept", "limit:65537"], "--accept"),
        (["--idle-after", "0"], "--idle-after"),
        (["--die-after", "-1"], "--die-after"),
        (["--duration", "inf"], "--duration"),
        (["--duration", "1e7"], "--duration"),
        (["--report-interval", "x"], "--report-interval"),
        (["--connect=yes"], "--connect"),
        (["--no-such-option"], "--no-such-option"),
        (["stray"], "stray"),
    ]
    for args, name in bad:
        p = subprocess.run([PEERS] + args, capture_output=True, text=True,
                           timeout=HANG_S)
        check(p.returncode == 2 and name in p.stderr and
              p.stdout == "",
              "%s: exit 2 naming %s (%d: %s)" % (" ".join(args), name,
                                                 p.returncode,
                                                 p.stderr.strip()))
    p = subprocess.run([PEERS, "--accept", "bogus"], capture_output=True,
                       text=True)
    check("all, none, ud or limit:N" in p.stderr,
          "the message lists the accepted values")


def test_probe():
    """50 hosts answer ARP, ICMP, UDP, ICMPv6, UDPv6, NS and fragments."""
    fabric = fabric_name("probe")
    base = "0x0002c9fe00400000"
    emu = Emulator(fabric, ["--hosts", "50", "--guid-base", base,
                            "--ipv4", "10.1.0.10", "--ipv6-prefix",
                            "fd12:3456::/64", "--report-interval", "0.2"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        check(len(shm_objects(fabric)) >= 2, "fabric objects exist")
        rc, out = client(fabric, 50, ["probe", "--flags", "0x80"],
                         global_args=["--ipv4", "10.1.0.10", "--ipv6-prefix",
                                      "fd12:3456::/64", "--guid-base", base,
                                      "--client-ip", "10.1.1.1"])
        check(rc == 0, "client: every reply checked")
        for k in ["arp", "ping", "udp", "ping6", "udp6", "nd"]:
            check((value(out, k) or "").startswith("50/50"),
                  "%s: all 50 hosts answered" % k)
        check((value(out, "frag") or "").startswith("1/1"),
              "a fragmented echo comes back whole")
        check(value(out, "nd_mcast") == "1",
              "an NS to a solicited-node group is answered")
        # a reporting interval prints the table more than once
        deadline = time.monotonic() + HANG_S
        while emu.out.count(b"--- ") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)    # polling the output, with a deadline
        check(emu.out.count(b"--- ") >= 2, "--report-interval prints")
        status = emu.stop()
        check(status == 0, "SIGINT: exit 0 (%s)" % status)
        check(b"total 50" in emu.out, "the final table has a totals line")
        res = emu.results()
        t = res["totals"]
        check(len(res["hosts"]) == 50, "JSON: 50 hosts")
        # each host answered, and never more than was asked (a reply slow
        # to come makes the client ask again, and move on at the first)
        arp, nd, ping, udp, ping6, udp6, frag = (
            sent(out, k) for k in ("arp", "nd", "ping", "udp", "ping6",
                                   "udp6", "frag"))
        nd += int(value(out, "nd_mcast_sent") or 0)
        check(50 <= t["arp_answered"] <= arp and
              51 <= t["nd_answered"] <= nd,
              "JSON: ARP and ND answers %d, %d, for 50 and 51 hosts asked "
              "%d and %d times" % (t["arp_answered"], t["nd_answered"], arp,
                                   nd))
        check(101 <= t["echo_replies"] <= ping + ping6 + frag and
              100 <= t["udp_echoed"] <= udp + udp6,
              "JSON: %d echo replies, %d UDP echoes, for 101 and 100 "
              "requests sent %d and %d times" %
              (t["echo_replies"], t["udp_echoed"], ping + ping6 + frag,
               udp + udp6))
        check(t["rc_rx"] == 0 and t["rc_tx"] == 0 and t["dropped"] == 0,
              "JSON: no RC traffic, nothing dropped")
        h0 = res["hosts"][0]
        check(h0["ipv4"] == "10.1.0.10" and
              h0["ipv6"] == "fd12:3456::a01:a" and
              h0["gid"].endswith("0002:c9fe:0040:0000") and
              h0["flags"] == 128, "JSON: host 0's addresses")
        check(res["hosts"][49]["ipv4"] == "10.1.0.59", "JSON: host 49")
        check(res["process"]["solicited_groups"] == 46,
              "46 solicited-node groups joined")
        check(shm_objects(fabric) == [],
              "clean exit: the fabric's objects are gone")
    finally:
        cleanup(fabric, [emu])


def test_rc():
    """--accept all/limit/none/ud, REP data, and --connect."""
    fabric = fabric_name("rc")
    emu = Emulator(fabric, ["--hosts", "8", "--accept", "limit:2"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        rc, out = client(fabric, 8, ["rc", "--host", "5", "--accept", "2",
                                     "--reason", "1", "--big", "--mtu",
                                     "65524", "--reconnect"],
                         global_args=["--ports", "3"])
        check(rc == 0, "limit:2: 2 REPs, REJ reason 1, a slot frees on "
              "DREQ; echoes on UD, 60000 bytes in fragments")
        check(value(out, "rc") == "accepted 2 rejected 1",
              "limit:2 with 3 requesters")
        check(value(out, "reconnect") == "accepted", "reconnect accepted")
        # the client is gone: its connections end (QP_FATAL) at the host
        emu.stop()
        h = emu.results()["hosts"][5]
        check(h["conn_accepted"] == 3 and h["conn_rejected"] == 1 and
              h["rc_rx"] >= 2, "JSON: 3 accepted, 1 rejected, RC received")
    finally:
        cleanup(fabric, [emu])

    for mode, reason in [("none", 28), ("ud", 8)]:
        fabric = fabric_name("rc" + mode)
        emu = Emulator(fabric, ["--hosts", "4", "--accept", mode])
        try:
            if not check(emu.ready is not None, "emulator ready"):
                continue
            rc, out = client(fabric, 4, ["rc", "--host", "2", "--accept",
                                         "0", "--reason", str(reason)])
            check(rc == 0 and value(out, "rc") == "accepted 0 rejected 1",
                  "--accept %s: REJ reason %d" % (mode, reason))
            rc, out = client(fabric, 4, ["probe", "--arp-only", "--flags",
                                         "0" if mode == "ud" else "0x80"])
            check(rc == 0, "--accept %s: hwaddr flags %s" %
                  (mode, "0" if mode == "ud" else "0x80"))
        finally:
            cleanup(fabric, [emu])

    fabric = fabric_name("rcconn")
    emu = Emulator(fabric, ["--hosts", "4", "--connect", "--mtu", "9000"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        rc, out = client(fabric, 4, ["rc", "--host", "3", "--accept", "1",
                                     "--mtu", "9004", "--rc-reply"])
        check(rc == 0, "--connect: REP advertises MTU 9004; the host "
              "connects back and replies on its own connection")
        emu.stop()
        h = emu.results()["hosts"][3]
        check(h["active_established"] >= 1 and h["rc_tx"] >= 1,
              "JSON: an active connection carried replies")
    finally:
        cleanup(fabric, [emu])

    fabric = fabric_name("rcbig")
    emu = Emulator(fabric, ["--hosts", "2", "--connect"])
    try:
        if check(emu.ready is not None, "emulator ready"):
            rc, out = client(fabric, 2, ["rc", "--host", "1", "--big",
                                         "--rc-reply"])
            check(rc == 0, "--connect: a 60000-byte echo comes back on RC")
    finally:
        cleanup(fabric, [emu])


def intervals(out):
    reqs = [float(x) for x in (value(out, "reqs") or "").split()]
    return reqs, [b - a for a, b in zip(reqs, reqs[1:])]


def test_backoff():
    """REJ or timeout: replies stay on UD, retries back off 100 ms .. 5 s."""
    fabric = fabric_name("backoff")
    emu = Emulator(fabric, ["--hosts", "3", "--connect"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        # the 6th REQ: the 5th refusal was taken and waited out
        rc, out = client(fabric, 3, ["backoff", "--host", "1", "--seconds",
                                     str(HANG_S), "--reqs", "6", "--reason",
                                     "28"])
        check(rc == 0, "refused: every echo answered on UD")
        m = re.search(r"pings (\d+) replies ud (\d+) rc 0",
                      value(out, "backoff") or "")
        check(m is not None and int(m.group(2)) >= int(m.group(1)) - 2,
              "replies on UD while refused")
        reqs, gaps = intervals(out)
        print("    REQ intervals (figures): " +
              " ".join("%.3f" % g for g in gaps))
        check(len(reqs) >= 6, "the host retried (%d REQs)" % len(reqs))
        # each retry waits its backoff at least (a slow machine: longer)
        for i, g in enumerate(gaps[:5]):
            want = 0.1 * 2 ** i
            check(g >= want * 0.95,
                  "retry %d after %.3f s (backoff %.1f s)" % (i + 1, g, want))
        # an unanswered REQ: 15 CM retries of 100 ms, then the backoff
        rc, out = client(fabric, 3, ["backoff", "--host", "2", "--seconds",
                                     str(HANG_S), "--reqs", "2", "--reason",
                                     "0"])
        reqs, gaps = intervals(out)
        check(rc == 0 and len(gaps) >= 1 and gaps[0] >= 1.6,
              "after a REQ timeout the host retries (%s)" % gaps)
        emu.stop()
        hosts = emu.results()["hosts"]
        failed = hosts[1]["active_failed"]
        check(failed >= 5 and hosts[1]["active_established"] == 0,
              "JSON: refused connections counted (%d)" % failed)
        # the backoff it chose after the last refusal: doubled each time
        check(hosts[1]["backoff_ms"] == min(100 << (failed - 1), 5000),
              "JSON: backoff %d ms after %d refusals: 100 ms doubling, "
              "5 s at most" % (hosts[1]["backoff_ms"], failed))
        check(hosts[2]["active_failed"] >= 1 and
              hosts[2]["backoff_ms"] == min(
                  100 << (hosts[2]["active_failed"] - 1), 5000),
              "JSON: a timed-out REQ backs off as a refused one")
    finally:
        cleanup(fabric, [emu])


def test_idle():
    """Idle (SIGUSR1 or --idle-after): no reply; --duration: clean exit."""
    fabric = fabric_name("idle")
    # its table every 0.1 s tells when the requests were dropped
    emu = Emulator(fabric, ["--hosts", "2", "--report-interval", "0.1"])
    cl = None
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        cl = Client(fabric, 2, ["idle", "--host", "1", "--seconds", "1"])
        check(cl.wait_line("idle: answered") is not None,
              "the host answers pings")
        emu.proc.send_signal(signal.SIGUSR1)
        check(emu.wait_out(rb"^idle: .*$") is not None,
              "SIGUSR1: the emulator says it went idle")
        cl.tell("idle")
        rc, out = cl.finish()
        m = re.search(r"^idle: pings (\d+) replies (\d+)$", out, re.M)
        check(rc == 0 and m is not None and int(m.group(1)) > 0 and
              int(m.group(2)) == 0, "no reply once idle (%s)" %
              (m.group(0) if m else None))
        check(emu.wait_out(rb"[1-9][0-9]* dropped\)$") is not None,
              "the idle host dropped the pings")
        status = emu.stop()
        check(status == 0, "SIGINT: exit 0 (%s)" % status)
        res = emu.results()
        check(res["process"]["idle"] and res["hosts"][1]["dropped"] > 0,
              "JSON: idle, the requests dropped")
    finally:
        if cl is not None:
            cl.kill()
        cleanup(fabric, [emu])

    # the timers: idle after 0.2 s, the end after 1 s; quiet
    fabric = fabric_name("idlet")
    emu = Emulator(fabric, ["--hosts", "1", "--idle-after", "0.2",
                            "--duration", "1", "--quiet"], ready_timeout=0)
    try:
        status = emu.wait(HANG_S)
        check(status == 0, "--duration: exit 0 by itself (%s)" % status)
        check(emu.out == b"", "--quiet: no table")
        check(emu.results()["process"]["idle"],
              "JSON: --idle-after made it idle")
    finally:
        cleanup(fabric, [emu])


def test_die():
    """Dying (SIGUSR2 or --die-after): exit 9; peers see QP_FATAL, the
    janitor reclaims."""
    fabric = fabric_name("die")
    emu = Emulator(fabric, ["--hosts", "4"])
    cl = None
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        mine = [o for o in shm_objects(fabric) if o != "ipoibcm." + fabric]
        check(len(mine) >= 1, "the emulator's arena: %s" % " ".join(mine))
        cl = Client(fabric, 4, ["hold", "--host", "3", "--seconds",
                                str(HANG_S)])
        check(cl.wait_line("hold: connected") is not None,
              "the client connected to host 3")
        emu.proc.send_signal(signal.SIGUSR2)
        status = emu.wait(HANG_S)
        check(status == 9, "SIGUSR2: exit status 9 (%s)" % status)
        rc, out = cl.finish()
        m = re.search(r"^hold: fatal_at ([-.\d]+) gone_at ([-.\d]+)$", out,
                      re.M)
        check(rc == 0 and m is not None and float(m.group(1)) >= 0 and
              float(m.group(2)) >= 0,
              "the client's connection failed and the host's port went")
        left = (value(out, "objects") or "").split()
        check(not set(mine) & set(left),
              "the janitor removed the emulator's objects (left: %s)" %
              " ".join(left))
        check(not os.path.exists(emu.json), "a crash writes no JSON")
    finally:
        if cl is not None:
            cl.kill()
        cleanup(fabric, [emu])

    fabric = fabric_name("diet")
    emu = Emulator(fabric, ["--hosts", "1", "--die-after", "0.2"])
    try:
        status = emu.wait(HANG_S)
        check(status == 9, "--die-after: exit status 9 by itself (%s)" %
              status)
        check(not os.path.exists(emu.json), "a crash writes no JSON")
    finally:
        cleanup(fabric, [emu])


def test_scale():
    """10,000 hosts: all up, all ARP-reachable; idle, the emulator naps.
    Start time, idle CPU share and RSS are printed, not judged."""
    fabric = fabric_name("scale")
    # 10,000 hosts take minutes to start and answer in a sanitized build
    # on a loaded machine
    guard = 5 * HANG_S
    t0 = time.monotonic()
    emu = Emulator(fabric, ["--hosts", "10000"], ready_timeout=guard)
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        m = re.search(r"in ([.\d]+) s", emu.ready)
        print("    start %s s (%.3f s seen from here), RSS %d KiB" %
              (m.group(1) if m else "?", time.monotonic() - t0,
               emu.status("VmRSS")))
        # idle: it naps between turns (it sleeps: voluntary switches)
        naps0 = emu.status("voluntary_ctxt_switches")
        cpu0, w0 = emu.cpu_seconds(), time.monotonic()
        time.sleep(3)       # a measurement window, not a synchronisation
        cpu = (emu.cpu_seconds() - cpu0) / (time.monotonic() - w0)
        naps = emu.status("voluntary_ctxt_switches") - naps0
        print("    idle CPU %.1f%% of one core, %d naps in 3 s (figures)" %
              (cpu * 100, naps))
        check(naps > 0, "idle: the emulator sleeps between its turns")
        rc, out = client(fabric, 10000, ["probe", "--arp-only", "--window",
                                         "2", "--flags", "0x80"],
                         guard=guard)
        check(rc == 0 and (value(out, "arp") or "").startswith(
            "10000/10000"), "all 10,000 hosts answer ARP")
        print("    RSS after the ARP storm %d KiB" % emu.status("VmRSS"))
        status = emu.stop()
        check(status == 0, "SIGINT: exit 0 (%s)" % status)
        t = emu.results()["totals"]
        check(t["arp_answered"] >= 10000, "JSON: %d ARP answers" %
              t["arp_answered"])
        check(shm_objects(fabric) == [], "clean exit: no objects left")
    finally:
        cleanup(fabric, [emu])


SID_OFED = 0x1000000000000000
SID_RFC = 0x0100000000000000


def reqs_seen(out):
    """The REQs peers_client received: [(service ID, retry, rnr, mtu)]."""
    return [(int(m.group(1), 16), int(m.group(2)), int(m.group(3)),
             int(m.group(4)))
            for m in re.finditer(r"^req: sid (0x[0-9a-f]+) retry (\d+) "
                                 r"rnr (\d+) mtu (\d+)$", out, re.M)]


def persona_linux():
    """--personality linux: the wire behaviour of Linux ipoib."""
    fabric = fabric_name("linux")
    emu = Emulator(fabric, ["--hosts", "2", "--personality", "linux"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        # OFED ID: REP echoes our REQ's rnr_retry, advertises 65524; the
        # host connects back (REQ retry 0, rnr 0, 65524) to reply on RC
        rc, out = client(fabric, 2, ["rc", "--host", "0", "--accept", "1",
                                     "--mtu", "65524", "--rc-reply"],
                         global_args=["--req-rnr", "5"])
        check(rc == 0, "linux: REQ on the OFED ID accepted, reply on RC")
        check(value(out, "rep") == "rnr 5 mtu 65524",
              "linux: REP echoes rnr_retry 5 and advertises 65524")
        reqs = reqs_seen(out)
        check(len(reqs) == 1 and reqs[0][0] >> 32 == SID_OFED >> 32 and
              reqs[0][1:] == (0, 0, 65524),
              "linux: REQ to the OFED ID, retry 0, rnr_retry 0, 65524")
        check(value(out, "ud") == "grh 0 nogrh 1",
              "linux: its unicast UD (the ARP reply) has no GRH")
        # the RFC 4755 ID: nobody listens, ib_cm answers REJ 8
        rc, out = client(fabric, 2, ["rc", "--host", "1", "--accept", "0",
                                     "--reason", "8"],
                         global_args=["--sid", "rfc"])
        check(rc == 0, "linux: REQ on the RFC 4755 ID gets REJ 8")
        # 10 packets while connecting: 3 held and sent on RC once up
        rc, out = client(fabric, 2, ["queue", "--host", "1", "--count",
                                     "10", "--reqs", "3"])
        check(rc == 0 and value(out, "queue") ==
              "pings 10 replies ud 0 rc 3",
              "linux: 3 replies held while connecting, 7 dropped")
        emu.stop()
        h = emu.results()["hosts"][1]
        check(h["cm_queued"] == 3 and h["cm_queue_drops"] == 7,
              "JSON: 3 held and sent, 7 dropped")
    finally:
        cleanup(fabric, [emu])

    # refused: drop, and try again with the next packet, never UD
    fabric = fabric_name("linuxrej")
    emu = Emulator(fabric, ["--hosts", "1", "--personality", "linux"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        # --count 0: it sends no reply, so wait for none; a reply it
        # sent anyway is still seen, here or in its ud_tx below
        rc, out = client(fabric, 1, ["backoff", "--host", "0", "--seconds",
                                     "1", "--reason", "28", "--count", "0"])
        m = re.match(r"pings (\d+) replies ud (\d+) rc (\d+)",
                     value(out, "backoff") or "")
        check(rc == 0 and m is not None and int(m.group(2)) == 0 and
              int(m.group(3)) == 0, "linux: no reply on UD to a peer "
              "that refuses its connection")
        emu.stop()
        h = emu.results()["hosts"][0]
        reqs = len(reqs_seen(out))
        say("  REQs seen %d; host: active_failed %d cm_queue_drops %d "
            "cm_queued %d ud_tx %d rc_tx %d" %
            (reqs, h["active_failed"], h["cm_queue_drops"],
             h["cm_queued"], h["ud_tx"], h["rc_tx"]))
        # each REJ ended an attempt; the next reply started the next one
        check(reqs >= 3 and h["active_failed"] >= 3,
              "linux: REQ after REQ, each refused")
        # what each attempt held was dropped: nothing on RC, nor on UD
        # but the ARP reply
        check(h["cm_queue_drops"] >= h["active_failed"] and
              h["cm_queued"] == 0 and h["rc_tx"] == 0 and h["ud_tx"] == 1,
              "JSON: every reply dropped, only the ARP reply on UD")
    finally:
        cleanup(fabric, [emu])


def persona_illumos():
    """--personality illumos: the wire behaviour of illumos ibd."""
    fabric = fabric_name("illumos")
    emu = Emulator(fabric, ["--hosts", "2", "--personality", "illumos"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        for sid in ["ofed", "rfc"]:
            rc, out = client(fabric, 2, ["rc", "--host", "0", "--accept",
                                         "1"], global_args=["--sid", sid])
            check(rc == 0, "illumos: listens on the %s service ID" % sid)
        # its connect sequence: OFED, OFED again, then RFC 4755
        rc, out = client(fabric, 2, ["backoff", "--host", "1", "--seconds",
                                     "1", "--reqs", "3", "--reason", "28"])
        sids = [r[0] >> 32 for r in reqs_seen(out)][:3]
        check(rc == 0 and sids == [SID_OFED >> 32, SID_OFED >> 32,
                                   SID_RFC >> 32],
              "illumos: connects with OFED, OFED, then RFC 4755")
        # our REP says 2048; it sends 60000 bytes on RC anyway
        rc, out = client(fabric, 2, ["rc", "--host", "0", "--big",
                                     "--rc-reply"],
                         global_args=["--rep-mtu", "2048"])
        check(rc == 0, "illumos: ignores the REP's MTU, a 60000-byte "
              "reply on RC")
    finally:
        cleanup(fabric, [emu])

    # the default personality keeps to the MTU our REP advertised
    fabric = fabric_name("dflmtu")
    emu = Emulator(fabric, ["--hosts", "1", "--connect"])
    try:
        if check(emu.ready is not None, "emulator ready"):
            rc, out = client(fabric, 1, ["rc", "--host", "0", "--big"],
                             global_args=["--rep-mtu", "2048"])
            check(rc == 0, "default: 60000 bytes beyond the REP's MTU "
                  "come back on UD, in fragments")
    finally:
        cleanup(fabric, [emu])


def test_badcm():
    """Malformed REQ and REP private data: REJ 28, counted by reason; the
    host goes on serving."""
    fabric = fabric_name("badcm")
    emu = Emulator(fabric, ["--hosts", "1", "--connect"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        for args, what in [(["--req-priv-len", "4"], "short"),
                           (["--req-mtu", "0"], "MTU 0"),
                           (["--req-mtu", "65525"], "MTU 65525")]:
            rc, out = client(fabric, 1, ["rc", "--host", "0", "--accept",
                                         "0", "--reason", "28"],
                             global_args=args)
            check(rc == 0, "REQ private data %s: REJ 28" % what)
        # a REP with MTU 0 to the host's own REQ: refused, reply on UD
        rc, out = client(fabric, 1, ["rc", "--host", "0", "--accept", "1"],
                         global_args=["--rep-mtu", "0"])
        check(rc == 0, "REP MTU 0: the host refuses it and replies on UD")
        rc, out = client(fabric, 1, ["rc", "--host", "0", "--accept", "1"])
        check(rc == 0, "the host still accepts a good REQ")
        emu.stop()
        h = emu.results()["hosts"][0]
        # the REP MTU 0 may be met again if the host retried meanwhile
        check(h["cm_bad_len"] == 1 and h["cm_bad_mtu"] >= 3 and
              h["cm_bad_qpn"] == 0,
              "JSON: 1 short, 3 or more bad MTUs (2 REQs, the REPs)")
    finally:
        cleanup(fabric, [emu])


def persona_nogrh():
    """Unicast UD without a GRH (as Linux sends it) is answered too."""
    fabric = fabric_name("nogrh")
    emu = Emulator(fabric, ["--hosts", "2"])
    try:
        if not check(emu.ready is not None, "emulator ready"):
            return
        rc, out = client(fabric, 2, ["probe", "--count", "2"],
                         global_args=["--no-grh"])
        check(rc == 0, "GRH-less unicast: every host answers")
        emu.stop()
        check(emu.results()["process"]["ud_without_grh"] > 0,
              "JSON: UD without a GRH received")
    finally:
        cleanup(fabric, [emu])


def test_persona():
    persona_linux()
    persona_illumos()
    persona_nogrh()


TESTS = {
    "options": test_options,
    "probe": test_probe,
    "rc": test_rc,
    "backoff": test_backoff,
    "idle": test_idle,
    "die": test_die,
    "scale": test_scale,
    "persona": test_persona,
    "badcm": test_badcm,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        print(__doc__)
        sys.exit(2)
    for f in (PEERS, CLIENT):
        if not os.access(f, os.X_OK):
            print("missing " + f)
            sys.exit(1)
    TESTS[sys.argv[1]]()
    done()


if __name__ == "__main__":
    main()
