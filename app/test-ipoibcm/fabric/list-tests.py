#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the names registered with REGISTER_FABRIC_TEST in the given files."""

import re
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        for name in re.findall(r"^REGISTER_FABRIC_TEST\((\w+),", f.read(),
                               re.M):
            print(name)
