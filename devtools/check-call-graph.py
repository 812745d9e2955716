#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the driver's layout from what was built: no call cycles between
files, and no source file over the line limit.

Call graph. For each object file of a static archive (the driver's, the shm
fabric's) pyelftools reads the symbol table: the global functions the file
defines, and the symbols it leaves undefined. File A calls file B when A
leaves undefined a function B defines. Calls through a function pointer
(the HCA ops table, callbacks) do not show there, nor do references to
data (the log type, the ops tables): they are not calls. Static and inline
functions stay inside their file. A cycle is a strongly connected
component of more than one file (Tarjan); every one found is printed with
the calls that close it, and fails the check. Each archive is checked on
its own: the driver calls the fabric, never the reverse, and the fabric is
built without the driver.

Line limit. Every .c and .h file under the given source directories has at
most --max-lines lines (the project's rule is "no file much over 800
lines"; the limit says how much).

usage: check-call-graph.py [--max-lines N] [--ar AR]
           [--archive LABEL lib.a ...] [--sources DIR ...]
exit status 0 when every check passed, 1 otherwise.
"""

import argparse
import io
import os
import subprocess
import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection


def members(ar, archive):
    """(member name, ELF bytes) of every object of a static archive."""
    names = subprocess.run([ar, "t", archive], check=True,
                           capture_output=True, text=True).stdout.split()
    out = []
    for name in names:
        blob = subprocess.run([ar, "p", archive, name], check=True,
                              capture_output=True).stdout
        out.append((name, blob))
    return out


def source_name(member):
    """The source file an object was compiled from, as meson names it."""
    base = os.path.basename(member)
    if base.endswith(".o"):
        base = base[:-2]
    # meson flattens sub-directories into the name: verbs/x.c -> verbs_x.c
    return base


def symbols(blob):
    """(functions defined, symbols undefined) of one object."""
    elf = ELFFile(io.BytesIO(blob))
    defined, undefined = set(), set()
    for sec in elf.iter_sections():
        if not isinstance(sec, SymbolTableSection):
            continue
        for sym in sec.iter_symbols():
            if not sym.name:
                continue
            bind = sym["st_info"]["bind"]
            if sym["st_shndx"] == "SHN_UNDEF":
                if bind in ("STB_GLOBAL", "STB_WEAK"):
                    undefined.add(sym.name)
            elif bind in ("STB_GLOBAL", "STB_WEAK") and \
                    sym["st_info"]["type"] == "STT_FUNC":
                defined.add(sym.name)
    return defined, undefined


def call_graph(objs):
    """{file: {callee file: [functions called]}} between the objects."""
    owner = {}
    undef = {}
    for name, blob in objs:
        src = source_name(name)
        defined, undefined = symbols(blob)
        for fn in defined:
            owner[fn] = src
        undef[src] = undefined
    graph = {src: {} for src in undef}
    for src, undefined in undef.items():
        for fn in sorted(undefined):
            dst = owner.get(fn)
            if dst is not None and dst != src:
                graph[src].setdefault(dst, []).append(fn)
    return graph


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_archive(label, ar, archive):
    graph = call_graph(members(ar, archive))
    edges = sum(len(d) for d in graph.values())
    found = cycles(graph)
    if not found:
        print("ok   %s: %d files, %d calls between files, no cycle" %
              (label, len(graph), edges))
        return 0
    for comp in found:
        print("FAIL %s: call cycle between %s" % (label, ", ".join(comp)))
        members_ = set(comp)
        for src in comp:
            for dst, fns in sorted(graph[src].items()):
                if dst in members_:
                    print("       %s -> %s: %s" % (src, dst, ", ".join(fns)))
    return 1


def check_lines(dirs, limit):
    bad = 0
    biggest = (0, None)
    count = 0
    for top in dirs:
        for root, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, fn)
                with open(path, "rb") as f:
                    n = sum(1 for _ in f)
                count += 1
                biggest = max(biggest, (n, path))
                if n > limit:
                    print("FAIL %s: %d lines, over the limit of %d" %
                          (path, n, limit))
                    bad += 1
    if not bad:
        print("ok   %d source files, none over %d lines (largest: %s, %d)" %
              (count, limit, biggest[1], biggest[0]))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-lines", type=int, default=850)
    ap.add_argument("--ar", default="ar")
    ap.add_argument("--archive", action="append", default=[], nargs=2,
                    metavar=("LABEL", "ARCHIVE"),
                    help="a static archive whose objects are checked")
    ap.add_argument("--sources", action="append", default=[],
                    help="a directory of sources under the line limit")
    args = ap.parse_args()
    bad = 0
    for label, path in args.archive:
        bad += check_archive(label, args.ar, path)
    if args.sources:
        bad += check_lines(args.sources, args.max_lines)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
