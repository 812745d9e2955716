#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# soft-roce-vm.sh - run one command inside a throw-away QEMU guest (pure TCG, no KVM)
# that boots Debian's distro kernel, uses the host's / as its read-only root (9p/virtfs),
# and has a soft-RoCE device rxe0 (rdma_rxe) on a dummy netdev rxenet0 = 10.77.0.1/24
# (MTU 9000: RoCE MTU 4096). Nothing leaves the guest: the netdev is a dummy one.
# net_ipoibcm runs its transport=verbs tests this way (devtools/verbs-tests.sh);
# adapted from shared/recipes/soft-roce-vm.sh.
#
# Usage: soft-roce-vm.sh --prepare          download and unpack the kernel, build the
#                                           initramfs (devtools/setup.sh does this), exit
#        soft-roce-vm.sh [--rw DIR | --ro DIR]... [--] COMMAND [ARG]...
#   COMMAND runs as root in the guest, cwd = the host cwd (if visible there), stdin=/dev/null.
#   Its stdout/stderr stream to this script's stdout/stderr (through 9p files).
#   Exit status: the command's own status; 124 = guest ran past RXE_TIMEOUT;
#   125 = guest failed to boot / set up rxe / report a status (console log shown on stderr).
# Options:
#   --rw DIR   also share host DIR read-write, mounted at the same path in the guest
#   --ro DIR   the same, read-only: for a DIR the guest would not see (below /tmp,
#              /run or /dev/shm, which are the guest's own tmpfs)
#              (everything else is read-only; /tmp, /run, /dev/shm are guest tmpfs).
# Environment (host side):
#   RXE_TIMEOUT=600   seconds before the guest is killed
#   RXE_MEM=3G RXE_SMP=2
#   RXE_NETDEV_MTU=9000  MTU of the dummy netdev (rxe derives the RoCE MTU from it)
#   RXE_SETUP=1       0: skip the netdev/rxe0 setup (modules are loaded anyway)
#   RXE_HUGEPAGES=0   number of 2 MiB hugepages to reserve; hugetlbfs on /dev/hugepages
#   RXE_PASS_ENV=""   names of host variables to export into the guest
#   RXE_CONSOLE=0     1: also stream the guest serial console to stderr
#   RXE_VERBOSE=0     1: print a timing summary to stderr at the end
#   RXE_KEEP=0        1: keep the per-run exchange dir (printed)
# In the guest the command sees RXE_DEV=rxe0 RXE_NETDEV=rxenet0 RXE_IP=10.77.0.1
# RXE_GID_INDEX=<index of the RoCE v2 IPv4 GID>  (use with -g / -x / --gid-idx).
#
# One-time preparation (under $RXE_WORKDIR, default ~/.cache/soft-roce-vm), --prepare:
#   apt-get install qemu-system-x86 busybox-static iproute2 ibverbs-utils rdmacm-utils kmod
#   apt-get download linux-image-<version>-amd64 && dpkg -x linux-image-*.deb kernel
#   (the version is the one linux-image-amd64 depends on, remembered in $RXE_WORKDIR/kver;
#   depmod -b kernel <version> is run here if modules.dep is missing)
# Exit status 125 (never 77, "skipped"): a guest that cannot boot is a failure.
set -u
WORKDIR=${RXE_WORKDIR:-${HOME:-/root}/.cache/soft-roce-vm}
KVER=${RXE_KVER:-$(cat "$WORKDIR/kver" 2>/dev/null)}
[ -n "$KVER" ] || KVER=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n "s/.*Depends: linux-image-//p" | head -n1)
KTREE=$WORKDIR/kernel
VMLINUZ=$KTREE/boot/vmlinuz-$KVER
MODDIR=$KTREE/lib/modules/$KVER
INITRD=$WORKDIR/build/initramfs-$KVER.cpio.gz
RXE_TIMEOUT=${RXE_TIMEOUT:-600} RXE_MEM=${RXE_MEM:-3G} RXE_SMP=${RXE_SMP:-2}
RXE_NETDEV_MTU=${RXE_NETDEV_MTU:-9000}
RXE_SETUP=${RXE_SETUP:-1} RXE_HUGEPAGES=${RXE_HUGEPAGES:-0} RXE_PASS_ENV=${RXE_PASS_ENV:-}
RXE_CONSOLE=${RXE_CONSOLE:-0} RXE_VERBOSE=${RXE_VERBOSE:-0} RXE_KEEP=${RXE_KEEP:-0}

die() { echo "soft-roce-vm: $*" >&2; exit 125; }

