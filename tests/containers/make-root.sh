#!/usr/bin/env bash
# The root the JDK-matrix tests run JVMs from, in a container or a plain chroot: Debian trixie
# with its OpenJDK 21 and 25 (both with the DTrace probes and a libjvm symbol table), Tomcat 10,
# pgjdbc and procps, made by mmdebstrap when missing and kept between runs.
#
# usage: make-root.sh [ROOT]      (default /var/cache/jmethodtime/trixie-root)
#
# ROOT/.jmethodtime-root records what it was made from (suite, variant, mirror, packages). A
# root whose record differs, or that has none (half made), is made again: into ROOT.new, which
# gets the record last, then moved into place by renames (ROOT to ROOT.old, ROOT.new to ROOT),
# so a reader finds either the old root or the new one, each whole. One maker at a time
# (ROOT.lock). Nothing mounted under a root (a test's /proc) is removed with it: those mounts
# are detached first, and the removal stays on the root's filesystem.
#
# Exit 0: ROOT is ready. 77 (skip): root or mmdebstrap missing, outside CI. 1: anything else,
# or anything missing under CI=true. About 80 s and 1.1 GB on a 2-core VM with Debian's mirror.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# > 1)); then
  echo "usage: $0 [ROOT]" >&2
  exit 2
fi
root=${1:-/var/cache/jmethodtime/trixie-root}
case $root in
  /*/*) ;;
  *) echo "make-root.sh: ROOT must be an absolute path below a directory, not '$root'" >&2; exit 2 ;;
esac
root=${root%/}
suite=trixie
variant=apt
mirror=http://deb.debian.org/debian
packages=openjdk-21-jdk-headless,openjdk-25-jdk-headless,tomcat10,libpostgresql-jdbc-java,procps
stamp_name=.jmethodtime-root
record="suite=$suite variant=$variant mirror=$mirror packages=$packages"

up_to_date() { [ -f "$root/$stamp_name" ] && [ "$(cat "$root/$stamp_name")" = "$record" ]; }

if up_to_date; then
  note "$root is ready ($(cat "$root/$stamp_name"))"
  exit 0
fi

[ "$(id -u)" = 0 ] || missing+=("root (run the tests as root)")
need_tool mmdebstrap "mmdebstrap (apt-get install mmdebstrap, or .ci/install-deps)"
skip_or_fail_if_missing

# Detaches whatever is mounted under $1 (deepest first), then removes it without leaving its
# filesystem.
remove_tree() {
  local dir=$1 mnt
  [ -e "$dir" ] || return 0
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mnt; do umount -l "$mnt" || fail "cannot detach $mnt"; done
  rm -rf --one-file-system "$dir"
  [ ! -e "$dir" ] || fail "cannot remove $dir"
}

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
if up_to_date; then  # made by another maker while this one waited
  note "$root is ready"
  exit 0
fi
remove_tree "$root.new"
remove_tree "$root.old"
start=$(date +%s)
note "making $root with mmdebstrap: $record"
mmdebstrap --quiet --variant="$variant" --include="$packages" "$suite" "$root.new" "$mirror" ||
  fail "mmdebstrap could not make $root.new (a mirror at $mirror is needed)"
for jdk in 21 25; do
  [ -x "$root.new/usr/lib/jvm/java-$jdk-openjdk-amd64/bin/java" ] || fail "no JDK $jdk in $root.new"
done
printf '%s\n' "$record" >"$root.new/$stamp_name"
if [ -e "$root" ]; then
  mv -T "$root" "$root.old"
fi
mv -T "$root.new" "$root"
remove_tree "$root.old"
note "made $root in $(($(date +%s) - start)) s ($(du -sh --one-file-system "$root" | cut -f1))"
