#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The main demo: one net_ipoibcm port with room for 8 connections serves
# 128 emulated IPoIB hosts. Every host is served: 8 over RC, the others
# spilled to UD. Then only the last 32 hosts keep talking: the idle
# connections are reaped and the busiest spilled hosts promoted to RC.
# The grid shows each host's path as it changes.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "$(id -u)" -ne 0 ] || devtools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

fabric=demo$$
hosts=${DEMO_HOSTS:-128}
build/app/ipoibcm-peers/dpdk-ipoibcm-peers --fabric "$fabric" \
	--hosts "$hosts" --connect --accept limit:64 --quiet &
peers=$!
trap 'kill $peers 2>/dev/null; wait $peers 2>/dev/null' EXIT

echo "== $hosts emulated hosts on fabric $fabric (dpdk-ipoibcm-peers, pid $peers)"
echo "== dpdk-ipoibcm-ping: net_ipoibcm0 with max_conns=8, reap_idle=3"
last=$((hosts - 1))
build/app/ipoibcm-ping/dpdk-ipoibcm-ping -l 0 --no-huge -m 1024 --no-pci \
	--file-prefix="$fabric" --log-level=pmd.net.ipoibcm:warning \
	--vdev=net_ipoibcm0,fabric="$fabric",max_conns=8,reap_idle=3 -- \
	--hosts "$hosts" --rate 100000 --report 2 --grid --require-all \
	--phase 8:0-"$last" --phase 12:$((hosts - 32))-"$last" 2>&1 |
	grep -v '^EAL:\|^TELEMETRY:'
