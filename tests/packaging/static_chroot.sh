#!/usr/bin/env bash
# What we ship, proven for real: the JMT_STATIC build is a static executable, `cpack -G DEB`
# makes jmethodtime_<version>_<arch>.deb with the binary and the man page, and the binary
# taken out of that .deb traces a JVM from inside an empty root (a tmpfs holding only the
# binary, /proc and /sys) where there is no libbpf, libelf, libstdc++ or libc at all; the JVM
# runs without -XX:+DTraceMethodProbes, so the agent the binary carries switches its probes on.
#
# usage: static_chroot.sh SOURCE_DIR BUILD_DIR JMT_STATIC JAVA_CLASSES JAVA
#   BUILD_DIR is ctest's build directory. With JMT_STATIC=ON it is the static build itself;
#   otherwise the static build is configured and built in BUILD_DIR/packaging-static
#   (kept between runs, so a second run only relinks what changed).
# Needs root and BPF (as the integration tests). Exit 77 (skip) only when BPF is unavailable
# and CI is not true; everything else missing is a failure.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# != 5)); then
  echo "usage: $0 SOURCE_DIR BUILD_DIR JMT_STATIC JAVA_CLASSES JAVA" >&2
  exit 2
fi
src=$1 build=$2 static_on=$3 classes=$4 java=$5
iterations=2000  # calls of a(); each makes 2 calls of b() and 5 of c()

# --- BPF (root and BTF): the only reason to skip, and never on CI ------------------------------
need_root_and_btf
skip_or_fail_if_missing

for tool in cmake cpack ldd readelf unshare chroot mount dpkg-deb dpkg zcat mkfifo jq "$java"; do
  command -v "$tool" >/dev/null || fail "$tool not found (run .ci/install-deps)"
done
[ -d "$classes/demo/abc" ] || fail "no compiled examples in $classes (build the jmt_java_examples target)"

