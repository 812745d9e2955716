#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Fetch the DPDK driver SDK headers that Debian's libdpdk-dev does not ship
# (ethdev_driver.h, ethdev_vdev.h, bus_vdev_driver.h, dev_driver.h,
# bus_driver.h) from the distro's DPDK source package of exactly the
# installed version, into OUTDIR. Nothing of DPDK is committed to this tree.
#
# usage: fetch-sdk-headers.sh DPDK_VERSION OUTDIR
# DPDK_VERSION is the upstream version (22.11.11); the Debian version of the
# installed libdpdk-dev is looked up with dpkg-query.
set -eu

upstream=$1
out=$2
headers="lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h
drivers/bus/vdev/bus_vdev_driver.h lib/eal/include/dev_driver.h
lib/eal/include/bus_driver.h"

all_present() {
	for h in $headers; do
		[ -f "$out/$(basename "$h")" ] || return 1
	done
}
all_present && exit 0

debver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) || {
	echo "fetch-sdk-headers: libdpdk-dev is not installed" >&2
	exit 1
}
case "$debver" in
"$upstream"*) ;;
*)	echo "fetch-sdk-headers: libdpdk-dev $debver does not match" \
		"pkg-config libdpdk $upstream" >&2
	exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get source --download-only -qq "dpdk=$debver" >apt.log 2>&1; then
	cat apt.log >&2
	echo "fetch-sdk-headers: 'apt-get source dpdk=$debver' failed;" \
		"devtools/setup.sh adds the deb-src entry it needs" >&2
	exit 1
fi
orig=$(ls dpdk_*.orig.tar.*)
top=$(tar tf "$orig" | head -n 1 | cut -d/ -f1)
members=""
for h in $headers; do
	members="$members $top/$h"
done
# shellcheck disable=SC2086
tar xf "$orig" $members
mkdir -p "$out"
for h in $headers; do
	cp "$top/$h" "$out/"
done
echo "fetch-sdk-headers: DPDK $debver SDK headers in $out"
