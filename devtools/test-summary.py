#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sum the results of meson test over build dirs: "N passed, N failed"."""

import json
import os
import sys

passed = failed = 0
for build in sys.argv[1:]:
    path = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(path):
        print("%s: no test log" % build)
        failed += 1
        continue
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            ok = r["result"] in ("OK", "EXPECTEDFAIL")
            passed += ok
            failed += not ok
            if not ok:
                print("FAILED %s: %s (%s)" % (build, r["name"], r["result"]))
print("%d passed, %d failed" % (passed, failed))
