# SPDX-License-Identifier: BSD-3-Clause
"""Drive stock dpdk-testpmd interactively: one object per process (host)."""

import os
import pty
import re
import select
import subprocess
import termios
import time

from ipoibtest import EAL, ENV, HANG_S, TESTPMD, plugin

PROMPT = "testpmd> "
# What other threads print at any time: testpmd's report of an event (from
# the thread that raised it) and the driver's log lines ("function(): ...",
# its functions are ipoib_* and shm_*).
ASYNC = re.compile(r"\nPort \d+: [A-Za-z ]+ event\n|"
                   r"(?:ipoib|shm)_\w*\(\): [^\n]*\n")


class TestPmd:
    """A dpdk-testpmd process in interactive mode, fed commands on stdin."""

    def __init__(self, name, vdevs, args=(), main_lcore=0, mbufs=16384,
                 wrap=(), eal=EAL, prefix=None, start_timeout=HANG_S):
        """Lcores 0 and 1; the forwarding one is the one not main.

        wrap runs it inside another command (ip netns exec NS); eal
        replaces the memory options (hugepages for secondaries); prefix
        is the EAL file prefix (a secondary gives its primary's);
        start_timeout bounds the start (a secondary maps the primary's
        memory: long under ThreadSanitizer).
        """
        self.name = name
        self.prefix = prefix or "%s_%d" % (name, os.getpid())
        cmd = list(wrap) + \
            [TESTPMD, "-l", "0,1", "--main-lcore", str(main_lcore)] + \
            list(eal) + ["--file-prefix=" + self.prefix, "-d", plugin()]
        cmd += ["--vdev=" + v for v in vdevs]
        cmd += ["--", "-i", "--total-num-mbufs=%d" % mbufs] + list(args)
        print("  [%s] $ %s" % (name, " ".join(cmd)), flush=True)
        self.log = []
        self.pending = ""	# read past the last prompt
        # a terminal, so that testpmd's stdout is line buffered
        self.master, slave = pty.openpty()
        attr = termios.tcgetattr(slave)
        attr[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attr)
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=slave,
                                  stderr=slave, env=ENV)
        os.close(slave)
        try:
            self.out = self._until_prompt(start_timeout)
        except (TimeoutError, RuntimeError):
            self.kill()	# no process is left behind a failed start
            raise

    def _read(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return ""
        try:
            return os.read(self.master, 65536).decode(errors="replace")
        except OSError:		# the other side closed
            return None

    def _until_prompt(self, timeout):
        """Output up to the next prompt; what follows it is kept.

        testpmd prints events (link changes, resets) and the driver logs
        whenever they happen, from other threads, so the prompt is not
        always the last thing read, and as cmdline writes the prompt a
        character at a time, such lines can even land inside it: they are
        taken out before looking for the prompt, and kept in the log.
        """
        buf = self.pending
        deadline = time.monotonic() + timeout
        while PROMPT not in ASYNC.sub("", buf):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: no prompt; output so far:\n%s" %
                                   (self.name, buf[-3000:]))
            data = self._read(left)
            if data is None or (data == "" and self.p.poll() is not None):
                raise RuntimeError("%s exited (%s):\n%s" %
                                   (self.name, self.p.poll(), buf[-3000:]))
            buf += data.replace("\r\n", "\n")
        out, self.pending = ASYNC.sub("", buf).split(PROMPT, 1)
        self.log.append(out + "".join(ASYNC.findall(buf)))
        return out

    def cmd(self, line, timeout=HANG_S):
        """Run one command; return what it printed."""
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        return self._until_prompt(timeout)

    def mac(self, port=0):
        out = self.cmd("show port info %d" % port)
        return re.search(r"MAC address: ([0-9A-F:]{17})", out).group(1)

    def stats(self, port=0):
        out = self.cmd("show port stats %d" % port)
        rx = re.search(r"RX-packets:\s+(\d+)", out)
        tx = re.search(r"TX-packets:\s+(\d+)", out)
        rxb = re.search(r"RX-bytes:\s+(\d+)", out)
        return {"rx": int(rx.group(1)), "tx": int(tx.group(1)),
                "rx_bytes": int(rxb.group(1))}

    def xstats(self, port=0):
        out = self.cmd("show port xstats %d" % port)
        return {k: int(v) for k, v in
                re.findall(r"^(\w+):\s+(\d+)\s*$", out, re.M)}

    def wait_xstat(self, name, value, timeout=HANG_S, port=0,
                   at_least=False):
        """Poll until xstat name equals value (or, at_least, reaches it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = self.xstats(port).get(name)
            if v == value or (at_least and v is not None and v >= value):
                return True
        return False

    def rx_pending(self, port=0, queue=0):
        """Frames received on a queue and not yet taken by a burst."""
        out = self.cmd("show port %d rxq %d desc used count" % (port, queue))
        # 22.11: "Used desc count = N"; 24.11: "RxQ 0 used desc count = N"
        m = re.search(r"used desc count = (\d+)", out, re.I)
        if m is None:
            raise RuntimeError("%s: no rx queue count: %s" % (self.name, out))
        return int(m.group(1))

    def settle_rx(self, timeout=HANG_S, port=0):
        """Wait until every frame received is counted; return the stats.

        Meant for when every sender has stopped: on the shm fabric a sent
        frame is in the receiver's CQ when the send returns, and the
        driver's rx_queue_count says how many wait there. Once none waits
        and two reads of the counters agree, the forwarding lcore has
        counted them all (single-queue ports, as the tests use).
        """
        last = None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pending = self.rx_pending(port)
            s = self.stats(port)
            if pending == 0 and last is not None and s["rx"] == last["rx"]:
                return s
            last = s
        return last

    def quit(self, timeout=HANG_S):
        try:
            self.p.stdin.write(b"quit\n")
            self.p.stdin.flush()
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        while True:
            data = self._read(0.1)
            if not data:
                break
            self.log.append(data)
        os.close(self.master)
        if self.p.returncode != 0:	# say why: a sanitizer's report, a crash
            print("  [%s] exited %d; its last output:\n%s" %
                  (self.name, self.p.returncode,
                   "".join(self.log)[-4000:]), flush=True)
        return self.p.returncode

    def kill(self):
        self.p.kill()
        self.p.wait()
        os.close(self.master)


def wait_stat(t, key, more_than, timeout=HANG_S):
    """Poll t's port stats until stats[key] > more_than; the last stats."""
    deadline = time.monotonic() + timeout
    s = t.stats()
    while s[key] <= more_than and time.monotonic() < deadline:
        s = t.stats()
    return s


