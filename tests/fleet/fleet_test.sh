#!/usr/bin/env bash
# End to end: three "hosts" on this machine, each its own network and UTS namespace
# with its own hostname, sshd (Debian's openssh-server, a throwaway host key and authorized key)
# listening on the namespace's veth address, and its own JVM (demo.abc.FixedWork with a known
# call count). Debian's ansible-playbook runs examples/fleet/jmethodtime.yml over real ssh from a
# controller namespace: it copies jmethodtime to each host, finds the JVM with pgrep, traces it,
# fetches the JSON reports and runs jmethodtime merge. The merged report must hold the exact
# summed counts and one source per host (its hostname and its JVM's pid). Then jmethodtime diff
# of two hosts. Everything (namespaces, sshd, JVMs, temporary files) is removed on any exit.
#
# usage: fleet_test.sh JMETHODTIME CLASSES JAVA SOURCE_DIR
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (ansible or sshd missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# != 4)); then
  echo "usage: $0 JMETHODTIME CLASSES JAVA SOURCE_DIR" >&2
  exit 2
fi
jmt=$(readlink -f "$1") classes=$(readlink -f "$2") java=$3 src=$(readlink -f "$4")
playbook=$src/examples/fleet/jmethodtime.yml

need_root_and_btf
need_tool ansible-playbook "ansible-playbook (apt-get install ansible)"
need_executable /usr/sbin/sshd "sshd (apt-get install openssh-server)"
need_tools ssh-keygen ip unshare nsenter jq pgrep "$java"
skip_or_fail_if_missing

hosts=(1 2 3)
iterations=(0 2000 3000 4000)  # calls of a() on host N; b() 2x, c() 5x that
tag=$$
ctl=jmt-fctl-$tag
work=$(mktemp -d /tmp/jmt-fleet-test.XXXXXX)
declare -A jvm_pid sshd_pid fifo_fd
ansible_pid=""
descendants() {
  local c
  for c in $(pgrep -P "$1"); do descendants "$c"; echo "$c"; done
}
cleanup() {
  local rc=$? n
  [ -n "$ansible_pid" ] && kill "$ansible_pid" 2>/dev/null
  # ssh sessions (children of this run's sshd listeners) and ansible's ssh multiplexers.
  for n in "${hosts[@]}"; do
    [ -n "${sshd_pid[$n]:-}" ] && descendants "${sshd_pid[$n]}" | xargs -r kill 2>/dev/null
  done
  for n in "${hosts[@]}"; do
    [ -n "${jvm_pid[$n]:-}" ] && kill -KILL "${jvm_pid[$n]}" 2>/dev/null
    [ -n "${sshd_pid[$n]:-}" ] && kill "${sshd_pid[$n]}" 2>/dev/null
  done
  # Any jmethodtime still running from this run's directories (ansible killed mid-trace).
  for p in $(pgrep -f -- "$work/" 2>/dev/null); do kill "$p" 2>/dev/null; done
  for n in "${hosts[@]}"; do ip netns del "jmt-fh$n-$tag" 2>/dev/null; done
  ip netns del "$ctl" 2>/dev/null
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p /run/sshd "$work/home" "$work/reports"
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || fail "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -f "$work/id" || fail "ssh-keygen (client key)"
cp "$work/id.pub" "$work/authorized_keys"

ip netns add "$ctl" || fail "ip netns add $ctl"
ip -n "$ctl" link set lo up
inventory=$work/inventory.ini
echo "[jvms]" > "$inventory"
for n in "${hosts[@]}"; do
  ns=jmt-fh$n-$tag host=jmt-host$n addr=10.231.$n.2
  ip netns add "$ns" || fail "ip netns add $ns"
  ip -n "$ns" link set lo up
  ip link add "jf$n-$tag" netns "$ctl" type veth peer name eth0 netns "$ns" || fail "veth for $ns"
  ip -n "$ctl" addr add "10.231.$n.1/24" dev "jf$n-$tag"
  ip -n "$ctl" link set "jf$n-$tag" up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  cat > "$work/sshd_config.$n" <<CFG
ListenAddress $addr
Port 22
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/sshd.$n.pid
Subsystem sftp internal-sftp
CFG
  # nsenter, not ip netns exec (which forks): $! is then sshd's and the JVM's own pid.
  nsenter --net="/run/netns/$ns" unshare --uts sh -c "hostname $host && exec /usr/sbin/sshd -D -e -f $work/sshd_config.$n" \
    2> "$work/sshd.$n.log" &
  sshd_pid[$n]=$!
  # The JVM: its own namespaces too, waiting on a FIFO for the signal to run its fixed call tree.
  mkfifo "$work/go.$n"
  exec {fd}<>"$work/go.$n"
  fifo_fd[$n]=$fd
  nsenter --net="/run/netns/$ns" unshare --uts sh -c "hostname $host && exec $java -Djmt.fleet.host=$host \
    -XX:+DTraceMethodProbes -cp $classes demo.abc.FixedWork ${iterations[$n]} 5" \
    < "$work/go.$n" > "$work/jvm.$n.out" 2>&1 &
  jvm_pid[$n]=$!
  echo "$host ansible_host=$addr jmt_match='-Djmt.fleet.host=$host ' jmt_workdir=$work/$host ansible_remote_tmp=$work/$host-tmp" >> "$inventory"
done
cat >> "$inventory" <<INV
[jvms:vars]
ansible_user=root
ansible_ssh_private_key_file=$work/id
ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
ansible_python_interpreter=/usr/bin/python3
INV

for n in "${hosts[@]}"; do
  for _ in $(seq 600); do grep -q READY "$work/jvm.$n.out" 2>/dev/null && break; sleep 0.1; done
  grep -q READY "$work/jvm.$n.out" || fail "JVM $n not ready: $(cat "$work/jvm.$n.out")"
  kill -0 "${sshd_pid[$n]}" 2>/dev/null || fail "sshd $n: $(cat "$work/sshd.$n.log")"
done
note "3 hosts up: $(ip netns list | grep -c "$tag") namespaces; JVMs ${jvm_pid[*]}"

export HOME=$work/home ANSIBLE_LOCAL_TEMP=$work/ansible-local ANSIBLE_SSH_CONTROL_PATH_DIR=$work/cp \
  ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=False
ip netns exec "$ctl" ansible-playbook -i "$inventory" "$playbook" -e "jmt_binary=$jmt" \
  -e jmt_duration=120 -e '{"jmt_options": "--package demo/abc"}' -e "jmt_reports=$work/reports" \
  > "$work/ansible.log" 2>&1 &
ansible_pid=$!

# Each host's JVM runs once its tracer is attached ("Tracing" in the host's jmethodtime.log).
for n in "${hosts[@]}"; do
  log=$work/jmt-host$n/jmethodtime.log
  for _ in $(seq 1200); do
    grep -q '^Tracing' "$log" 2>/dev/null && break
    kill -0 "$ansible_pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^Tracing' "$log" 2>/dev/null ||
    fail "no trace started on host $n: $(cat "$log" 2>&1; ls -la "$work/jmt-host$n"; ps -ef | grep -F "$work" | grep -v grep; cat "$work/ansible.log")"
  echo go >&"${fifo_fd[$n]}"
done
wait "$ansible_pid"
rc=$?
ansible_pid=""
cat "$work/ansible.log" | tail -8
((rc == 0)) || fail "ansible-playbook exited $rc: $(cat "$work/ansible.log"; for n in "${hosts[@]}"; do
  ls -la "$work/jmt-host$n"; cat "$work/jmt-host$n/jmethodtime.log" "$work/jvm.$n.out"; done)"
for n in "${hosts[@]}"; do grep -q '^DONE' "$work/jvm.$n.out" || fail "JVM $n did not finish"; done

merged=$work/reports/merged.json
[ -s "$merged" ] || fail "no merged report"
cat "$work/reports/merged.txt"
calls() { jq -r --arg m "$1" '[.methods[] | select(.class == "demo/abc/FixedWork" and .method == $m) | .calls] | add' "$merged"; }
total=$((iterations[1] + iterations[2] + iterations[3]))
[ "$(calls a)" = "$total" ] || fail "a(): $(calls a) calls, expected $total"
[ "$(calls b)" = "$((2 * total))" ] || fail "b(): $(calls b) calls, expected $((2 * total))"
[ "$(calls c)" = "$((5 * total))" ] || fail "c(): $(calls c) calls, expected $((5 * total))"
[ "$(jq '.sources | length' "$merged")" = 3 ] || fail "sources: $(jq -c .sources "$merged")"
for n in "${hosts[@]}"; do
  pid=$(jq -r --arg h "jmt-host$n" '.sources[] | select(.hostname == $h) | .pid' "$merged")
  [ "$pid" = "${jvm_pid[$n]}" ] || fail "source jmt-host$n: pid '$pid', expected ${jvm_pid[$n]}"
  [ "$(jq -r --arg h "jmt-host$n" '.sources[] | select(.hostname == $h) | .main_class' "$merged")" = demo.abc.FixedWork ] ||
    fail "source jmt-host$n: main class"
done
paths_a=$(jq '[.paths[] | select(.frames[-1] == "demo.abc.FixedWork.a()") | .calls] | add' "$merged")
[ "$paths_a" = "$total" ] || fail "merged paths: a() $paths_a calls, expected $total"
note "merged: a() $total, b() $((2 * total)), c() $((5 * total)) calls over 3 sources, as each JVM made them"

"$jmt" diff "$work/reports/jmt-host1.json" "$work/reports/jmt-host3.json" --json > "$work/diff.json" ||
  fail "jmethodtime diff"
[ "$(jq -r '.methods[] | select(.method == "a") | "\(.base.calls) \(.new.calls)"' "$work/diff.json")" = \
  "${iterations[1]} ${iterations[3]}" ] || fail "diff: $(jq -c '.methods' "$work/diff.json")"
"$jmt" diff "$work/reports/jmt-host1.json" "$work/reports/jmt-host3.json" | head -8
echo "PASS"