RW_DIRS=() RW_MODES=()
PREPARE_ONLY=0
while [ $# -gt 0 ]; do
    case $1 in
        --prepare) PREPARE_ONLY=1; shift ;;
        --rw) [ $# -ge 2 ] || die "--rw needs a directory"
              d=$(realpath -e -- "$2") && [ -d "$d" ] || die "--rw $2: not a directory"
              RW_DIRS+=("$d"); RW_MODES+=(rw); shift 2 ;;
        --ro) [ $# -ge 2 ] || die "--ro needs a directory"
              d=$(realpath -e -- "$2") && [ -d "$d" ] || die "--ro $2: not a directory"
              RW_DIRS+=("$d"); RW_MODES+=(ro); shift 2 ;;
        --) shift; break ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || [ "$PREPARE_ONLY" = 1 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d' >&2; exit 125; }
prepare() {
    # Debian packages only: qemu, busybox, the rdma tools, and the distro kernel (unpacked, not installed).
    local pkgs="qemu-system-x86 busybox-static iproute2 kmod ibverbs-utils rdmacm-utils"
    dpkg -s $pkgs >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs >&2 || return 1
    if [ -z "$KVER" ]; then   # no package lists yet
        apt-get update -qq >&2 || return 1
        KVER=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n "s/.*Depends: linux-image-//p" | head -n1)
        KTREE=$WORKDIR/kernel VMLINUZ=$WORKDIR/kernel/boot/vmlinuz-$KVER
        MODDIR=$WORKDIR/kernel/lib/modules/$KVER INITRD=$WORKDIR/build/initramfs-$KVER.cpio.gz
    fi
    [ -n "$KVER" ] || die "cannot tell the distro kernel version (apt-get update failed?)"
    mkdir -p "$KTREE" "$WORKDIR/build"
    echo "$KVER" > "$WORKDIR/kver"
    if [ ! -r "$VMLINUZ" ]; then
        (cd "$WORKDIR/build" && { apt-get download -q "linux-image-$KVER" >&2 ||
            { apt-get update -qq >&2 && apt-get download -q "linux-image-$KVER" >&2; }; }) || return 1
        dpkg -x "$WORKDIR"/build/linux-image-"$KVER"_*.deb "$KTREE" || return 1
        rm -f "$WORKDIR"/build/linux-image-"$KVER"_*.deb
    fi
}
[ -r "$VMLINUZ" ] || prepare || die "preparation failed"
[ -r "$VMLINUZ" ] || die "missing $VMLINUZ (dpkg -x the linux-image-$KVER .deb into $KTREE)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed"
[ -x /bin/busybox ] || die "/bin/busybox (busybox-static) not installed"

# Modules loaded by stage 1 with busybox insmod, in dependency order
# (from: modprobe -d kernel -S $KVER --show-depends 9p 9pnet_virtio virtio_pci rdma_rxe rdma_ucm ...).
MODULES="
kernel/drivers/virtio/virtio_ring
kernel/drivers/virtio/virtio
kernel/drivers/virtio/virtio_pci_modern_dev
kernel/drivers/virtio/virtio_pci_legacy_dev
kernel/drivers/virtio/virtio_pci
kernel/fs/netfs/netfs
kernel/fs/fscache/fscache
kernel/net/9p/9pnet
kernel/net/9p/9pnet_virtio
kernel/fs/9p/9p
kernel/crypto/crc32_generic
kernel/net/ipv4/udp_tunnel
kernel/net/ipv6/ip6_udp_tunnel
kernel/drivers/infiniband/core/ib_core
kernel/drivers/infiniband/core/ib_uverbs
kernel/drivers/infiniband/core/ib_umad
kernel/drivers/infiniband/sw/rxe/rdma_rxe
kernel/fs/configfs/configfs
kernel/drivers/infiniband/core/ib_cm
kernel/drivers/infiniband/core/iw_cm
kernel/drivers/infiniband/core/rdma_cm
kernel/drivers/infiniband/core/rdma_ucm
kernel/drivers/net/dummy numdummies=0
kernel/drivers/net/veth
"

