#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stock tools meet the plugin: dpdk-pmdinfo.py reads it, dpdk-testpmd loads
it and lists the port, and refuses bad devargs naming the key."""

import json
import os
import shutil
import subprocess
import tempfile

from ipoibtest import BUILD, PLUGIN_NAME, check, done, plugin, testpmd

KEYS = ["transport", "fabric", "guid", "dev", "port", "gid_index", "srq",
        "max_conns", "mem_budget", "pkey", "ib_mtu", "mode", "capture",
        "reap_idle", "retry_min", "retry_max"]

out = subprocess.run(["dpdk-pmdinfo.py", plugin()], capture_output=True,
                     text=True, check=True).stdout
info = json.loads(out)
drv = [d for d in info if d.get("name") == "net_ipoibcm"]
check(len(drv) == 1, "dpdk-pmdinfo.py lists net_ipoibcm")
params = drv[0].get("params", "") if drv else ""
for k in KEYS:
    check(k + "=" in params, "parameter string lists " + k)

rc, out = testpmd(["net_ipoibcm0,fabric=bb_plugin_%d" % os.getpid()], "bb_plugin",
                  ["-i", "--total-num-mbufs=16384"],
                  stdin="show port summary all\nquit\n")
check(rc == 0, "testpmd with the plugin exits cleanly")
check("net_ipoibcm0" in out and "net_ipoibcm" in out,
      "testpmd lists the port")

# meson install puts the plugin in EAL's own plugin directory; EAL loads
# every plugin of a directory given with -d as it does that one.
pmd_dir = subprocess.run(
    ["pkg-config", "--variable=libdir", "libdpdk"], capture_output=True,
    text=True, check=True).stdout.strip()
dest = tempfile.mkdtemp(prefix="ipoibcm-install-",
                        dir=os.path.expanduser("~"))
try:
    subprocess.run(["meson", "install", "-C", BUILD, "--destdir", dest,
                    "--quiet"], check=True, capture_output=True)
    found = [os.path.join(r, f) for r, _, fs in os.walk(dest) for f in fs
             if f == PLUGIN_NAME]
    check(len(found) == 1 and "/dpdk/pmds-" in found[0] and
          found[0].startswith(dest + pmd_dir),
          "meson install puts the plugin in the EAL plugin directory")
    if found:
        rc, out = testpmd(["net_ipoibcm0,fabric=bb_plugin_%d" % os.getpid()], "bb_plugin",
                          ["-i", "--total-num-mbufs=16384"],
                          stdin="show port summary all\nquit\n",
                          plugin_path=os.path.dirname(found[0]))
        check(rc == 0 and "net_ipoibcm0" in out,
              "EAL loads the installed plugin directory")
finally:
    shutil.rmtree(dest)

for bad, key in [("srq=maybe", "srq"), ("max_conns=0", "max_conns"),
                 ("pkey=0x10000", "pkey"), ("mem_budget=lots", "mem_budget"),
                 ("wibble=1", "wibble")]:
    rc, out = testpmd(["net_ipoibcm0," + bad], "bb_plugin_bad",
                      ["--total-num-mbufs=16384"], stdin="")
    msg = [line for line in out.splitlines() if "ipoib" in line.lower()
           and key in line]
    # EAL goes on after a failed vdev probe; the port must not exist.
    check("failed to initialize net_ipoibcm0" in out and
          "No probed ethernet devices" in out,
          "the probe fails for %s and no port is created" % bad)
    check(len(msg) > 0, "the refusal names %s" % key)
done()
