#!/usr/bin/env bash
# Checks a jmethodtime --pprof file with Go's own reader, go tool pprof (Debian: golang-go).
#
# usage: check_pprof.sh FILE.pb.gz CALLS WALL_NS CPU_NS [FUNCTION INDEX FLAT CUM]...
#
#   CALLS WALL_NS CPU_NS  the profile's expected totals (all calls; the roots' inclusive times)
#   FUNCTION INDEX FLAT CUM
#                         the row of FUNCTION (the frame label, e.g. 'demo.abc.FixedWork.a()')
#                         in `go tool pprof -top -sample_index=INDEX` (INDEX: calls, wall or cpu)
#                         must show FLAT (exclusive) and CUM (inclusive); times in ns
#
# Also checks that pprof reads the file without a warning, its sample types and
# default type, and that -raw's samples add up to the totals. Values are compared
# exactly: pprof prints times with two decimals of the unit asked for (-unit=ns),
# exact below 2^53 ns (104 days).
#
# Exit status: 0 all checks pass; 1 a check failed; 2 usage; 77 go is not installed
# (ctest's SKIP_RETURN_CODE) unless CI=true, where a missing go is a failure.
set -uo pipefail

go=${GO:-go}
if (($# < 4 || ($# - 4) % 4 != 0)); then
  sed -n '3,10p' "$0" >&2
  exit 2
fi
file=$1 calls=$2 wall=$3 cpu=$4
shift 4

if ! command -v "$go" >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: '$go' not found: CI=true needs it (apt-get install golang-go)" >&2
    exit 1
  fi
  echo "SKIP: '$go' not found, cannot run go tool pprof (apt-get install golang-go)"
  exit 77
fi
[ -r "$file" ] || { echo "FAIL: cannot read $file" >&2; exit 1; }

failed=0
fail() {
  echo "FAIL: $*" >&2
  failed=1
}

# run_pprof VAR ARGS...: VAR = the output of go tool pprof ARGS FILE. pprof reports
# a problem with a profile (a mapping without a binary, a symbolization attempt, ...)
# on stderr even when it exits 0: any stderr output is a failure.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run_pprof() {
  local var=$1 pprof_out rc
  shift
  pprof_out=$("$go" tool pprof "$@" "$file" 2>"$err")
  rc=$?
  if ((rc != 0)) || [ -s "$err" ]; then
    fail "go tool pprof $* $file: exit $rc: $(cat "$err")"
  fi
  printf -v "$var" "%s" "$pprof_out"
}

# -raw: "calls/count wall/nanoseconds[dflt] cpu/nanoseconds runq/nanoseconds blocked/nanoseconds"
# then one line per sample "  CALLS WALL CPU RUNQ BLOCKED: LOCATION_IDS", up to "Locations".
run_pprof raw -raw
header=$(printf '%s\n' "$raw" | sed -n '/^Samples:$/{n;p;q}')
want_types="calls/count wall/nanoseconds[dflt] cpu/nanoseconds runq/nanoseconds blocked/nanoseconds"
[ "$header" = "$want_types" ] || fail "sample types: got '$header', want '$want_types'"
grep -qx 'PeriodType: calls count' <<<"$raw" || fail "period type is not 'calls count'"
sums=$(printf '%s\n' "$raw" | awk '
  /^Samples:$/ { in_samples = 1; getline; next }
  /^Locations$/ { in_samples = 0 }
  in_samples && /:/ { n++; c += $1; w += $2; u += $3 }
  END { printf "%d %.0f %.0f %.0f", n, c, w, u }')
read -r samples sum_calls sum_wall sum_cpu <<<"$sums"
((samples > 0)) || fail "no samples in -raw output"
[ "$sum_calls $sum_wall $sum_cpu" = "$calls $wall $cpu" ] ||
  fail "-raw sample sums (calls wall cpu): got $sum_calls $sum_wall $sum_cpu, want $calls $wall $cpu"
echo "ok: -raw: $samples samples, sums calls=$sum_calls wall=${sum_wall}ns cpu=${sum_cpu}ns"

# "Showing nodes accounting for X, 100% of TOTAL total" in -top, per sample index.
declare -A top
for index in calls wall cpu; do
  unit=(-unit=ns)
  [ "$index" = calls ] && unit=()
  run_pprof out -top -sample_index="$index" "${unit[@]}" -nodecount=0 -nodefraction=0
  top[$index]=$out
  grep -qx "Type: $index" <<<"${top[$index]}" || fail "-top -sample_index=$index: no 'Type: $index' line"
  case $index in calls) want=$calls ;; wall) want=${wall}ns ;; cpu) want=${cpu}ns ;; esac
  total=$(sed -n 's/^Showing nodes accounting for .* of \(.*\) total$/\1/p' <<<"${top[$index]}")
  [ "$total" = "$want" ] || fail "-top -sample_index=$index: total $total, want $want"
done
run_pprof out -top -nodecount=1
default_type=$(sed -n 's/^Type: //p' <<<"$out")
[ "$default_type" = wall ] || fail "default sample type: got '$default_type', want wall"

# A number as pprof printed it, without its unit: "25000000ns" -> 25000000; "1.50ms" stays (not exact).
strip_unit() { sed 's/^\([0-9][0-9]*\)[a-z]*$/\1/' <<<"$1"; }

while (($#)); do
  name=$1 index=$2 want_flat=$3 want_cum=$4
  shift 4
  if [ -z "${top[$index]+set}" ]; then
    fail "unknown sample index '$index' (calls, wall or cpu)"
    continue
  fi
  # Rows: "flat flat% sum% cum cum% NAME", NAME the rest of the line (labels hold spaces).
  row=$(awk -v name="$name" '
    /^ *flat +flat%/ { rows = 1; next }
    rows {
      line = $0; sub(/^ +/, "", line)
      n = split(line, f, / +/)
      label = line
      for (i = 1; i <= 5; i++) sub(/^[^ ]+ +/, "", label)
      if (label == name) { print f[1], f[4]; exit }
    }' <<<"${top[$index]}")
  if [ -z "$row" ]; then
    fail "-top -sample_index=$index: no row for '$name'"
    continue
  fi
  read -r flat cum <<<"$row"
  flat=$(strip_unit "$flat")
  cum=$(strip_unit "$cum")
  if [ "$flat $cum" = "$want_flat $want_cum" ]; then
    echo "ok: $index: $name flat=$flat cum=$cum"
  else
    fail "-top -sample_index=$index: $name flat $flat cum $cum, want flat $want_flat cum $want_cum"
  fi
done

if ((failed)); then
  echo "--- go tool pprof -top -sample_index=calls:" >&2
  printf '%s\n' "${top[calls]}" >&2
  echo "--- go tool pprof -top -sample_index=wall -unit=ns:" >&2
  printf '%s\n' "${top[wall]}" >&2
  exit 1
fi
echo "ok: $file"
