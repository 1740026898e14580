#!/usr/bin/env bash
# Latency percentiles on a real server: Debian's Tomcat 10 (examples/tomcat/tomcat.sh, with
# -XX:+DTraceMethodProbes) serving the skew webapp (examples/tomcat/skew-webapp), whose
# SkewServlet.doGet sleeps 1 ms, every 10th call 20 ms (a counter the test resets). Each call is
# timed with System.nanoTime(): around the sleep (inner), and by SkewServlet.service around the
# call of doGet (site: its entry and return probes, and whatever stops the thread at its return,
# such as a safepoint, inside). The JVM is put on standby under traffic (the flag's traps on every
# call would make the rest of a request milliseconds long), then traced with
# --class demo.server.SkewServlet --json --slower-than 10ms while ab sends N = 401 requests to
# doGet one at a time, between two rounds of N to /none (the same request without doGet: the rest
# of a request).
#
# The truths are the servlet's own timings and ab's, not jmethodtime's. Definitions:
#   - p(q): nearest rank, the ceil(q x N)th smallest: 201 and 397 of 401. ab's table prints
#     stats[N x q] (0-based, rounded to the nearest ms by ap_round_ms): the same ranks for an odd
#     N, so N is odd. Its CSV (-e) prints stats[0.5 + N x q] to the us: ranks 202 and 398.
#   - B = 3.2%: a histogram percentile is the middle of its bucket, within 1/32 of the call of
#     that rank (docs/outputs.md).
#   - C = 100 us: what the probe-cost correction may take out of a call of doGet (it makes at most
#     12 probe events, checked below, at up to 8 us each: the costliest hosts the docs cover). The
#     probes' timing of a call lies inside its site and holds its inner window; the correction
#     takes out at least nothing and at most C. Each call of doGet as the histogram counts it is
#     then within [inner - C, site] of the servlet's timing of it, and so is each rank of the
#     sorted calls. (A CI run had a slow call 109 us over doGet's own end of the sleep: a pause
#     after it, which the site holds.)
# Assertions:
#   1. doGet's calls are exactly N, and the servlet counted N calls, N/10 of them meant slow, N sited.
#   2. slow_calls (doGet's entries plus slow_calls_dropped; none lost) are exactly the calls the
#      servlet timed at 10 ms or more: at least those with inner - C >= 10 ms, at most those with
#      site >= 10 ms (the same number unless a call ended within C of 10 ms, printed); each of
#      them, slowest first, within [inner - C, site] of the servlet's call of that rank.
#   3. doGet's p50 and p99 within the servlet's: (1 - B)(inner_p - C) <= p <= (1 + B) site_p.
#   4. doGet's p50 and p99 against ab's of the same requests: a request holds its doGet call, so
#      p <= (1 + B)(A + 0.5 ms) + C with A ab's table (whole ms), and p <= (1 + B) E_q + C with
#      E_q ab's CSV at q (a later rank); and p >= (1 - B)(E_q-2 - R) - C, R the rest of a request
#      (the larger of ab's p99s of the /none rounds, from its CSV), E_q-2 ranks 193 and 390:
#      8 and 7 requests below p(q), room for the 1% of requests whose rest may exceed R. (On 2
#      busy CPUs R can exceed doGet's p50: ab then bounds p50 from above only.)
# Every figure is printed. The server is stopped and its directory removed whatever happens.
#
# usage: latency_test.sh JMETHODTIME SOURCE_DIR WEBAPP
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (something needed is missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# != 3)); then
  echo "usage: $0 JMETHODTIME SOURCE_DIR WEBAPP" >&2
  exit 2
fi
jmt=$1 src=$2 webapp=$3
need_root_and_btf
need_executable "$jmt" "$jmt (build jmethodtime)"
need_file /usr/share/tomcat10/lib/catalina.jar "Tomcat 10 (apt-get install tomcat10)"
need_file "$webapp/WEB-INF/classes/demo/server/SkewServlet.class" \
  "the skew webapp in $webapp (apt-get install libtomcat10-java, reconfigure and build)"
need_tools ab jq curl java setpriv awk
skip_or_fail_if_missing

# shellcheck source=../../examples/tomcat/tomcat.sh
source "$src/examples/tomcat/tomcat.sh"
# shellcheck source=tomcat_test_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/tomcat_test_setup.sh" || exit 1
work=$(mktemp -d /tmp/jmt-latency-test.XXXXXX)
trap tomcat_test_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

n=401 class=demo/server/SkewServlet
slow_ns=10000000 c_ns=100000

# SkewServlet's methods kept out of their callers' compiled code: switching its class on then
# deoptimizes service and doGet alone, not the request path that inlined them, which would compile again with probe calls in
# every method it inlines and make the rest of a request cost milliseconds of traps.
TC_WEBAPP=$webapp TC_WEBAPP_URL=/skew \
  TC_JAVA_OPTS="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,demo.server.SkewServlet::*" \
  tc_start || fail "Tomcat did not start"
base=${TC_URL%/skew}
note "Tomcat $TC_URL, pid $TC_PID"

ab_run() {  # URL OUT [C]: N requests, C at a time (default 1); every one must get a 200; OUT.csv
  ab -n "$n" -c "${3:-1}" -e "$2.csv" "$1" >"$2" 2>&1 || { cat "$2" >&2; fail "ab $1 failed"; }
  grep -q '^Failed requests: *0' "$2" || { cat "$2" >&2; fail "ab $1: failed requests"; }
  if grep -q '^Non-2xx' "$2"; then cat "$2" >&2; fail "ab $1: responses other than 200"; fi
}
ab_ms() {  # FILE PERCENT: that line of ab's table (whole ms)
  awk -v p="$2%" '$1 == p { print $2 }' "$1"
}
ab_ns() {  # FILE PERCENT: that line of ab's CSV (-e FILE.csv: ms to the us), in ns
  awk -F, -v p="$2" '$1 == p { printf "%.0f\n", $2 * 1e6 }' "$1.csv"
}
servlet_sorted() {  # COLUMN (1 inner, 2 outer, 3 site): the servlet's timings of its calls, in ns, ascending
  tail -n +2 "$work/stats.txt" | awk -v c="$1" '{ print $c }' | sort -n
}
servlet_rank() {  # COLUMN RANK: the servlet's call of that rank
  servlet_sorted "$1" | sed -n "$2p"
}
ms() { awk -v v="$1" 'BEGIN { printf "%.3f", v / 1e6 }'; }

# Warm up, reset the servlet's record and counter, then standby under traffic of /none alone (the
# counter stays at 0; the reset's own code path is deoptimized by standby and compiled again).
for _ in 1 2 3; do ab_run "$TC_URL" "$work/warm.txt" 2; ab_run "$base/none" "$work/warm.txt" 2; done
curl -sf -m 10 "$base/stats?reset" >/dev/null || fail "the servlet's reset failed"
ab -t 600 -n 100000000 -c 1 "$base/none" >/dev/null 2>&1 &
bg=$!
"$jmt" standby -p "$TC_PID" >"$work/standby.txt" 2>"$work/standby.err" ||
  { cat "$work/standby.err" >&2; fail "standby failed"; }
stop_traffic
sed 's/^/   /' "$work/standby.txt"
sleep 2

# --- the trace -------------------------------------------------------------------------------------
out=$work/trace.json
rm -f "$out.err"
"$jmt" -p "$TC_PID" --class demo.server.SkewServlet --json -o "$out" --slower-than 10ms 2>"$out.err" &
jmt_pid=$!
for _ in $(seq 900); do grep -q '^Tracing' "$out.err" 2>/dev/null && break; sleep 0.1; done
grep -q '^Tracing' "$out.err" || { cat "$out.err" >&2; fail "jmethodtime did not attach"; }
started=$SECONDS
ab_run "$base/none" "$work/none1.txt"
ab_run "$TC_URL" "$work/ab.txt"
ab_run "$base/none" "$work/none2.txt"
took=$((SECONDS - started))
kill -INT "$jmt_pid"
wait "$jmt_pid" || { rc=$?; cat "$out.err" >&2; fail "jmethodtime exited with $rc"; }
jmt_pid=""
sed 's/^/   /' "$out.err"
curl -sf -m 10 "$base/stats" >"$work/stats.txt" || fail "the servlet's record could not be read"

# --- 1. counts -------------------------------------------------------------------------------------
row() {  # EXPR of doGet's row
  jq -r --arg c "$class" "[.methods[] | select(.class == \$c and .method == \"doGet\")][0] | $1" "$out"
}
read -r calls events p50 p99 < <(row '"\(.calls) \(.events_incl) \(.latency.p50_ns) \(.latency.p99_ns)"')
read -r _ servlet_calls _ meant_slow _ kept _ sited < "$work/stats.txt"
note "ab: $n requests to doGet between two rounds of $n to /none, in $took s; jmethodtime: $calls calls of doGet, the servlet: $servlet_calls ($meant_slow meant slow, $sited sited)"
((calls == n)) || fail "doGet: $calls calls for $n requests"
((servlet_calls == n && kept == n && sited == n)) ||
  fail "the servlet counted $servlet_calls calls (kept $kept, sited $sited) for $n requests"
((meant_slow == n / 10)) || fail "the servlet meant $meant_slow calls to be slow, not $((n / 10))"
cost=$(jq '.probe_cost.traced_event_ns' "$out")
note "doGet: $(awk -v e="$events" -v n="$n" 'BEGIN { printf "%.1f", e / n }') probe events per call inside it; the trace: $(($(jq '.overhead.events' "$out") / (3 * n))) per request, at $cost ns per traced event"
((events <= 12 * n)) || fail "doGet made $events probe events in $n calls: over 12 per call, C does not cover its correction"

# --- 2. slow calls ---------------------------------------------------------------------------------
read -r sure maybe < <(tail -n +2 "$work/stats.txt" |
  awk -v t="$slow_ns" -v c="$c_ns" '$1 - c >= t { s++ } $3 >= t { m++ } END { print s + 0, m + 0 }')
read -r listed dropped lost < <(jq -r --arg c "$class" \
  '"\([.slow_calls[] | select(.class == $c and .method == "doGet")] | length) \(.diagnostics.slow_calls_dropped) \(.diagnostics.slow_calls_lost)"' "$out")
slow=$((listed + dropped))
note "slow calls (10 ms or more): jmethodtime $slow ($listed listed, $dropped dropped), the servlet's timing $sure (to $maybe by the site); $meant_slow meant slow"
((lost == 0)) || fail "$lost slow calls lost (the ring buffer was full)"
((sure >= meant_slow)) || fail "the servlet timed only $sure calls at 10 ms or more, of the $meant_slow meant slow"
((slow >= sure && slow <= maybe)) || fail "jmethodtime found $slow slow calls of doGet; the servlet timed $sure (to $maybe)"
bad=$(jq -r --arg c "$class" '[.slow_calls[] | select(.class == $c and .method == "doGet") | .wall_ns] | sort | reverse | .[]' "$out" |
  paste - <(servlet_sorted 1 | sort -n -r | head -n "$listed") <(servlet_sorted 3 | sort -n -r | head -n "$listed") |
  awk -v c="$c_ns" '$1 < $2 - c || $1 > $3 + c { print NR ": " $1 " ns against the servlet'"'"'s " $2 " to " $3 }' | head -3)
[ -z "$bad" ] || fail "slow calls of doGet, slowest first, outside the servlet's timing of that rank: $bad"

# --- 3 and 4. percentiles --------------------------------------------------------------------------
r_ns=$(ab_ns "$work/none1.txt" 99) r2_ns=$(ab_ns "$work/none2.txt" 99)
((r2_ns > r_ns)) && r_ns=$r2_ns
note "ab, /none before and after: p50 $(ab_ms "$work/none1.txt" 50) and $(ab_ms "$work/none2.txt" 50) ms, p99 $(ab_ms "$work/none1.txt" 99) and $(ab_ms "$work/none2.txt" 99) ms; R = $(ms "$r_ns") ms"
check() {  # NAME Q RANK GOT_NS
  local name=$1 q=$2 rank=$3 got=$4 inner outer site a lo hi ab_lo ab_hi table_hi
  inner=$(servlet_rank 1 "$rank") outer=$(servlet_rank 2 "$rank") site=$(servlet_rank 3 "$rank")
  a=$(ab_ms "$work/ab.txt" "$q")
  read -r lo hi ab_lo ab_hi table_hi < <(awk -v i="$inner" -v s="$site" -v c="$c_ns" -v r="$r_ns" -v a="$a" \
    -v e="$(ab_ns "$work/ab.txt" "$q")" -v e2="$(ab_ns "$work/ab.txt" $((q - 2)))" 'BEGIN { b = 0.032
    printf "%.0f %.0f %.0f %.0f %.0f\n", (1 - b) * (i - c), (1 + b) * s, (1 - b) * (e2 - r) - c, (1 + b) * e + c,
      (1 + b) * (a * 1e6 + 5e5) + c }')
  note "doGet $name: jmethodtime $(ms "$got") ms; the servlet $(ms "$inner") (inner), $(ms "$outer") (outer), $(ms "$site") ms (site), bounds $(ms "$lo") to $(ms "$hi"); ab $a ms ($(ms "$(ab_ns "$work/ab.txt" "$q")") in its CSV), bounds $(ms "$ab_lo") to $(ms "$ab_hi") (the table's: up to $(ms "$table_hi"))"
  ((got >= lo && got <= hi)) || fail "doGet $name, $got ns, is not within $lo to $hi ns (the servlet's timing of the call of rank $rank)"
  ((got >= ab_lo && got <= ab_hi && got <= table_hi)) ||
    fail "doGet $name, $got ns, is not within $ab_lo to $ab_hi ns (ab's $name: $a ms in its table, up to $table_hi ns)"
}
check p50 50 $(((n + 1) / 2)) "$p50"
check p99 99 $(((99 * n + 99) / 100)) "$p99"
note "pass"
