#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the PMD_INFO_STRING C file for the plugin, as DPDK's pmdinfogen.

Reads every object of a static archive with pyelftools, finds the
this_pmd_name* symbols that RTE_PMD_REGISTER_VDEV leaves, the matching
__<name>_param_string_export of RTE_PMD_REGISTER_PARAM_STRING, and writes
const char <name>_pmd_info[] = "PMD_INFO_STRING= {json}" for dpdk-pmdinfo.py.
"""

import io
import json
import re
import subprocess
import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection


def string_value(elf, sym):
    data = elf.get_section(sym["st_shndx"]).data()
    raw = data[sym["st_value"]:sym["st_value"] + sym["st_size"]]
    return raw.split(b"\0", 1)[0].decode()


def drivers_of(blob):
    elf = ELFFile(io.BytesIO(blob))
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection):
        return []
    syms = {s.name: s for s in symtab.iter_symbols()}
    out = []
    for sname, sym in syms.items():
        # this_pmd_name<N> (22.11, 24.11) or this_pmd_name<driver> (25.11)
        if not re.match(r"^this_pmd_name\w+$", sname):
            continue
        name = string_value(elf, sym)
        drv = {"name": name}
        params = syms.get("__%s_param_string_export" % name)
        if params is not None:
            drv["params"] = string_value(elf, params)
        drv["pci_ids"] = []
        out.append(drv)
    return out


def main():
    ar, archive, output = sys.argv[1:4]
    members = subprocess.run([ar, "t", archive], check=True,
                             capture_output=True, text=True).stdout.split()
    drivers = []
    for member in members:
        blob = subprocess.run([ar, "p", archive, member], check=True,
                              capture_output=True).stdout
        drivers += drivers_of(blob)
    if not drivers:
        sys.exit("gen-pmdinfo: no driver registration found in " + archive)
    with open(output, "w") as f:
        for drv in drivers:
            escaped = json.dumps(drv).replace('"', '\\"')
            f.write('const char %s_pmd_info[] __attribute__((used)) = '
                    '"PMD_INFO_STRING= %s";\n' % (drv["name"], escaped))


if __name__ == "__main__":
    main()
