#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check, from the built plugin, that the two receive bursts are separate.

The design promises two separately compiled rx_burst functions, one for SRQ
and one for non-SRQ mode, instead of a mode test on every packet. This reads
the .so's symbol table with pyelftools and checks that ipoib_rx_burst_srq and
ipoib_rx_burst_nosrq are both functions of their own, at different
addresses, each with a body of real size, and that no third rx burst with a
mode argument exists.

usage: check-rx-symbols.py librte_net_ipoibcm.so
"""

import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

WANTED = ("ipoib_rx_burst_srq", "ipoib_rx_burst_nosrq")


def functions(path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        found = {}
        for sec in elf.iter_sections():
            if not isinstance(sec, SymbolTableSection):
                continue
            for sym in sec.iter_symbols():
                if sym["st_info"]["type"] == "STT_FUNC" and sym.name:
                    found[sym.name] = (sym["st_value"], sym["st_size"])
        return found


def main():
    syms = functions(sys.argv[1])
    bad = 0
    for name in WANTED:
        if name not in syms:
            print("FAIL %s: no such function" % name)
            bad += 1
            continue
        addr, size = syms[name]
        print("ok   %s at 0x%x, %d bytes" % (name, addr, size))
        if size < 256:
            print("FAIL %s is %d bytes: not a receive loop of its own" %
                  (name, size))
            bad += 1
    if all(n in syms for n in WANTED) and \
            syms[WANTED[0]][0] == syms[WANTED[1]][0]:
        print("FAIL both names are the same code")
        bad += 1
    # gcc splits unlikely paths into <name>.cold: parts of the same function
    others = [n for n in syms if n.startswith("ipoib_rx_burst") and
              n.split(".")[0] not in WANTED and
              n not in ("ipoib_rx_burst_stopped", "ipoib_rx_burst_mode_get")]
    if others:
        print("FAIL other receive bursts: %s" % others)
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
