# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the black-box tests: stock DPDK tools against the plugin."""

import atexit
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "devtools"))
import sanitizers  # noqa: E402

BUILD = os.environ.get("IPOIBCM_BUILD",
                       os.path.join(os.path.dirname(__file__), "../../../build"))
PLUGIN_NAME = "librte_net_ipoibcm.so"
TESTPMD = shutil.which("dpdk-testpmd") or "/usr/bin/dpdk-testpmd"
EAL = ["--no-huge", "-m", "1024", "--no-pci"]
# Seconds a test waits for what must happen (a prompt, a connection, a
# counter): it catches a hang and never judges how fast the thing happened,
# so it is generous for a slow, shared or sanitized machine.
HANG_S = 120

_failures = []
# EAL's runtime directories: one per --file-prefix, left after the process
RUNTIME_DIR = "/var/run/dpdk"


def _remove_runtime_dirs():
    """Remove the runtime directories of the EAL processes this test ran.

    Every black-box test names its processes' file prefixes with its own
    PID (prefix_PID or prefix_PID_name); EAL leaves the directories behind
    when the processes exit.
    """
    pid = re.compile(r"_%d(_|$)" % os.getpid())
    try:
        names = os.listdir(RUNTIME_DIR)
    except OSError:
        return
    for name in names:
        if pid.search(name):
            shutil.rmtree(os.path.join(RUNTIME_DIR, name), ignore_errors=True)


atexit.register(_remove_runtime_dirs)


def check(cond, what):
    """Record and print one assertion."""
    print(("  ok   " if cond else "  FAIL ") + what, flush=True)
    if not cond:
        _failures.append(what)
    return cond


def done():
    """Exit with the verdict of every check()."""
    if _failures:
        print("%d check(s) failed" % len(_failures))
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


def plugin():
    """Path from which EAL loads the built plugin (devtools/plugin-path.py)."""
    tool = os.path.join(os.path.dirname(__file__),
                        "../../../devtools/plugin-path.py")
    return subprocess.run([sys.executable, tool, BUILD], check=True,
                          capture_output=True, text=True).stdout.strip()


def _sanitizer_env():
    """Environment for loading a sanitizer-built plugin into stock tools.

    The sanitizer runtimes must come first in the process, so they are
    preloaded; testpmd's own allocations are not ours to check for leaks
    (devtools/sanitizers.py, "stock").
    """
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    built = os.path.join(BUILD, "drivers/net/ipoib_cm", PLUGIN_NAME)
    with open(built, "rb") as f:
        needed = [t.needed for s in ELFFile(f).iter_sections()
                  if isinstance(s, DynamicSection)
                  for t in s.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    preload = []
    for lib in ("libasan.so", "libubsan.so", "libtsan.so"):
        if any(n.startswith(lib) for n in needed):
            path = subprocess.run(["gcc", "-print-file-name=" + lib],
                                  capture_output=True, text=True).stdout
            preload.append(os.path.realpath(path.strip()))
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = " ".join(preload)
        env.update(sanitizers.env("stock"))
    return env


_ENV = None


def stock_env():
    """The environment of the stock tools, made when first asked for (it
    reads the built plugin with pyelftools)."""
    global _ENV
    if _ENV is None:
        _ENV = _sanitizer_env()
    return _ENV


def __getattr__(name):
    """ipoibtest.ENV: stock_env()."""
    if name == "ENV":
        return stock_env()
    raise AttributeError("module %s has no attribute %s" % (__name__, name))


def testpmd(vdevs, prefix, args=(), stdin=None, timeout=HANG_S,
            plugin_path=None):
    """Run stock dpdk-testpmd with the plugin; return (rc, output)."""
    cmd = [TESTPMD] + EAL + ["--file-prefix=%s_%d" % (prefix, os.getpid()),
                             "-d", plugin_path or plugin()]
    for v in vdevs:
        cmd += ["--vdev=" + v]
    cmd += ["--"] + list(args)
    print("  $ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                       timeout=timeout, env=stock_env())
    return p.returncode, p.stdout + p.stderr
