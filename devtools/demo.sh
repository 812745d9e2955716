#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The main demo: set up, build, and show net_ipoibcm in stock dpdk-testpmd.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "$(id -u)" -ne 0 ] || devtools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

plugin=$(/usr/bin/python3 devtools/plugin-path.py build)
printf 'show port summary all\nshow port info 0\nquit\n' |
dpdk-testpmd --no-huge -m 1024 --no-pci --file-prefix=ipoibcm-demo \
	-d "$plugin" --vdev=net_ipoibcm0,fabric=demo,srq=auto,max_conns=4 \
	-- -i --total-num-mbufs=16384
