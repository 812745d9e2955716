#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The sanitizers' options of every test, defined here only.

meson gives them to every test() (top-level meson.build), the black-box
tests to the stock DPDK tools they load a sanitized plugin into
(ipoibtest.py), and fuzz/run-fuzzer.sh to the libFuzzer harnesses. A
finding fails the test: it stops the process and makes it exit non-zero
(it never scrolls past). In build-tsan, devtools/tsan.supp lists the races
of DPDK's own libraries that are not ours. Builds without a sanitizer
ignore them.

  tests   our own programs (the default)
  stock   stock tools (dpdk-testpmd, ...): their own leaks are not ours
  fuzz    libFuzzer harnesses: an input may ask for any allocation size

usage: sanitizers.py [tests|stock|fuzz] [--sh]
  prints "NAME VALUE" lines (meson reads them), or with --sh
  "export NAME='VALUE'" lines for a shell to eval.
"""

import os
import sys

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))

OPTIONS = {
    "ASAN_OPTIONS": ["halt_on_error=1", "abort_on_error=1",
                     "detect_leaks=1"],
    "UBSAN_OPTIONS": ["halt_on_error=1", "abort_on_error=1",
                      "print_stacktrace=1"],
    "TSAN_OPTIONS": ["halt_on_error=1", "second_deadlock_stack=1",
                     "history_size=7",
                     "suppressions=" + os.path.join(TOP, "devtools",
                                                    "tsan.supp")],
}

# later options win: these override or add to the ones above
EXTRA = {
    "tests": {},
    "stock": {"ASAN_OPTIONS": ["detect_leaks=0"]},
    "fuzz": {"ASAN_OPTIONS": ["allocator_may_return_null=1"]},
}


def env(kind="tests"):
    """{NAME: VALUE} of the sanitizers' options for kind."""
    return {name: ":".join(opts + EXTRA[kind].get(name, []))
            for name, opts in OPTIONS.items()}


def main():
    args = sys.argv[1:]
    sh = "--sh" in args
    args = [a for a in args if a != "--sh"]
    if len(args) > 1 or (args and args[0] not in EXTRA):
        sys.exit(__doc__)
    for name, value in env(args[0] if args else "tests").items():
        print("export %s='%s'" % (name, value) if sh else
              "%s %s" % (name, value))


if __name__ == "__main__":
    main()
