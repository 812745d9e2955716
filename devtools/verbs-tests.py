#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the output of suite verbs from BUILD_DIR's last meson test run.

meson shows a test's output only when it fails; the verbs tests' output
(the device the port ran on, the counters of each run) belongs in the CI
log either way. testpmd command lines are left out.

usage: verbs-tests.py BUILD_DIR
"""

import json
import os
import sys

path = os.path.join(sys.argv[1], "meson-logs", "testlog.json")
if not os.path.exists(path):
    sys.exit(0)
with open(path) as f:
    for line in f:
        r = json.loads(line)
        if ":verbs / " not in r["name"]:
            continue
        print("--- %s: %s, %.0f s" % (r["name"], r["result"],
                                     r.get("duration", 0)))
        for out in (r.get("stdout") or "").splitlines():
            if not (out.startswith("  [") and "] $ " in out):
                print(out)