build_initramfs() {
    local tmp; tmp=$(mktemp -d "$WORKDIR/build/initramfs.XXXXXX") || return 1
    mkdir -p "$tmp"/{bin,modules,proc,sys,dev,newroot}
    cp /bin/busybox "$tmp/bin/busybox"
    : > "$tmp/modules/order"
    while read -r m args; do
        [ -n "$m" ] || continue
        cp "$MODDIR/$m.ko" "$tmp/modules/" || return 1
        echo "${m##*/} $args" >> "$tmp/modules/order"
    done <<< "$MODULES"
    # kernel module auto-loading: host's kmod modprobe against the extracted tree
    cat > "$tmp/bin/guest-modprobe" <<EOF
#!/bin/sh
exec chroot /newroot /sbin/modprobe -d $KTREE "\$@"
EOF
    cat > "$tmp/init" <<'EOF'
#!/bin/busybox sh
# stage 1, PID 1 in the initramfs: load modules, mount host / (9p, ro), chroot into it.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
log() { echo "soft-roce-vm[stage1 $(cut -d' ' -f1 /proc/uptime)s]: $*"; }
log "start"
while read -r m args; do insmod /modules/$m.ko $args || log "insmod $m failed"; done < /modules/order
echo /bin/guest-modprobe > /proc/sys/kernel/modprobe
i=0
until mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /newroot; do
    i=$((i+1)); [ $i -lt 100 ] || { log "cannot mount 9p hostroot"; poweroff -f; }
    sleep 0.1
done
R=/newroot
mount -t proc proc $R/proc; mount -t sysfs sys $R/sys; mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm $R/dev/hugepages
mount -t devpts devpts $R/dev/pts; mount -t tmpfs shm $R/dev/shm
mount -t tmpfs tmp $R/tmp; mount -t tmpfs -o mode=755 run $R/run
mkdir -p $R/tmp/xfer
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 xfer $R/tmp/xfer || { log "cannot mount xfer"; poweroff -f; }
for t in $(cat $R/tmp/xfer/rwtags 2>/dev/null); do
    p=$(cat $R/tmp/xfer/rwpath.$t); mkdir -p "$R$p" 2>/dev/null
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,$(cat $R/tmp/xfer/rwmode.$t) $t "$R$p" ||
        log "mount $t on $p failed"
done
hp=$(cat $R/tmp/xfer/hugepages 2>/dev/null)
if [ -n "$hp" ] && [ "$hp" != 0 ]; then
    echo "$hp" > /proc/sys/vm/nr_hugepages; mount -t hugetlbfs nodev $R/dev/hugepages
fi
log "chroot"
chroot $R /bin/bash /tmp/xfer/stage2.sh
echo $? > $R/tmp/xfer/rc
sync; umount $R/tmp/xfer
poweroff -f
EOF
    chmod 755 "$tmp/init" "$tmp/bin/guest-modprobe"
    (cd "$tmp" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$tmp.cpio.gz" || return 1
    mv -f "$tmp.cpio.gz" "$INITRD" && rm -rf "$tmp"
}

mkdir -p "$WORKDIR/build"
if [ ! -s "$INITRD" ] || [ "$0" -nt "$INITRD" ]; then
    build_initramfs || die "initramfs build failed"
fi
if [ ! -s "$MODDIR/modules.dep" ] && command -v depmod >/dev/null; then
    depmod -b "$KTREE" "$KVER" || echo "soft-roce-vm: depmod failed (auto-loading may not work)" >&2
fi
if [ "$PREPARE_ONLY" = 1 ]; then
    echo "soft-roce-vm: kernel $KVER and initramfs ready in $WORKDIR"
    exit 0
fi

XFER=$(mktemp -d "$WORKDIR/build/xfer.XXXXXX") || die "mktemp failed"
cleanup() {
    [ -n "${QPID:-}" ] && kill "$QPID" 2>/dev/null
    [ -n "${TPIDS:-}" ] && kill $TPIDS 2>/dev/null
    if [ "$RXE_KEEP" = 1 ]; then echo "soft-roce-vm: kept $XFER" >&2; else rm -rf "$XFER"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
: > "$XFER/out.stdout"; : > "$XFER/out.stderr"; : > "$XFER/console.log"
echo "$RXE_HUGEPAGES" > "$XFER/hugepages"

VIRTFS=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=$XFER,mount_tag=xfer,security_model=none")
n=0
for d in "${RW_DIRS[@]}"; do
    ro=; [ "${RW_MODES[$n]}" = ro ] && ro=,readonly=on
    VIRTFS+=(-virtfs "local,path=$d,mount_tag=rw$n,security_model=none,multidevs=remap$ro")
    echo "rw$n" >> "$XFER/rwtags"; printf '%s\n' "$d" > "$XFER/rwpath.rw$n"
    echo "${RW_MODES[$n]}" > "$XFER/rwmode.rw$n"; n=$((n+1))
done

{
    echo '#!/bin/bash'
    echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8'
    for v in $RXE_PASS_ENV; do [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"; done
    printf 'RXE_SETUP=%q\nRXE_CWD=%q\nRXE_KTREE=%q\nRXE_NETDEV_MTU=%q\n' "$RXE_SETUP" "$PWD" "$KTREE" "$RXE_NETDEV_MTU"
    printf 'RXE_CMD=('; printf ' %q' "$@"; printf ' )\n'
    cat <<'EOF'
exec </dev/null >>/tmp/xfer/out.stdout 2>>/tmp/xfer/out.stderr
up() { cut -d' ' -f1 /proc/uptime; }
echo "t_stage2=$(up)" > /tmp/xfer/timing
if [ "$RXE_SETUP" = 1 ]; then
    export RXE_DEV=rxe0 RXE_NETDEV=rxenet0 RXE_IP=10.77.0.1
    fail() { echo "soft-roce-vm: rxe setup failed: $*" >&2; exit 125; }
    ip link set lo up || fail "ip link set lo up"
    ip link add $RXE_NETDEV type dummy || fail "ip link add $RXE_NETDEV type dummy"
    ip link set $RXE_NETDEV mtu $RXE_NETDEV_MTU || fail "ip link set $RXE_NETDEV mtu $RXE_NETDEV_MTU"
    ip link set $RXE_NETDEV up || fail "ip link set $RXE_NETDEV up"
    ip addr add $RXE_IP/24 dev $RXE_NETDEV || fail "ip addr add"
    rdma link add $RXE_DEV type rxe netdev $RXE_NETDEV || fail "rdma link add $RXE_DEV type rxe netdev $RXE_NETDEV"
    P=/sys/class/infiniband/$RXE_DEV/ports/1
    want=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${RXE_IP//./ })
    for try in $(seq 100); do
        for g in $P/gids/*; do
            i=${g##*/}
            if [ "$(cat $g)" = "$want" ] && [ "$(cat $P/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ]; then
                export RXE_GID_INDEX=$i; break 2
            fi
        done
        sleep 0.1
    done
    [ -n "${RXE_GID_INDEX:-}" ] || fail "no RoCE v2 GID for $RXE_IP on $RXE_DEV"
    grep -q ACTIVE $P/state || fail "$RXE_DEV port state: $(cat $P/state)"
fi
echo "t_cmd=$(up)" >> /tmp/xfer/timing
cd -- "$RXE_CWD" 2>/dev/null || cd /
"${RXE_CMD[@]}"
rc=$?
echo "t_end=$(up)" >> /tmp/xfer/timing
exit $rc
EOF
} > "$XFER/stage2.sh"

T0=$(date +%s.%N)
timeout -k 10 "$RXE_TIMEOUT" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -machine pc -smp "$RXE_SMP" -m "$RXE_MEM" \
    -nodefaults -no-user-config -no-reboot -display none -monitor none -nic none \
    -serial "file:$XFER/console.log" \
    -kernel "$VMLINUZ" -initrd "$INITRD" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic" \
    "${VIRTFS[@]}" </dev/null >"$XFER/qemu.log" 2>&1 &
QPID=$!
tail -n +1 -s 0.2 -f --pid=$QPID "$XFER/out.stdout" & TPIDS=$!
tail -n +1 -s 0.2 -f --pid=$QPID "$XFER/out.stderr" >&2 & TPIDS="$TPIDS $!"
[ "$RXE_CONSOLE" = 1 ] && { tail -n +1 -s 0.2 -f --pid=$QPID "$XFER/console.log" >&2 & TPIDS="$TPIDS $!"; }
wait $QPID; qrc=$?; QPID=
wait $TPIDS 2>/dev/null; TPIDS=
T1=$(date +%s.%N)

if [ -s "$XFER/rc" ]; then
    rc=$(cat "$XFER/rc")
elif [ $qrc = 137 ] || [ $qrc = 124 ]; then
    echo "soft-roce-vm: guest killed after ${RXE_TIMEOUT}s; console tail:" >&2
    tail -n 30 "$XFER/console.log" >&2; rc=124
else
    echo "soft-roce-vm: guest exited (qemu rc=$qrc) without a status; qemu log / console tail:" >&2
    cat "$XFER/qemu.log" >&2; tail -n 30 "$XFER/console.log" >&2; rc=125
fi
[ "$rc" = 125 ] && [ "$RXE_CONSOLE" != 1 ] && [ -s "$XFER/rc" ] && tail -n 30 "$XFER/console.log" >&2
if [ "$RXE_VERBOSE" = 1 ]; then
    . "$XFER/timing" 2>/dev/null
    echo "soft-roce-vm: wall $(awk "BEGIN{printf \"%.1f\", $T1 - $T0}")s; guest uptime at stage2 ${t_stage2:-?}s," \
         "command start ${t_cmd:-?}s, command end ${t_end:-?}s; rc=$rc" >&2
fi
exit "$rc"
