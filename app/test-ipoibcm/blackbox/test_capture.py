#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""capture=<file>: the port's traffic as pcap (LINKTYPE_IPOIB) for tshark.

Two testpmd hosts exchange frames over UD (before connecting) and RC
(after); A's capture must open in tshark with every frame decoded as IPoIB
carrying IPv4/UDP, none malformed, and both directions present (of the
first READ frames: the capture grows with the machine's speed).
"""

import os
import subprocess
import tempfile
import time

from ipoibtest import check, done
from testpmd import TestPmd

FABRIC = "bb_cap_%d" % os.getpid()
# Frames read back: the traffic runs until "stop", so the capture's size
# follows the machine's speed; the checks need its first frames only.
READ = ["-c", "100000"]


def main():
    tmp = tempfile.mkdtemp(prefix="ipoibcm-cap-")
    pcap = os.path.join(tmp, "a.pcap")
    b = TestPmd("bbc_b", ["net_ipoibcm0,fabric=%s,guid=0xcb" % FABRIC],
                main_lcore=1)
    a = TestPmd("bbc_a", ["net_ipoibcm0,fabric=%s,guid=0xca,capture=%s" %
                          (FABRIC, pcap)], main_lcore=0)
    try:
        a.cmd("set eth-peer 0 %s" % b.mac())
        b.cmd("set eth-peer 0 %s" % a.mac())
        for t in (a, b):
            t.cmd("set fwd mac")
            t.cmd("set txpkts 200")
        b.cmd("start")
        a.cmd("start tx_first 1")
        check(a.wait_xstat("conns_tx_connected", 1), "A connected")
        time.sleep(0.2)	# some traffic over RC, not a synchronisation
        a.cmd("stop")
        b.cmd("stop")
        sent = a.stats()
    finally:
        a.quit()
        b.quit()
    frames = subprocess.run(["tshark", "-r", pcap] + READ +
                            ["-T", "fields", "-e", "frame.protocols"],
                            capture_output=True,
                            text=True)
    lines = frames.stdout.split()
    check(frames.returncode == 0, "tshark reads the capture")
    check(len(lines) >= 32, "%d frames captured" % len(lines))
    check(all(l.startswith("ipoib:ip:udp") for l in lines),
          "every frame is IPoIB/IPv4/UDP (%s)" % sorted(set(lines))[:4])
    malformed = subprocess.run(["tshark", "-r", pcap] + READ +
                               ["-Y", "_ws.malformed"],
                               capture_output=True, text=True).stdout
    check(malformed.strip() == "", "no malformed frame")
    dirs = subprocess.run(["tshark", "-r", pcap] + READ +
                          ["-T", "fields", "-e", "ipoib.grh.sqpn", "-e",
                           "ipoib.daddr.qpn"],
                          capture_output=True, text=True).stdout.split("\n")
    rx = [d for d in dirs if d.split("\t")[0]]
    tx = [d for d in dirs if "\t" in d and d.split("\t")[1]]
    check(len(rx) > 0 and len(tx) > 0,
          "sent (%d) and received (%d) frames both captured" %
          (len(tx), len(rx)))
    check(sent["tx"] > 0, "A sent %d" % sent["tx"])
    os.unlink(pcap)
    os.rmdir(tmp)
    done()


main()
