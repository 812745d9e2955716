#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Put the DPDK driver SDK headers that Debian's libdpdk-dev does not ship
# (ethdev_driver.h, ethdev_vdev.h, bus_vdev_driver.h, dev_driver.h,
# bus_driver.h) for the installed DPDK into OUTDIR. meson.build runs it
# when neither installed headers nor -Dsdk_headers= are there. Tried in
# this order, the first with all five wins:
#
#  1. the distro's DPDK source package of exactly the installed version
#     (apt-get source; devtools/setup.sh adds the deb-src entry on Debian 12);
#  2. ../shared/dpdk-sdk/SERIES.* beside this source tree;
#  3. devtools/dpdk-sdk/SERIES.* in this tree: unmodified upstream files
#     of a DPDK release (BSD-3-Clause, devtools/dpdk-sdk/README.md).
#
# SERIES is the installed version's YY.MM (24.11 for 24.11.8): an LTS keeps
# these structures stable within its series. When several releases of the
# series are there, the newest is taken.
#
# usage: fetch-sdk-headers.sh DPDK_VERSION OUTDIR
#        fetch-sdk-headers.sh --check DIR   (names the headers DIR lacks)
# DPDK_VERSION is the upstream version (22.11.11); the Debian version of the
# installed libdpdk-dev is looked up with dpkg-query. On failure, stderr
# says what was tried and what is missing.
set -eu

headers="lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h
drivers/bus/vdev/bus_vdev_driver.h lib/eal/include/dev_driver.h
lib/eal/include/bus_driver.h"

missing() { # dir: the headers it lacks, on one line
	m=""
	for h in $headers; do
		[ -f "$1/$(basename "$h")" ] || m="$m $(basename "$h")"
	done
	echo "${m# }"
}

if [ "$1" = --check ]; then
	m=$(missing "$2")
	[ -z "$m" ] && exit 0
	echo "DPDK driver SDK headers: $2 lacks $m" >&2
	exit 1
fi

upstream=$1
out=$2
series=$(echo "$upstream" | cut -d. -f1-2)
top=$(cd "$(dirname "$0")/.." && pwd)
tried=""

[ -z "$(missing "$out")" ] && exit 0

copy_into_out() { # dir holding the headers at their DPDK paths or flat
	mkdir -p "$out" || return 1
	for h in $headers; do
		if [ -f "$1/$h" ]; then
			cp "$1/$h" "$out/" || return 1
		else
			cp "$1/$(basename "$h")" "$out/" || return 1
		fi
	done
}

# 1. The source package of exactly the installed version.
from_source_package() {
	debver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) || {
		tried="$tried
  Debian source package: libdpdk-dev is not installed"
		return 1
	}
	case "$debver" in
	"$upstream"*) ;;
	*)	tried="$tried
  Debian source package: libdpdk-dev $debver is not pkg-config's $upstream"
		return 1 ;;
	esac
	work=$(mktemp -d)
	if ! (cd "$work" &&
	      apt-get source --download-only -qq "dpdk=$debver") \
			>"$work/apt.log" 2>&1; then
		tried="$tried
  Debian source package: 'apt-get source dpdk=$debver' failed:
$(sed 's/^/    /' "$work/apt.log")"
		rm -rf "$work"
		return 1
	fi
	orig=$(ls "$work"/dpdk_*.orig.tar.*)
	srctop=$(tar tf "$orig" | head -n 1 | cut -d/ -f1)
	members=""
	for h in $headers; do
		members="$members $srctop/$h"
	done
	# (set -e does not act inside a function called before ||)
	# shellcheck disable=SC2086
	if ! tar xf "$orig" -C "$work" $members ||
	   ! copy_into_out "$work/$srctop"; then
		rm -rf "$work"
		exit 1
	fi
	rm -rf "$work"
	echo "fetch-sdk-headers: DPDK $debver SDK headers from its source" \
		"package in $out"
}

# 2. and 3. A folder of the installed series.
from_series_dir() { # base
	dir=$(find "$1" -mindepth 1 -maxdepth 1 -type d -name "$series.*" \
		2>/dev/null | sort -V | tail -n 1)
	if [ -z "$dir" ]; then
		tried="$tried
  $1: no $series.* folder"
		return 1
	fi
	m=$(missing "$dir")
	if [ -n "$m" ]; then
		tried="$tried
  $dir: lacks $m"
		return 1
	fi
	copy_into_out "$dir" || exit 1
	echo "fetch-sdk-headers: DPDK $(basename "$dir") SDK headers" \
		"(for the installed $upstream) from $dir in $out"
}

from_source_package ||
	from_series_dir "$(dirname "$top")/shared/dpdk-sdk" ||
	from_series_dir "$top/devtools/dpdk-sdk" || {
	echo "DPDK driver SDK headers for DPDK $upstream not found" \
		"($(missing "$out" | sed 's/ /, /g')). Tried:$tried
Give them with -Dsdk_headers=DIR" \
		"(doc/guides/nics/ipoib_cm_build.rst)." >&2
	exit 1
}
