#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Set up the machine, build net_ipoibcm twice (release with warnings as
# errors, and ASan+UBSan), run the whole test suite in both builds, then
# again under ThreadSanitizer (build-tsan) and each libFuzzer harness for
# a bounded time (devtools/fuzz.sh, build-fuzz), then the release build
# and the suites against DPDK 24.11 in a Debian 13 root
# (devtools/debian13-stage.sh), and print the total as the last line:
# "N passed, N failed".
#
# usage: devtools/test.sh [meson test arguments, e.g. a test name]
#        (with arguments: build and build-asan only, those tests)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "$(id -u)" -eq 0 ]; then
	devtools/setup.sh
fi

build() { # dir, extra meson options...
	dir=$1
	shift
	mkdir -p "$dir"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=true "$@" >"$dir/setup.log" 2>&1 ||
			{ cat "$dir/setup.log"; exit 1; }
	fi
	ninja -C "$dir" >"$dir/ninja.log" 2>&1 ||
		{ cat "$dir/ninja.log"; exit 1; }
}

build build
build build-asan -Db_sanitize=address,undefined -Dbuildtype=debug \
	-Db_lundef=false

status=0
# Each run ends with suite verbs (priority -10): transport=verbs on
# soft-RoCE, in a QEMU guest per test (devtools/soft-roce-vm.sh, prepared
# by setup.sh); about 1.5 min per build dir. A guest that does not boot is
# a failed test, counted in the total like any other. Its output (the
# device, the counters of each run) is shown even when it passes.
for dir in build build-asan; do
	echo "=== meson test in $dir"
	meson test -C "$dir" --print-errorlogs "$@" || status=1
	/usr/bin/python3 devtools/verbs-tests.py "$dir" || status=1
done
dirs="build build-asan"
if [ $# -eq 0 ]; then
	# ThreadSanitizer: every suite but verbs (a QEMU guest with its own
	# build). The control thread and the datapath meet in all of them;
	# the black-box suites load the plugin into stock testpmd with
	# libtsan preloaded. gcc warns that TSan does not model
	# atomic_thread_fence (rte_rcu_qsbr.h has one): not an error here.
	build build-tsan -Db_sanitize=thread -Dbuildtype=debug \
		-Dc_args=-Wno-tsan
	echo "=== meson test in build-tsan (all suites but verbs)"
	meson test -C build-tsan --no-suite verbs --print-errorlogs ||
		status=1
	echo "=== devtools/fuzz.sh (build-fuzz)"
	devtools/fuzz.sh || status=1
	dirs="$dirs build-tsan build-fuzz"
	# DPDK 24.11: this tree built and tested in a Debian 13 root
	# (build-debian13, build-debian13-fuzz).
	echo "=== devtools/debian13-stage.sh"
	devtools/debian13-stage.sh || status=1
	dirs="$dirs build-debian13 build-debian13-fuzz"
fi
# shellcheck disable=SC2086
/usr/bin/python3 devtools/test-summary.py $dirs
exit $status
