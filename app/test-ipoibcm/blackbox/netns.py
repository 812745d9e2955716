# SPDX-License-Identifier: BSD-3-Clause
"""The Linux kernel's IP stack as a client of the port.

A KernelHost is a network namespace the test creates, in which a stock
dpdk-testpmd forwards (io) between a net_tap port, whose kernel side is
the namespace's interface, and a net_ipoibcm port on a fabric: the
kernel's frames go over the fabric and back. The net_ipoibcm port takes
the tap interface's MAC (rte_eth_dev_default_mac_addr_set: the port's own
MAC is local to it), so the kernel receives what is addressed to it.

Namespaces and what runs in them are removed on every exit path: normal
end, exception, SIGTERM (meson's timeout) or SIGINT. Traffic stays
between the namespaces the test made: no other address is a target.
"""

import atexit
import json
import os
import signal
import subprocess
import time

from ipoibtest import ENV
from testpmd import TestPmd

TAP = "dtap0"		# the interface, in its own namespace
_live = []
# Sanitizer builds (the runtime preloaded into the stock tools) forward
# many times slower: the bounds that only catch a hang grow with them.
SANITIZED = "LD_PRELOAD" in ENV


def patience(seconds):
    """A bound that catches a hang, in this build's time."""
    return seconds * (8 if SANITIZED else 1)


def _cleanup():
    for ns in list(_live):
        ns.delete()


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)


atexit.register(_cleanup)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGHUP, _on_signal)


class Netns:
    """A network namespace of this test, named after it and its pid."""

    def __init__(self, tag):
        self.name = "ipcl_%s_%d" % (tag, os.getpid())
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        _live.append(self)
        self.run(["ip", "link", "set", "lo", "up"])

    def cmd(self, args=()):
        return ["ip", "netns", "exec", self.name] + list(args)

    def run(self, args, check=True, timeout=120, quiet=False):
        """Run a command in the namespace; its output is printed."""
        if not quiet:
            print("  [%s] $ %s" % (self.name, " ".join(args)), flush=True)
        p = subprocess.run(self.cmd(args), capture_output=True, text=True,
                           timeout=timeout)
        if not quiet and (p.stdout.strip() or p.stderr.strip()):
            print("    " + (p.stdout + p.stderr).strip().replace(
                "\n", "\n    "), flush=True)
        if check and p.returncode != 0:
            raise RuntimeError("%s: %s exited %d" % (self.name, args[0],
                                                     p.returncode))
        return p

    def popen(self, args, **kw):
        print("  [%s] $ %s &" % (self.name, " ".join(args)), flush=True)
        return subprocess.Popen(self.cmd(args), **kw)

    def delete(self):
        """End what still runs in the namespace (ours), then remove it."""
        if self not in _live:
            return
        _live.remove(self)
        pids = subprocess.run(["ip", "netns", "pids", self.name],
                              capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", self.name])


def netns_left():
    """Namespaces of this process still there (must be none at the end)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True,
                         text=True).stdout
    return [l.split()[0] for l in out.splitlines()
            if l.split() and l.split()[0].endswith("_%d" % os.getpid())]


class KernelHost:
    """A kernel in a namespace, bridged by testpmd to an ipoibcm port."""

    def __init__(self, tag, fabric, guid, srq, ipv4, ipv6, main_lcore=0,
                 fwd="io", pmd_args=(), devargs=""):
        """devargs: more of the ipoibcm port's, ",key=value..."."""
        self.tag = tag
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ns = Netns(tag)
        vdevs = ["net_tap0,iface=" + TAP,
                 "net_ipoibcm0,fabric=%s,guid=%s,srq=%s%s" %
                 (fabric, guid, srq, devargs)]
        self.pmd = TestPmd("kh_" + tag, vdevs, list(pmd_args),
                           main_lcore=main_lcore, wrap=self.ns.cmd(),
                           start_timeout=patience(60))
        info = self.pmd.cmd("show port info 1")
        if "net_ipoibcm0" not in info:
            raise RuntimeError("port 1 is not the ipoibcm port:\n" + info)
        self.mac = self.link()["address"]
        out = self.pmd.cmd("mac_addr set 1 %s" % self.mac)
        if "rror" in out or "ailed" in out:
            raise RuntimeError("mac_addr set: " + out)
        self.pmd.cmd("set fwd " + fwd)
        if fwd == "csum":	# a bridge keeps the MACs it forwards
            for port in (0, 1):
                self.pmd.cmd("csum mac-swap off %d" % port)
        self.pmd.cmd("start")

    def link(self):
        out = self.ns.run(["ip", "-j", "link", "show", TAP], quiet=True)
        return json.loads(out.stdout)[0]

    def up(self):
        """Addresses on the tap interface: the kernel speaks from now."""
        self.ns.run(["ip", "link", "set", TAP, "up"])
        self.ns.run(["ip", "addr", "add", self.ipv4 + "/24", "dev", TAP])
        self.ns.run(["ip", "-6", "addr", "add", self.ipv6 + "/64", "dev",
                     TAP])

    def wait_dad(self, timeout=patience(30)):
        """IPv6 duplicate address detection over: the address is usable."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.ns.run(["ip", "-6", "-j", "addr", "show", "dev", TAP],
                              quiet=True).stdout
            addrs = [a for i in json.loads(out) for a in i["addr_info"]]
            mine = [a for a in addrs if a["local"] == self.ipv6]
            if mine and not mine[0].get("tentative") and \
                    not any(a.get("tentative") for a in addrs):
                return not mine[0].get("dadfailed")
            time.sleep(0.1)	# the kernel's DAD timer, not ours
        return False

    def xstats(self):
        return self.pmd.xstats(1)

    def close(self):
        rc = self.pmd.quit(timeout=patience(60))
        self.ns.delete()
        return rc


def ping(host, dst, *opts):
    """5 pings from host's kernel to dst, all answered."""
    p = host.ns.run(["ping", "-c", "5", "-W", str(patience(5))] +
                    list(opts) + [dst], check=False, timeout=patience(120))
    return p.returncode == 0 and " 5 received" in p.stdout


def wait_listen(host, port, proto="t", timeout=patience(30)):
    """The server's socket is bound: ss polled until it is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = host.ns.run(["ss", "-H", "-ln" + proto,
                           "sport = :%d" % port], quiet=True).stdout
        if out.strip():
            return True
    return False


def finish(hosts, fabric, check):
    """Every host's testpmd quits cleanly; no namespace, no fabric left."""
    for h in hosts:
        check(h.close() == 0, "%s's testpmd exits cleanly" % h.tag)
    check(not netns_left(), "no namespace left")
    leftover = [f for f in os.listdir("/dev/shm") if fabric in f]
    check(not leftover, "no fabric objects left: %s" % leftover)
