#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Prepare a Debian 12 machine (as root) to build, test and demo net_ipoibcm:
# packages and the deb-src entry from which the build fetches the DPDK driver
# SDK headers. Idempotent: a second run changes nothing.
set -eu

[ "$(id -u)" -eq 0 ] || { echo "setup.sh: run as root" >&2; exit 1; }

packages="dpdk dpdk-dev libdpdk-dev meson ninja-build pkg-config gcc
python3 python3-pyelftools python3-matplotlib dpkg-dev xz-utils valgrind tshark
libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils
rdmacm-utils qemu-system-x86 busybox-static kmod iproute2 linux-perf
clang libclang-rt-14-dev debootstrap iputils-ping socat iperf3"

src=/etc/apt/sources.list.d/net-ipoibcm-deb-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -qs '^deb-src' /etc/apt/sources.list; then
	cat >"$src" <<'EOS'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	stale=1
fi

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ] || [ -n "${stale:-}" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# tshark asks whether non-root users may capture; the answer is no.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	# iperf3 asks whether to run a server at boot: no, the tests start
	# their own in a network namespace.
	echo "iperf3 iperf3/start_daemon boolean false" |
		debconf-set-selections
	# shellcheck disable=SC2086
	[ -z "$missing" ] || apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null
fi
echo "setup.sh: packages ready"

# The soft-RoCE guest of the verbs tests: Debian's kernel (~70 MB), unpacked
# under ~/.cache/soft-roce-vm, and its initramfs. Without it those tests
# fail (they never skip); the other suites do not need it.
"$(dirname "$0")/soft-roce-vm.sh" --prepare ||
	echo "setup.sh: soft-RoCE guest not prepared: suite verbs will fail" >&2
