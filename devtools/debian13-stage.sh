#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The Debian 13 stage of devtools/test.sh: this tree built against Debian
# 13's DPDK 24.11 and tested there. In a Debian 13 ("trixie") root made
# with debootstrap from Debian's packages (the mirror of this machine's apt
# sources), with DPDK 24.11 from Debian 13 inside it, the release build
# (-Dwerror=true) in build-debian13, then suites unit, fabric, peers and
# blackbox (the plugin loaded by 24.11's stock dpdk-testpmd), and the fuzz
# harnesses built with clang in build-debian13-fuzz, each run briefly
# (suite fuzz). devtools/test-summary.py counts both build dirs with the
# others. Left out: verbs (its QEMU guest boots the host's kernel with the
# host's root over 9p), clients (the kernel's IP stack in network
# namespaces, hugepages for secondary processes and dpdk-test: the host's
# tools and memory, which the host runs in three builds), scale (10,000 emulated hosts: the machine's
# capacity, not the DPDK release's) and soak (minutes of our own churn
# and leak checks, which the host runs in three builds), to keep the
# stage short.
#
# The root is made once and cached in $IPOIBCM_DEBIAN13_CACHE (default
# /var/cache/net-ipoibcm/debian13): a second run only builds and tests.
# /proc, /sys, /dev, /dev/pts, /dev/shm (the shm fabric) and this tree (at
# its own path, so build-debian13 is where the host sees it) are mounted
# into the root for the stage and unmounted on every exit path. A root that
# cannot be made, or a build that fails, fails the stage: it prints
# "debian13-stage: FAILED" and leaves no test log, which test-summary.py
# counts as a failure.
#
# usage: devtools/debian13-stage.sh   (as root)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
start=$(date +%s)
cache=${IPOIBCM_DEBIAN13_CACHE:-/var/cache/net-ipoibcm/debian13}
root=$cache/root
build="build-debian13"
fuzz_build="build-debian13-fuzz"
fuzz_time=${FUZZ_TIME_DEBIAN13:-3}
packages="dpdk dpdk-dev libdpdk-dev meson ninja-build pkg-config gcc
python3 python3-pyelftools libibverbs-dev librdmacm-dev tshark
clang libclang-rt-dev valgrind"
mounted=""

fail() {
	echo "debian13-stage: FAILED: $*"
	exit 1
}

# This machine's Debian mirror: the URI of its apt source for its own
# release (one-line or deb822 format); $IPOIBCM_DEBIAN_MIRROR overrides.
mirror() {
	[ -z "${IPOIBCM_DEBIAN_MIRROR:-}" ] ||
		{ echo "$IPOIBCM_DEBIAN_MIRROR"; return; }
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	{
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
			2>/dev/null | sed 's/\[[^]]*\]//' |
			awk -v c="$codename" '$1 == "deb" && $3 == c {print $2}'
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk -v c="$codename" 'BEGIN {RS = ""}
			{
				types = uris = suites = ""
				n = split($0, l, "\n")
				for (i = 1; i <= n; i++) {
					if (l[i] ~ /^Types:/) types = l[i]
					if (l[i] ~ /^URIs:/) uris = l[i]
					if (l[i] ~ /^Suites:/) suites = l[i]
				}
				if (types ~ /[ \t]deb([ \t]|$)/ &&
				    (suites " ") ~ ("[ \t]" c "[ \t]")) {
					split(uris, u, /[ \t]+/)
					print u[2]
				}
			}' "$f"
		done
	} | head -n 1
}

mount_into_root() { # source, target inside the root
	mkdir -p "$root$2"
	mount --bind "$1" "$root$2"
	mounted="$root$2 $mounted"
}

# Every exit path: no process of ours left in the root, then unmount in
# reverse order (lazily if something still holds a mount).
# shellcheck disable=SC2317
cleanup() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] &&
			kill -9 "${p#/proc/}" 2>/dev/null
	done
	for m in $mounted; do
		umount "$m" 2>/dev/null || umount -l "$m" ||
			echo "debian13-stage: cannot unmount $m" >&2
	done
	mounted=""
}

in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null ||
	fail "debootstrap is not installed (devtools/setup.sh installs it)"

# No stale log may count: a stage that stops early leaves none.
rm -f "$build/meson-logs/testlog.json" "$fuzz_build/meson-logs/testlog.json"

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9			# one stage at a time uses the root
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A stale mount left by a killed run is taken down first.
for m in dev/shm dev/pts dev sys proc; do
	! mountpoint -q "$root/$m" 2>/dev/null || umount -l "$root/$m"
