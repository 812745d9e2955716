#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The transport=verbs tests, run inside the soft-RoCE guest:
#   devtools/soft-roce-vm.sh devtools/verbs-tests.sh BUILD_DIR [TEST]...
# (meson test --suite verbs does exactly that). Stock testpmd with the
# plugin built in BUILD_DIR, on $RXE_DEV (rxe0). TEST: pair-srq, pair-nosrq,
# spill, death (default: all). Exit status: 0 when every test passed.
set -u

build=$(realpath "${1:?usage: verbs-tests.sh BUILD_DIR [TEST]...}")
shift
top=$(cd "$(dirname "$0")/.." && pwd)
tests=${*:-pair-srq pair-nosrq spill death}

if [ -z "${RXE_DEV:-}" ] || [ -z "${RXE_GID_INDEX:-}" ]; then
	echo "verbs-tests: RXE_DEV/RXE_GID_INDEX unset: not in the soft-RoCE" \
	     "guest (run through devtools/soft-roce-vm.sh)" >&2
	exit 1
fi
# The host's / is read-only here: a private, writable home (the plugin
# copy of devtools/plugin-path.py, if any) on a tmpfs that is not
# world-writable (EAL refuses plugins below such a directory).
export HOME=/run/ipoibcm-home
mkdir -p "$HOME"
chmod 700 "$HOME"
export IPOIBCM_BUILD=$build PYTHONDONTWRITEBYTECODE=1

echo "=== verbs tests in the guest: kernel $(uname -r), $(nproc) CPUs"
echo "=== device $RXE_DEV on $RXE_NETDEV ($RXE_IP, MTU $(cat /sys/class/net/$RXE_NETDEV/mtu)), RoCE v2 GID index $RXE_GID_INDEX:" \
     "$(cat /sys/class/infiniband/$RXE_DEV/ports/1/gids/$RXE_GID_INDEX)"
rdma link show "$RXE_DEV/1"
ibv_devinfo -d "$RXE_DEV" | grep -E "hca_id|transport|state|active_mtu|link_layer"
echo "=== plugin $build/drivers/net/ipoib_cm/librte_net_ipoibcm.so:" \
     "$(ldd "$build/drivers/net/ipoib_cm/librte_net_ipoibcm.so" |
	awk '/ibverbs|rdmacm/ { printf "%s ", $1 }')"

pass=0 fail=0 failed=""
for t in $tests; do
	case $t in
	pair-srq) args="pair on" ;;
	pair-nosrq) args="pair off" ;;
	spill|death) args=$t ;;
	*) echo "verbs-tests: unknown test $t" >&2; exit 1 ;;
	esac
	echo "=== $t"
	# shellcheck disable=SC2086
	if timeout -k 5 240 python3 "$top/app/test-ipoibcm/verbs/test_verbs.py" $args; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $t"
	fi
	rm -rf /run/ipoibcm-verbs	# published addresses of dead processes
done
if [ "$fail" -gt 0 ]; then
	echo "=== guest kernel messages (tail) and memory:"
	dmesg | tail -n 40
	free -m
fi
echo "=== verbs tests: $pass passed, $fail failed${failed:+ (failed:$failed)}"
[ "$fail" -eq 0 ]
