#!/usr/bin/env bash
# Runs a command as root on one of Debian's x86-64 kernels, in qemu-system-x86_64, with this
# host's root as the machine's root: to test jmethodtime on the kernels it supports, or to
# reproduce a problem on one of them.
#
# usage: tests/kernels/on-kernel.sh VERSION CMD [ARG...]
#   VERSION  5.10 (bullseye), 6.1 (bookworm) or 6.12 (trixie): Debian's linux-image-amd64 of that
#            suite (with its security updates), which has BTF
#   CMD      run by bash in the machine, as root, in the repository's top directory
#   e.g. tests/kernels/on-kernel.sh 6.1 uname -r
#        tests/kernels/on-kernel.sh 5.10 build/jmethodtime --version
#
# The machine (2 CPUs, 4 GB; KVM when usable, else TCG emulation) boots the kernel on a small
# initramfs (busybox-static, the modules for 9p and overlayfs, the /init below). Its root is the
# host's / shared read-only by 9p under an overlayfs with a tmpfs upper layer: the host's programs
# (Debian 12's OpenJDK 17 first on PATH, bpftool, the build), writable in the machine without
# touching the host. Shared read-write at their host paths: the repository and, if it exists,
# /var/cache/jmethodtime (the tests' Debian roots). Fresh proc, sysfs, devtmpfs, devpts, tmpfs on
# /tmp, /run and /dev/shm, bpffs, debugfs, tracefs, cgroup2; ulimit -l unlimited (5.10 charges
# BPF maps to RLIMIT_MEMLOCK). CMD's stdin is /dev/null; its stdout and stderr come back when it
# ends (not live); of the environment only CI goes in, and the names listed in JMT_VM_ENV.
#
# The kernel's boot/, busybox and the few modules are cached in
# /var/cache/jmethodtime/kernels/VERSION, made by mmdebstrap --variant=extract from
# deb.debian.org, and made again when missing or when its record (suites, packages, modules)
# differs from this script's. The rest of a run lives in a temporary directory under /tmp.
#
# Environment: JMT_VM_TIMEOUT seconds before the machine is stopped (default 1800);
# JMT_VM_ACCEL kvm or tcg (default: kvm when /dev/kvm is writable and the CPU has vmx or svm);
# JMT_VM_ENV more variable names to pass in; JMT_VM_KEEP=1 keeps the temporary directory (the
# console's log, console.log). Run it under nice to spare a busy host: qemu inherits it.
#
# Exit status: CMD's; 125 the machine could not run CMD to its end (no such kernel, no BTF, a
# panic, a crash, the timeout: one line on stderr, after the console's last 40 lines); 77 a tool
# it needs is missing ("SKIP: ..." on stderr; 1 under CI=true); 2 a wrong usage. A machine that
# fails before CMD starts (emulation's rare crash at boot) is booted once more.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

usage() { echo "usage: $0 5.10|6.1|6.12 CMD [ARG...]" >&2; exit 2; }
(($# >= 2)) || usage
version=$1
shift
case $version in
  5.10) suite=bullseye ;;
  6.1) suite=bookworm ;;
  6.12) suite=trixie ;;
  *) usage ;;