done
grep -qs " $root$top " /proc/mounts && umount -l "$root$top"

if [ ! -f "$root/.net-ipoibcm-packages" ]; then
	m=$(mirror)
	[ -n "$m" ] || fail "no Debian mirror in this machine's apt sources"
	echo "debian13-stage: making the Debian 13 root in $root from $m" \
		"(once; cached)"
	rm -rf "$root"
	debootstrap --variant=minbase trixie "$root" "$m" \
		>"$cache/debootstrap.log" 2>&1 || {
		tail -n 20 "$cache/debootstrap.log"
		fail "debootstrap trixie from $m (log: $cache/debootstrap.log)"
	}
fi
mount_into_root /proc /proc
mount_into_root /sys /sys
mount_into_root /dev /dev
mount_into_root /dev/pts /dev/pts
mount_into_root /dev/shm /dev/shm
mount_into_root "$top" "$top"

# shellcheck disable=SC2086,SC2116
want=$(echo $packages)
if [ "$(cat "$root/.net-ipoibcm-packages" 2>/dev/null)" != "$want" ]; then
	echo "debian13-stage: installing Debian 13's packages: $want"
	# shellcheck disable=SC2086
	{ in_root apt-get update -qq &&
	  in_root apt-get install -y -qq --no-install-recommends $want; } \
		>"$cache/apt.log" 2>&1 || {
		tail -n 20 "$cache/apt.log"
		fail "apt-get install in the Debian 13 root (log: $cache/apt.log)"
	}
	echo "$want" >"$root/.net-ipoibcm-packages"
fi
dpdk_version=$(in_root pkg-config --modversion libdpdk) ||
	fail "no libdpdk in the Debian 13 root"
# shellcheck disable=SC2016
echo "debian13-stage: $(in_root sh -c '. /etc/os-release; echo $PRETTY_NAME')," \
	"DPDK $dpdk_version ($(in_root dpkg-query -W -f '${Version}' dpdk))"

# The release build, as test.sh builds on the host.
if [ ! -f "$build/build.ninja" ]; then
	mkdir -p "$build"
	in_root sh -c "cd '$top' && meson setup '$build' -Dwerror=true" \
		>"$build/setup.log" 2>&1 ||
		{ cat "$build/setup.log"; fail "meson setup $build"; }
fi
in_root ninja -C "$top/$build" >"$build/ninja.log" 2>&1 ||
	{ cat "$build/ninja.log"; fail "ninja -C $build"; }

status=0
echo "=== meson test in $build (Debian 13, DPDK $dpdk_version:" \
	"unit, fabric, peers, blackbox)"
in_root sh -c "cd '$top' && meson test -C '$build' --suite unit \
	--suite fabric --suite peers --suite blackbox --no-suite scale \
	--no-suite clients --print-errorlogs" || status=1

# The fuzz harnesses, built as devtools/fuzz.sh builds them, each run
# for $fuzz_time s over its corpus: they build and run on 24.11.
if [ ! -f "$fuzz_build/build.ninja" ]; then
	mkdir -p "$fuzz_build"
	in_root sh -c "cd '$top' && CC=clang meson setup '$fuzz_build' \
		-Dfuzz=true -Dfuzz_time=$fuzz_time -Dtests=false \
		-Dwerror=true -Dbuildtype=debug -Doptimization=1 \
		-Db_sanitize=address,undefined -Db_lundef=false \
		'-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all'" \
		>"$fuzz_build/setup.log" 2>&1 ||
		{ cat "$fuzz_build/setup.log"; fail "meson setup $fuzz_build"; }
else
	in_root meson configure "$top/$fuzz_build" -Dfuzz_time="$fuzz_time" \
		>/dev/null || fail "meson configure $fuzz_build"
fi
in_root ninja -C "$top/$fuzz_build" >"$fuzz_build/ninja.log" 2>&1 ||
	{ cat "$fuzz_build/ninja.log"; fail "ninja -C $fuzz_build"; }
echo "=== meson test in $fuzz_build (Debian 13: suite fuzz, $fuzz_time s each)"
in_root sh -c "cd '$top' && meson test -C '$fuzz_build' --suite fuzz \
	--print-errorlogs" || status=1

echo "debian13-stage: done in $(($(date +%s) - start)) s"
exit $status
