#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Set up the machine, build net_ipoibcm twice (release with warnings as
# errors, and ASan+UBSan), run the whole test suite in both builds and print
# the total as the last line: "N passed, N failed".
#
# usage: devtools/test.sh [meson test arguments, e.g. a test name]
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
for dir in build build-asan; do
	echo "=== meson test in $dir"
	meson test -C "$dir" --print-errorlogs "$@" || status=1
done
/usr/bin/python3 devtools/test-summary.py build build-asan
exit $status