# --- everything this run makes lives in $work; the JVM and the chrooted tracer die with it ----
work=$(mktemp -d /tmp/jmt-packaging.XXXXXX)
jvm_pid="" jmt_pid=""
cleanup() {
  local rc=$?
  exec 3>&-
  for p in $jmt_pid $jvm_pid; do kill -KILL "$p" 2>/dev/null || true; done
  for p in $jmt_pid $jvm_pid; do wait "$p" 2>/dev/null || true; done
  # The chroot's mounts are in the tracer's own mount namespace and end with it; a leftover
  # in this namespace (none expected) would keep rm from emptying $work.
  if grep -q " $work/" /proc/self/mounts; then
    grep " $work/" /proc/self/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t_start=$SECONDS

# --- (a) the static build ----------------------------------------------------------------------
if [ "$static_on" = ON ] || [ "$static_on" = TRUE ] || [ "$static_on" = 1 ]; then
  sbuild=$build
  note "static build: reusing $sbuild (JMT_STATIC is on)"
  cmake --build "$sbuild" -j2 --target jmethodtime jmethodtime_man >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log" >&2; fail "cmake --build $sbuild failed"; }
else
  sbuild=$build/packaging-static
  note "static build: configuring and building $sbuild"
  { cmake -S "$src" -B "$sbuild" -DJMT_STATIC=ON -DJMT_BUILD_TESTS=OFF &&
    cmake --build "$sbuild" -j2; } >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log" >&2; fail "the JMT_STATIC=ON build failed (log above)"; }
fi
if grep -i "warning: Using '.*' in statically linked" "$work/build.log"; then
  fail "glibc warns about a function that needs its shared libraries at run time (above)"
fi
note "static build took $((SECONDS - t_start)) s"
bin=$sbuild/jmethodtime
[ -x "$bin" ] || fail "no $bin"

# --- (b) static: no program interpreter, no dynamic section, ldd agrees ------------------------
assert_static() {
  local f=$1 out
  out=$(ldd "$f" 2>&1) && fail "ldd $f: $out"
  grep -q "not a dynamic executable" <<<"$out" || fail "ldd $f: $out"
  out=$(readelf -lW "$f")
  grep -q INTERP <<<"$out" && fail "$f has a program interpreter (INTERP)"
  out=$(readelf -d "$f")
  grep -q "There is no dynamic section" <<<"$out" || fail "$f has a dynamic section: $out"
  if command -v file >/dev/null; then
    out=$(file -b "$f")
    grep -q "statically linked" <<<"$out" || fail "file $f: $out"
  fi
  note "$f: static ($(stat -c %s "$f") bytes; ldd: $(ldd "$f" 2>&1 | tr -d '\t'))"
}
assert_static "$bin"
version_line=$("$bin" --version)
version=${version_line#jmethodtime }
if [ -z "$version" ] || [ "$version" = "$version_line" ]; then fail "--version printed '$version_line'"; fi

# --- (d) the .deb --------------------------------------------------------------------------------
arch=$(dpkg --print-architecture)
(cd "$sbuild" && cpack -G DEB -B "$work/deb") >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$work/deb/jmethodtime_${version}_${arch}.deb
[ -f "$deb" ] || { ls -la "$work/deb" >&2; fail "cpack made no $(basename "$deb")"; }
note "$(basename "$deb"): $(stat -c %s "$deb") bytes"
dpkg-deb -c "$deb" | tee "$work/deb.list"
grep -q " \./usr/sbin/jmethodtime$" "$work/deb.list" || fail "the .deb has no ./usr/sbin/jmethodtime"
grep -q " \./usr/share/man/man8/jmethodtime\.8\.gz$" "$work/deb.list" ||
  fail "the .deb has no ./usr/share/man/man8/jmethodtime.8.gz"
dpkg-deb -f "$deb" Package Version Architecture Maintainer Section Depends | tee "$work/deb.control"
grep -qx "Version: $version" "$work/deb.control" || fail "control: Version is not $version"
grep -qx "Section: utils" "$work/deb.control" || fail "control: Section is not utils"
grep -q "^Maintainer: ..*<..*@..*>" "$work/deb.control" || fail "control: no Maintainer"
grep -q "^Depends:" "$work/deb.control" && fail "control: a static binary depends on nothing"
[ -n "$(dpkg-deb -f "$deb" Description)" ] || fail "control: no Description"

dpkg-deb -x "$deb" "$work/x"
shipped=$work/x/usr/sbin/jmethodtime
assert_static "$shipped"
[ "$("$shipped" --version)" = "jmethodtime $version" ] || fail "the shipped binary's --version: $("$shipped" --version)"
man_gz=$work/x/usr/share/man/man8/jmethodtime.8.gz
zcat "$man_gz" >"$work/man.roff" || fail "$man_gz is not gzip"
if command -v man >/dev/null; then  # rendered, overstrike removed
  LC_ALL=C MANWIDTH=100 man -P cat -l "$man_gz" 2>/dev/null | sed 's/.\x08//g' >"$work/man.txt" ||
    fail "man -l $man_gz failed"
else  # the roff source with \- made plain
  sed 's/\\-/-/g' "$work/man.roff" >"$work/man.txt"
fi
for want in jmethodtime --package "-p PID" --version; do
  grep -qF -- "$want" "$work/man.txt" || fail "the man page has no '$want'"
done
grep -q '^\.TH JMETHODTIME "8"' "$work/man.roff" || fail "the man page is not section 8"
note "man page: $(wc -l <"$work/man.txt") lines rendered, NAME: $(grep -A1 '^\.SH NAME' "$work/man.roff" | tail -1)"

# --- (c) the shipped binary in an empty root ----------------------------------------------------
root=$work/root
mkdir "$root"
mkfifo "$work/go"
# The JVM runs on the host, started without -XX:+DTraceMethodProbes: the shipped binary switches
# its probes on with the agent it carries. It times itself untraced, prints READY, waits for a line.
"$java" -cp "$classes" demo.abc.FixedWork "$iterations" 5 \
  <"$work/go" >"$work/jvm.out" 2>"$work/jvm.err" &
jvm_pid=$!
traced_pid=$jvm_pid
exec 3>"$work/go"
for _ in $(seq 600); do
  grep -q READY "$work/jvm.out" && break
  kill -0 "$jvm_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q READY "$work/jvm.out" || { cat "$work/jvm.err" >&2; fail "the JVM did not print READY"; }

# A new mount namespace (private propagation: nothing leaks to the host, and every mount ends
# with the tracer): a tmpfs with only the binary, /proc and /sys bind-mounted, then chroot.
# The tracer stops when the JVM exits (-d bounds it if it does not).
cat >"$work/inner.sh" <<'EOF'
set -eu
root=$1 bin=$2 pid=$3
mount -t tmpfs -o size=64m,mode=0755 jmt-root "$root"
install -m 0755 "$bin" "$root/jmethodtime"
mkdir "$root/proc" "$root/sys"
mount --rbind /proc "$root/proc"
mount --rbind /sys "$root/sys"
echo "root of the chroot:"
ls -la "$root"
echo "every file in it outside /proc and /sys:"
find "$root" -xdev
if find "$root" -xdev \( -name 'lib*' -o -name 'ld-linux*' -o -name '*.so*' \) | grep .; then
  echo "the chroot has libraries (above)" >&2
  exit 1
fi
chroot "$root" /jmethodtime --version
exec chroot "$root" /jmethodtime -p "$pid" --package demo/abc --json -d 120
EOF
unshare --mount --propagation private bash "$work/inner.sh" "$root" "$shipped" "$jvm_pid" \
  >"$work/jmt.out" 2>"$work/jmt.err" &
jmt_pid=$!
for _ in $(seq 300); do
  grep -q '^Tracing' "$work/jmt.err" && break
  kill -0 "$jmt_pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q '^Tracing' "$work/jmt.err"; then
  cat "$work/jmt.out" "$work/jmt.err" >&2
  fail "the chrooted jmethodtime did not start tracing"
fi
echo go >&3
exec 3>&-
jvm_rc=0
wait "$jvm_pid" || jvm_rc=$?
jvm_pid=""
jmt_rc=0
wait "$jmt_pid" || jmt_rc=$?
jmt_pid=""
sed -n '1,/^{/p' "$work/jmt.out" | sed '$d'  # what the namespace printed before the JSON
cat "$work/jmt.err"
((jvm_rc == 0)) || { cat "$work/jvm.err" >&2; fail "the JVM exited with $jvm_rc"; }
grep -q DONE "$work/jvm.out" || fail "the JVM printed no DONE"
((jmt_rc == 0)) || fail "the chrooted jmethodtime exited with $jmt_rc"
grep -qx "jmethodtime $version" "$work/jmt.out" || fail "no 'jmethodtime $version' from the chroot"
grep -q "^Switched pid $traced_pid's method probes on" "$work/jmt.err" ||
  fail "the chrooted jmethodtime did not switch the probes on"

# The report: one JSON document after what the namespace printed.
sed -n '/^{/,$p' "$work/jmt.out" >"$work/report.json"
jq -r '.methods[] | "\(.class).\(.method) \(.calls)"' "$work/report.json" >"$work/calls.txt" ||
  fail "the chrooted report is not JSON: $(head -c 300 "$work/report.json")"
note "calls in the chrooted report:"
cat "$work/calls.txt"
expect_calls() {
  local got
  got=$(awk -v k="demo/abc/FixedWork.$1" '$1 == k { print $2 }' "$work/calls.txt")
  [ "$got" = "$2" ] || fail "demo/abc/FixedWork.$1: $got calls, expected $2"
}
expect_calls a "$iterations"
expect_calls b "$((2 * iterations))"
expect_calls c "$((5 * iterations))"
if awk '$1 !~ /^demo\/abc\// { bad = 1 } END { exit !bad }' "$work/calls.txt"; then
  fail "methods outside demo/abc in the report"
fi
note "PASS in $((SECONDS - t_start)) s"