esac
# die MESSAGE: the machine could not run CMD; 125 keeps it apart from CMD's own statuses.
die() { echo "on-kernel.sh $version: $*" >&2; exit 125; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=/var/cache/jmethodtime
kdir=$cache/kernels/$version
timeout_s=${JMT_VM_TIMEOUT:-1800}
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "JMT_VM_TIMEOUT is not a number of seconds: $timeout_s"

[ "$(id -u)" = 0 ] || missing+=("root (9p's passthrough and the cache in $cache need it)")
need_tool qemu-system-x86_64 "qemu-system-x86_64 (apt-get install qemu-system-x86, or .ci/install-deps)"
need_tool cpio "cpio (apt-get install cpio)"
need_tools flock timeout
# Its stdout is CMD's alone.
skip_or_fail_if_missing >&2

# The kernel's cache: what it was made from. Any change here makes it again.
mirrors=("deb http://deb.debian.org/debian $suite main"
         "deb http://deb.debian.org/debian-security $suite-security main")
packages=linux-image-amd64,busybox-static
# 9p and overlayfs, and virtio-pci for 9p's transport; those built in are skipped, the modules
# they depend on (their .modinfo's depends=) are added.
modules=(virtio_pci 9pnet_virtio 9p overlay)
record=$(printf '%s\n' "layout 1" "mirrors ${mirrors[*]}" "packages $packages" "modules ${modules[*]}")

# make_kernel: $kdir made again: Debian's kernel package extracted in $kdir.new/tree, its boot/,
# busybox and the modules (decompressed, for busybox's insmod; modules/order lists them in
# their loading order) kept, the rest dropped, and $kdir.new renamed.
make_kernel() {
  local new=$kdir.new
  local tree=$new/tree
  command -v mmdebstrap >/dev/null || {
    missing+=("mmdebstrap (apt-get install mmdebstrap)")
    skip_or_fail_if_missing >&2
  }
  rm -rf --one-file-system "$new"
  making=$new  # removed on the way out unless it becomes $kdir
  mkdir -p "$new/modules"
  echo "on-kernel.sh $version: extracting Debian $suite's kernel into $kdir" >&2
  mmdebstrap --variant=extract --include="$packages" "$suite" "$tree" "${mirrors[@]}" \
    >"$new/mmdebstrap.log" 2>&1 || { tail -n 20 "$new/mmdebstrap.log" >&2; die "mmdebstrap $suite failed"; }
  local images=("$tree"/boot/vmlinuz-"$version".*)
  [ -f "${images[0]}" ] || die "Debian $suite's kernel is not $version: $(cd "$tree/boot" && echo vmlinuz-*)"
  local kver=${images[0]##*/vmlinuz-}
  grep -qx CONFIG_DEBUG_INFO_BTF=y "$tree/boot/config-$kver" ||
    die "Debian's $kver kernel has no BTF (no CONFIG_DEBUG_INFO_BTF=y in its config)"
  # bullseye and bookworm ship /lib, trixie /usr/lib (extract makes no /lib link).
  local mdir=$tree/lib/modules/$kver bb=$tree/bin/busybox
  [ -d "$mdir" ] || mdir=$tree/usr/lib/modules/$kver
  [ -f "$bb" ] || bb=$tree/usr/bin/busybox
  [ -d "$mdir/kernel" ] || die "no modules for $kver in the extracted tree"
  [ -f "$bb" ] || die "no busybox in the extracted tree"
  local -A file=() builtin=() added=()
  local f n
  while IFS= read -r f; do
    n=${f##*/}
    n=${n%%.ko*}
    file[${n//-/_}]=$f
  done < <(find "$mdir/kernel" -name '*.ko*')
  while IFS= read -r f; do
    n=${f##*/}
    n=${n%.ko}
    builtin[${n//-/_}]=1
  done <"$mdir/modules.builtin"
  # add_module NAME: the modules NAME depends on, then NAME, unless built in or added already.
  add_module() {
    local name=${1//-/_} src dep
    [ -z "${builtin[$name]:-}" ] && [ -z "${added[$name]:-}" ] || return 0
    added[$name]=1
    src=${file[$name]:-}
    [ -n "$src" ] || die "Debian's $kver kernel has no module $name"
    case $src in
      *.ko) cp "$src" "$new/modules/$name.ko" ;;
      *.ko.xz) xz -dc "$src" >"$new/modules/$name.ko" ;;
      *.ko.zst) zstd -dcq "$src" >"$new/modules/$name.ko" ;;
      *.ko.gz) gzip -dc "$src" >"$new/modules/$name.ko" ;;
      *) die "a module compressed in an unknown way: $src" ;;
    esac
    for dep in $(tr '\0' '\n' <"$new/modules/$name.ko" | sed -n '/^depends=/{s///;s/,/ /g;p;q}'); do
      add_module "$dep"
    done
    echo "$name.ko" >>"$new/modules/order"
  }
  for n in "${modules[@]}"; do add_module "$n"; done
  touch "$new/modules/order"
  mv "$tree/boot" "$new/boot"
  cp "$bb" "$new/busybox"
  rm -rf --one-file-system "$tree" "$new/mmdebstrap.log"
  echo "$record" >"$new/record"
  rm -rf --one-file-system "$kdir"
  mv "$new" "$kdir"
  making=
  echo "on-kernel.sh $version: $kver ready ($(tr '\n' ' ' <"$kdir/modules/order"))" >&2
}

work=$(mktemp -d /tmp/jmt-on-kernel.XXXXXX)
making=
# shellcheck disable=SC2317  # run by the trap
cleanup() {
  if [ -n "$making" ]; then rm -rf --one-file-system "$making"; fi
  if [ "${JMT_VM_KEEP:-}" = 1 ]; then echo "on-kernel.sh $version: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The cache, made again when missing or from other inputs; the lock keeps two runs from making
# it at once, or one from reading it while another makes it.
mkdir -p "${kdir%/*}"
exec {lock}>"$kdir.lock"
flock "$lock"
if [ ! -f "$kdir/record" ] || [ "$(cat "$kdir/record")" != "$record" ]; then make_kernel; fi
kernel=("$kdir"/boot/vmlinuz-*)
[ -f "${kernel[0]}" ] || die "no kernel image in $kdir/boot"

# The initramfs: busybox, the modules, the kernel's config, /init and its settings (the shares'
# mount points).
# Uncompressed: decompressing it under emulation would cost more than reading it.
mkdir -p "$work/initramfs/bin" "$work/share"
cp "$kdir/busybox" "$work/initramfs/bin/busybox"
cp -r "$kdir/modules" "$work/initramfs/modules"
cp "$kdir"/boot/config-* "$work/initramfs/"
exec {lock}>&-
# q: WORD single-quoted for a shell.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
[ -d "$cache" ] && cache_share=$cache || cache_share=
{
  echo "repo=$(q "$repo")"
  echo "cache=$(q "$cache_share")"
  echo "host=$(q "jmt-${version/./-}")"
} >"$work/initramfs/jmt.conf"
cat >"$work/initramfs/init" <<'EOF'
#!/bin/busybox sh
# /init of on-kernel.sh's machine: loads the modules, builds the root in /newroot (the host's /
# read-only by 9p under an overlayfs on a tmpfs; the shares read-write at their host paths; fresh
# kernel filesystems) and hands PID 1 to bash running /run/jmt/job, the command's script. Its
# messages go to the console (the host's console.log), never to the command's output.
/bin/busybox --install -s /bin
export PATH=/bin
. /jmt.conf
fatal() { echo "jmt-init: $*"; poweroff -f; sleep 10; }
mkdir -p /proc /sys /dev /lower /rw /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do
  insmod "/modules/$m" || fatal "insmod $m failed"
done </modules/order
o9p=trans=virtio,version=9p2000.L,msize=262144
# The host's root is read-only: its data and names are cached (loose), the shares are not (mmap
# keeps shared writable mappings working).
mount -t 9p -o "$o9p,ro,cache=loose" hostroot /lower || fatal "cannot mount the host's root"
mount -t tmpfs -o mode=0755 upper /rw
mkdir /rw/upper /rw/work
if mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work root /newroot; then
  writable=
else
  # Without overlayfs: the read-only root, with tmpfs where programs write most.
  echo "jmt-init: no overlayfs over 9p: a read-only root with tmpfs on /var/tmp and /root"
  mount --bind /lower /newroot
  writable="var/tmp root"
fi
cd /newroot
mount --move /proc proc
mount --move /sys sys
mount --move /dev dev
mkdir -p dev/pts dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts dev/pts
mount -t tmpfs -o mode=1777 shm dev/shm
# devtmpfs has no /dev/fd (bash's process substitution uses it) nor /dev/std*.
ln -sf /proc/self/fd dev/fd
ln -sf /proc/self/fd/0 dev/stdin
ln -sf /proc/self/fd/1 dev/stdout
ln -sf /proc/self/fd/2 dev/stderr
mount -t tmpfs -o mode=1777 tmp tmp
mount -t tmpfs -o mode=0755 run run
for d in $writable; do mount -t tmpfs -o mode=0755 "$d" "$d"; done
mount -t bpf bpf sys/fs/bpf
mount -t debugfs debugfs sys/kernel/debug
# 5.10 has /sys/kernel/tracing too (and tracefs at debug/tracing when debugfs is read).
if [ -d sys/kernel/tracing ]; then mount -t tracefs tracefs sys/kernel/tracing; fi
mount -t cgroup2 cgroup2 sys/fs/cgroup
mkdir -p run/jmt
mount -t 9p -o "$o9p,cache=mmap" jmt run/jmt || fatal "cannot mount the run's directory"
mkdir -p ".$repo"
mount -t 9p -o "$o9p,cache=mmap" repo ".$repo" || fatal "cannot mount the repository at $repo"
if [ -n "$cache" ]; then
  mkdir -p ".$cache"
  mount -t 9p -o "$o9p,cache=mmap" cache ".$cache" || fatal "cannot mount $cache"
fi
hostname "$host"
if [ -z "$writable" ]; then
  echo "127.0.1.1 $host" >>etc/hosts
  # The kernel's config where bpftool's feature probe and the like look for it.
  mkdir -p boot
  cp /config-* boot/
fi
ip link set lo up
exec switch_root /newroot /bin/bash /run/jmt/job
EOF
chmod 0755 "$work/initramfs/init"
(cd "$work/initramfs" && find . | cpio -o -H newc --quiet) >"$work/initrd"

# The command's script, PID 1 after switch_root: CMD in the repository with its output in the
# run's directory (shared as /run/jmt), its status last, then the machine powers off. CMD runs by
# exec in a subshell, as a program (a name that is only a shell builtin is not found).
{
  for name in CI ${JMT_VM_ENV:-}; do
    [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "JMT_VM_ENV: not a variable name: $name"
    if [ -n "${!name+set}" ]; then printf 'export %s=%q\n' "$name" "${!name}"; fi
  done
  printf 'cmd=(%s)\n' "$(printf '%q ' "$@")"
  printf 'dir=%q\n' "$repo"
  cat <<'EOF'
ulimit -l unlimited
export PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash
unset TERM  # the kernel gives init TERM=linux; CMD has no terminal
up() { cut -d' ' -f1 /proc/uptime; }
echo "jmt: CMD starts at uptime $(up) s on $(uname -r)"
(cd -- "$dir" && exec "${cmd[@]}") </dev/null >/run/jmt/stdout 2>/run/jmt/stderr
echo $? >/run/jmt/status
echo "jmt: CMD ended at uptime $(up) s"
sync
echo o >/proc/sysrq-trigger
sleep 60
EOF
} >"$work/share/job"

# KVM only where it can run an ordinary guest (the CPU has vmx or svm); else TCG on one host
# thread, its two CPUs taking turns. On a thread each (thread=multi) they race on code the kernel
# patches while it runs: 6.12 panicked at "invalid opcode" one byte into a jmp in __schedule when a
# trace began (a static key switched), and a JDK 17 died in its own patched C1 code, on 6.1.
accel=${JMT_VM_ACCEL:-}
if [ -z "$accel" ]; then
  if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accel=kvm; else accel=tcg; fi
fi
case $accel in
  kvm) accel_opt=kvm ;;
  tcg) accel_opt=tcg,thread=single ;;
  *) die "JMT_VM_ACCEL is neither kvm nor tcg: $accel" ;;
esac
# share TAG PATH [OPTION]: PATH by 9p (commas doubled, qemu's escape).
shares=()
share() { shares+=(-virtfs "local,path=${2//,/,,},mount_tag=$1,security_model=passthrough,multidevs=remap${3:+,$3}"); }
share hostroot / readonly=on
share jmt "$work/share"
share repo "$repo"
if [ -n "$cache_share" ]; then share cache "$cache"; fi
# tsc=reliable: 5.10 and 6.1 find the emulated CPUs' TSCs unsynchronized and fall back to the
# HPET, whose every read leaves the emulated CPU (Java's first start took twice as long on 5.10).
# no_timer_check: on a loaded host TCG runs the IO-APIC timer check too slowly and the kernel
# panics ("IO-APIC + timer doesn't work!"; seen on 6.12 beside another machine and a test run).
# boot: the machine run once, its console in console.log, qemu's status in qemu_rc. In the
# background, so that a signal to this script (^C, a test's timeout) stops the machine.
boot() {
  timeout -k 10 "$timeout_s" \
    qemu-system-x86_64 -machine q35 -accel "$accel_opt" -cpu max -smp 2 -m 4096 \
    -nographic -no-reboot -nic none -kernel "${kernel[0]}" -initrd "$work/initrd" \
    -append "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check" "${shares[@]}" \
    </dev/null >"$work/console.log" 2>&1 &
  qemu_pid=$!
  qemu_rc=0
  wait "$qemu_pid" || qemu_rc=$?
}
# failure: why the machine stopped without CMD's status.
failure() {
  if ((qemu_rc == 124)); then
    echo "the machine did not finish within $timeout_s s (JMT_VM_TIMEOUT)"
  elif grep -aq 'Kernel panic' "$work/console.log"; then
    echo "the kernel panicked"
  else
    echo "the machine stopped (qemu's status $qemu_rc)"
  fi
}
qemu_pid=
trap 'kill "$qemu_pid" 2>/dev/null; exit 130' INT
trap 'kill "$qemu_pid" 2>/dev/null; exit 143' TERM HUP
boot
# Emulation sometimes crashes a kernel while it boots (6.12 once in tens of boots, in code the
# kernel patches at run time, which TCG's threads can race on): a failure before CMD started
# is tried once more; CMD never runs twice.
if [ ! -f "$work/share/status" ] && ((qemu_rc != 124)) && ! grep -aq 'jmt: CMD starts at uptime' "$work/console.log"; then
  echo "on-kernel.sh $version: $(failure) before the command started; booting once more" >&2
  mv "$work/console.log" "$work/console.1.log"
  boot
fi

if [ -f "$work/share/status" ]; then
  cat "$work/share/stdout"
  cat "$work/share/stderr" >&2
  status=$(cat "$work/share/status")
  [[ $status =~ ^[0-9]+$ ]] || die "the command's status is not a number: $status"
  exit "$status"
fi
# Without the carriage returns and the BIOS's terminal escapes.
tail -n 40 "$work/console.log" | sed 's/\r//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' >&2
if grep -aq 'jmt: CMD starts at uptime' "$work/console.log"; then
  die "$(failure) before the command ended; the console's end is above"
else
  die "$(failure) before the command started; the console's end is above"
fi
