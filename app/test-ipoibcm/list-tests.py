#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the names registered with REGISTER_TEST (lib/test_runner.h) in the
given C files, one a line: meson registers each as a test of its own."""

import re
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        for name in re.findall(r"^REGISTER_TEST\((\w+),", f.read(), re.M):
            print(name)
