#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# One bounded libFuzzer run: the harness over a copy of its checked-in
# corpus (which stays as it is), for FUZZ_TIME seconds (default 20). Prints
# one line "NAME: N executions, cov C, ft F, corpus K" and exits non-zero
# if the harness crashed, leaked or failed a property; the input that did
# is kept in <build>/fuzz/artifacts/.
#
# usage: run-fuzzer.sh HARNESS CORPUS_DIR [MAX_LEN]
set -u

exe=$1
corpus=$2
max_len=${3:-4096}
name=$(basename "$exe")
artifacts=$(dirname "$exe")/artifacts
work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")

# fuzz_cm's fabric objects carry its pid, and so does the EAL runtime
# directory of every harness (--file-prefix=<name>_<pid>, fuzz_mbuf.c):
# remove those of dead processes
clean_shm() {
	for f in /dev/shm/ipoibcm.fzcm*; do
		[ -e "$f" ] || continue
		pid=${f#/dev/shm/ipoibcm.fzcm}
		pid=${pid%%.*}
		[ -d "/proc/$pid" ] || rm -f "$f"
	done
	for d in /var/run/dpdk/"$name"_*; do
		[ -d "$d" ] || continue
		pid=${d##*_}
		[ -d "/proc/$pid" ] || rm -rf "$d"
	done
}
trap 'rm -rf "$work"; clean_shm' EXIT

mkdir -p "$work/corpus" "$artifacts"
cp "$corpus"/* "$work/corpus/"
# the sanitizers' options (devtools/sanitizers.py): any finding is fatal
# and reported; an input may ask for any allocation size
san=$(python3 "$(dirname "$0")/../devtools/sanitizers.py" fuzz --sh) || exit 1
eval "$san"
"$exe" -max_total_time="${FUZZ_TIME:-20}" -max_len="$max_len" \
	-timeout=10 -print_final_stats=1 -close_fd_mask=3 \
	-artifact_prefix="$artifacts/$name-" "$work/corpus" \
	>"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
last=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1)
cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
if [ $rc -ne 0 ]; then
	cat "$work/log"
	echo "$name: FAILED (status $rc) after ${runs:-?} executions;" \
		"input kept in $artifacts/"
	exit 1
fi
echo "$name: ${runs:-?} executions, cov ${cov:-?}, ft ${ft:-?}," \
	"corpus ${corp:-?}"
