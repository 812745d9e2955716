#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the libFuzzer harnesses (fuzz/) with clang in build-fuzz, the
# driver's objects instrumented for coverage, and run each over a copy of
# its seed corpus for a bounded time (suite 'fuzz' of build-fuzz). Prints
# per harness its executions and coverage; exits non-zero if any crashed,
# leaked or broke a property (the input is kept in build-fuzz/fuzz/
# artifacts/). See doc/guides/nics/ipoib_cm_fuzzing.rst.
#
# usage: devtools/fuzz.sh [-t SECONDS] [HARNESS...]
#        (default 20 s each, or $FUZZ_TIME; all six harnesses)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

time=${FUZZ_TIME:-20}
while getopts t: opt; do
	case $opt in
	t) time=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [HARNESS...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

dir=build-fuzz
if [ ! -f "$dir/build.ninja" ]; then
	mkdir -p "$dir"
	CC=clang meson setup "$dir" -Dfuzz=true -Dfuzz_time="$time" \
		-Dtests=false -Dwerror=true -Dbuildtype=debug -Doptimization=1 \
		-Db_sanitize=address,undefined -Db_lundef=false \
		"-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" \
		>"$dir/setup.log" 2>&1 || { cat "$dir/setup.log"; exit 1; }
else
	meson configure "$dir" -Dfuzz_time="$time" >/dev/null
fi
ninja -C "$dir" >"$dir/ninja.log" 2>&1 || { cat "$dir/ninja.log"; exit 1; }

status=0
meson test -C "$dir" --suite fuzz --print-errorlogs "$@" >"$dir/fuzz.log" \
	2>&1 || status=1
/usr/bin/python3 - "$dir/meson-logs/testlog.json" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    out = (r.get("stdout") or "").strip().splitlines()
    print(out[-1] if out else "%s: %s" % (r["name"], r["result"]))
EOF
[ $status -eq 0 ] || { tail -n 60 "$dir/fuzz.log"; echo "fuzz: FAILED"; }
exit $status