def bounce(a, b, a_mac, run_s, settle_s, min_tx=0):
    """mac forwarding on both sides: frames bounce between the hosts.

    b sends back to a_mac (a's own peer is set by the caller). After
    run_s, and once a has sent more than min_tx frames (frames came back
    and went out again), one side at a time stops forwarding and only
    receives, so what was in flight lands; returns both hosts' stats once
    each one's rx equals the other's tx, or after settle_s.
    """
    b.cmd("set eth-peer 0 %s" % a_mac)
    for t in (a, b):
        t.cmd("set fwd mac")
        t.cmd("set txpkts 1500")
        t.cmd("clear port stats 0")
    b.cmd("start")
    a.cmd("start tx_first 4")
    time.sleep(run_s)	# frames bounce for a while
    wait_stat(a, "tx", min_tx)
    for t in (a, b):
        t.cmd("stop")
        t.cmd("set fwd rxonly")
        t.cmd("start")
    sa, sb = a.stats(), b.stats()
    deadline = time.monotonic() + settle_s
    while (sa["rx"] != sb["tx"] or sb["rx"] != sa["tx"]) and \
            time.monotonic() < deadline:
        sa, sb = a.stats(), b.stats()
    a.cmd("stop")
    b.cmd("stop")
    return sa, sb
