#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sum the results of meson test over build dirs: "N passed, N failed".

Each failed test is named with the last lines of its output (stdout, then
stderr), so that the end of a CI log, often all one gets back, says why.
"""

import json
import os
import sys

TAIL = 25  # lines of a failed test's output shown

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
            if ok:
                continue
            print("FAILED %s: %s (%s, exit %s)" % (build, r["name"],
                  r["result"], r.get("returncode")))
            out = (r.get("stdout") or "") + (r.get("stderr") or "")
            for tail in out.splitlines()[-TAIL:]:
                print("    | " + tail)
print("%d passed, %d failed" % (passed, failed))
