#!/usr/bin/env bash
# --flamegraph in a real browser: the page of a known tree (jmt_flamegraph_sample: the A/B/C
# flow, a N calls, a;b 2N, a;b;c 4N, a;c N, N = 5000) is opened by headless Chromium from
# file:// (no server, no network), which takes a screenshot and dumps the DOM after the page's
# script ran. The DOM must hold the SVG frames the page drew: the expected labels, each frame as wide
# as its inclusive value, and the zoom, search and metric switch (set through the page's
# #metric=..&search=..&zoom=.. address) must change them as they should.
#
# usage: screenshot.sh SAMPLE_BINARY WORK_DIR [COPY_PNG_TO]
#   COPY_PNG_TO: also copy the screenshot with the tooltip of a;b there (docs/flamegraph.png).
#   SCREENSHOT_SIZE=W,H (environment): the screenshot's window, 1200,600 unless set.
# Exit 77 (skip) when Chromium is not installed and CI is not true.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# < 2 || $# > 3)); then
  echo "usage: $0 SAMPLE_BINARY WORK_DIR [COPY_PNG_TO]" >&2
  exit 2
fi
sample=$1 work=$2 copy_to=${3:-}
shot_size=${SCREENSHOT_SIZE:-1200,600}
[[ $shot_size =~ ^([0-9]+),([0-9]+)$ ]] || { echo "SCREENSHOT_SIZE must be W,H" >&2; exit 2; }
shot_w=${BASH_REMATCH[1]} shot_h=${BASH_REMATCH[2]}

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || missing+=("chromium (apt-get install chromium)")
skip_or_fail_if_missing

rm -rf "$work"
mkdir -p "$work"
page=$work/flamegraph.html
png=$work/flamegraph.png
"$sample" "$page" || fail "jmt_flamegraph_sample failed"
[ -s "$page" ] || fail "no page written"

# One headless Chromium run, its own profile; root needs --no-sandbox. The DOM checks run in a
# 1200x600 window; a later --window-size (the screenshot's) wins.
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile" --window-size=1200,600 "$@" 2>>"$work/chromium.log"
}

# --- the screenshot ------------------------------------------------------------------------------
chrome --window-size="$shot_w,$shot_h" --screenshot="$png" "file://$page" >/dev/null || fail "chromium --screenshot failed (see $work/chromium.log)"
[ -s "$png" ] || fail "no screenshot"
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
size=$(od -An -tu1 -j16 -N8 "$png" | tr -s ' ' | sed 's/^ //')
read -r w3 w2 w1 w0 h3 h2 h1 h0 <<<"$size"
png_w=$(((w3 << 24) | (w2 << 16) | (w1 << 8) | w0))
png_h=$(((h3 << 24) | (h2 << 16) | (h1 << 8) | h0))
[ "$png_w" -eq "$shot_w" ] && [ "$png_h" -eq "$shot_h" ] || fail "screenshot is ${png_w}x${png_h}, not ${shot_w}x${shot_h}"
note "screenshot $png (${png_w}x${png_h})"

# --- the DOM after the script ran ----------------------------------------------------------------
# Prints "WIDTH<TAB>LEFT<TAB>TOP<TAB>CLASS<TAB>LABEL" for each frame drawn in the SVG, after a
# line "svg<TAB>WIDTH". A frame too narrow for any label has no <text>: its LABEL is empty.
frames_of() {
  local dom=$1
  local svg
  svg=$(grep -o '<svg class="flamegraph[^"]*"[^>]*>.*</svg>' "$dom") || fail "no flame graph SVG in the DOM ($dom)"
  printf 'svg\t%s\n' "$(sed -n 's/^<svg[^>]* width="\([0-9.]*\)".*/\1/p' <<<"$svg")"
  sed 's/<g /\n<g /g' <<<"$svg" | grep '^<g ' |
    sed -n 's/^<g transform="translate(\([0-9.e-]*\),\([0-9.e-]*\))" class="\([^"]*\)"><rect[^>]* width="\([0-9.e-]*\)"[^>]*><\/rect>\(<text[^>]*>\([^<]*\)<\/text>\)\{0,1\}<\/g>.*/\4\t\1\t\2\t\3\t\6/p'
}

dump() {  # dump URL_SUFFIX OUT
  chrome --virtual-time-budget=3000 --dump-dom "file://$page$1" >"$2" || fail "chromium --dump-dom failed (see $work/chromium.log)"
  [ -s "$2" ] || fail "empty DOM dump"
}

# Asserts the frame whose text is LABEL is EXPECTED px wide (within 0.5 px) in FRAMES.
expect_width() {  # FRAMES LABEL EXPECTED [CLASS_WORD]
  local frames=$1 label=$2 expected=$3 class=${4:-}
  local line
  line=$(awk -F'\t' -v l="$label" '$5 == l' <<<"$frames" | head -1)
  [ -n "$line" ] || fail "no frame labelled '$label' was drawn; frames:"$'\n'"$frames"
  awk -F'\t' -v e="$expected" -v l="$label" '{ d = $1 - e; if (d < -0.5 || d > 0.5) { print "FAIL: frame " l " is " $1 " px wide, expected " e > "/dev/stderr"; exit 1 } }' <<<"$line" ||
    exit 1
  if [ -n "$class" ]; then
    awk -F'\t' -v c="$class" '{ if ((" " $4 " ") !~ (" " c " ")) exit 1 }' <<<"$line" || fail "frame '$label' is not '$class': $line"
  fi
}

# The default view: elapsed time. a is 330 ms of the 330 ms total, a;b 200 ms, a;b;c 100 ms, a;c 25 ms.
dump "" "$work/dom-default.html"
frames=$(frames_of "$work/dom-default.html")
echo "$frames"
svg_w=$(awk -F'\t' '$1 == "svg" { print $2 }' <<<"$frames")
[ -n "$svg_w" ] || fail "no SVG width"
px() { awk -v w="$svg_w" -v n="$1" -v d="$2" 'BEGIN { printf "%.4f", w * n / d }'; }  # px NUM DEN
[ "$(grep -c $'\t' <<<"$frames")" -eq 6 ] || fail "expected the SVG line and 5 frames (all, a, b, c, c)"
expect_width "$frames" "all" "$svg_w"
expect_width "$frames" "demo.abc.FixedWork.a()" "$svg_w"
expect_width "$frames" "demo.abc.FixedWork.b()" "$(px 200 330)"
expect_width "$frames" "demo.abc.FixedWork.c()" "$(px 100 330)"
# a;c (25 ms, 89 px at 1200) is too narrow for the full label: a shorter form ending in c().
short_c=$(awk -F'\t' '$5 ~ /c\(\)$/ && $5 != "demo.abc.FixedWork.c()" { print $5 }' <<<"$frames" | head -1)
[ -n "$short_c" ] || fail "the frame of a;c has no label ending in c()"
expect_width "$frames" "$short_c" "$(px 25 330)"
grep -q 'Total elapsed: 330 ms in 5,000 outermost traced calls' "$work/dom-default.html" ||
  fail "the status line does not show the total as 330 ms"
grep -q '<span class="name">demo.abc 100.00%</span>' "$work/dom-default.html" || fail "no legend entry for package demo.abc"
note "default view: frames and widths as expected (a;c shows '$short_c')"

# Calls, searching c( and zoomed into a;b: 40,000 calls in all, b's subtree 30,000 (b fills the
# width, its c 20,000 of them), both c frames match: 25,000 calls, 62.50%.
dump "#metric=calls&search=c%5C(&zoom=demo.abc.FixedWork.a()%3Bdemo.abc.FixedWork.b()" "$work/dom-zoom.html"
frames=$(frames_of "$work/dom-zoom.html")
echo "$frames"
[ "$(grep -c $'\t' <<<"$frames")" -eq 5 ] || fail "zoomed into a;b: expected the SVG line and 4 frames (all, a, b, b;c)"
expect_width "$frames" "all" "$svg_w" ancestor
expect_width "$frames" "demo.abc.FixedWork.a()" "$svg_w" ancestor
expect_width "$frames" "demo.abc.FixedWork.b()" "$svg_w"
expect_width "$frames" "demo.abc.FixedWork.c()" "$(px 20000 30000)" match
grep -q '<svg class="flamegraph searching"' "$work/dom-zoom.html" || fail "the search did not mark the SVG"
grep -q 'Matched: 62.50% (25,000 calls, 2 frames)' "$work/dom-zoom.html" || fail "wrong matched share"
grep -q 'zoomed into demo.abc.FixedWork.b(): 30,000 calls (75.00%)' "$work/dom-zoom.html" || fail "wrong zoom status"
note "zoom, search and the calls metric: as expected"

# Zoomed into a;c: c()'s latency over all its 25,000 calls (sample_main.cpp's two rows summed),
# each percentile the middle of the bucket its rank falls in (log-linear, at most 1/8 wide):
# p50 and p90 near 5 us, p99 near 50 us, p99.9 and max 2 ms; no distribution at the root.
dump "#zoom=demo.abc.FixedWork.a()%3Bdemo.abc.FixedWork.c()" "$work/dom-latency.html"
line=$(grep -o 'Latency of demo.abc.FixedWork.c(), all [^<]*' "$work/dom-latency.html") ||
  fail "zoomed into a;c: no latency line for c()"
within() {  # within WHAT TEXT LOW_US HIGH_US: TEXT ("5.12 us") lies in [LOW_US, HIGH_US]
  awk -v t="$2" -v lo="$3" -v hi="$4" 'BEGIN { split(t, f, " "); v = f[1] * (f[2] == "ms" ? 1000 : f[2] == "s" ? 1e6 : f[2] == "ns" ? 0.001 : 1);
    exit !(v >= lo && v <= hi) }' || fail "c()'s $1 is $2, not within [$3, $4] us: $line"
}
grep -q 'all 25,000 calls' <<<"$line" || fail "c()'s latency does not count 25,000 calls: $line"
within p50 "$(sed -n 's/.*p50 \([0-9.]* [a-z]*\),.*/\1/p' <<<"$line")" 4.4 5.7
within p90 "$(sed -n 's/.*p90 \([0-9.]* [a-z]*\),.*/\1/p' <<<"$line")" 4.4 5.7
within p99 "$(sed -n 's/.*p99 \([0-9.]* [a-z]*\),.*/\1/p' <<<"$line")" 44 57
within p99.9 "$(sed -n 's/.*p99\.9 \([0-9.]* [a-z]*\),.*/\1/p' <<<"$line")" 1750 2300
grep -q 'max 2.00 ms' <<<"$line" || fail "c()'s max is not 2.00 ms: $line"
[ "$(grep -o 'class="bar"' "$work/dom-latency.html" | wc -l)" -eq 3 ] || fail "c()'s histogram: not 3 bars"
note "c()'s latency distribution when zoomed into it: $line"

# On-CPU: the same shape at 96% of elapsed.
dump "#metric=cpu" "$work/dom-cpu.html"
grep -q 'Total on-CPU: 317 ms in 5,000 outermost traced calls' "$work/dom-cpu.html" || fail "wrong on-CPU total"
grep -q '<div id="jmt-latency"></div>' "$work/dom-cpu.html" || fail "the whole graph (no zoom) shows a method's latency"
frames=$(frames_of "$work/dom-cpu.html")
expect_width "$frames" "demo.abc.FixedWork.b()" "$(px 200 330)"
note "on-CPU metric: as expected"

# Blocked time (elapsed less on-CPU, nothing waited in a run queue): b() holds 8 of its 13 ms.
dump "#metric=blocked" "$work/dom-blocked.html"
grep -q 'Total blocked: 13.2 ms in 5,000 outermost traced calls' "$work/dom-blocked.html" ||
  fail "wrong blocked total: $(grep -o 'Total[^<]*' "$work/dom-blocked.html" | head -1)"
note "blocked metric: as expected"

# The mouse: a copy of the page with a driver script at its end moves the mouse over a;b,
# records the tooltip, screenshots it (the README's picture), then clicks b and types a search.
driven=$work/flamegraph-driven.html
sed 's#</body>#<script src="driver.js"></script></body>#' "$page" >"$driven"
cat >"$work/driver.js" <<'JS'
(function () {
  function frame(label) {
    var texts = document.querySelectorAll("g.frame text");
    for (var i = 0; i < texts.length; i++) if (texts[i].textContent === label) return texts[i].parentNode;
    return null;
  }
  function at(el) { var r = el.getBoundingClientRect(); return { x: r.left + r.width * 0.55, y: r.top + 9 }; }
  var b = frame("demo.abc.FixedWork.b()"), p = at(b.querySelector("rect"));
  b.querySelector("rect").dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: p.x, clientY: p.y }));
  var rows = [].map.call(document.querySelectorAll("#jmt-tip tr"), function (tr) {
    return [].map.call(tr.cells, function (td) { return td.textContent; }).join("=");
  });
  var probe = document.createElement("pre");
  probe.id = "probe-tip";
  probe.textContent = document.querySelector("#jmt-tip .label").textContent + "|" + rows.join("|") + "|" +
                      getComputedStyle(document.getElementById("jmt-tip")).display;
  document.body.appendChild(probe);
  if (location.hash === "#shot") { probe.style.display = "none"; return; }
  b.querySelector("rect").dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: p.x, clientY: p.y }));
  var input = document.getElementById("jmt-search");
  input.value = "FixedWork\\.b";
  input.dispatchEvent(new Event("input", { bubbles: true }));
})();
JS
chrome --window-size="$shot_w,$((shot_h + 70))" --virtual-time-budget=3000 --screenshot="$work/flamegraph-tip.png" \
  "file://$driven#shot" >/dev/null || fail "chromium --screenshot of the hover failed"
[ -s "$work/flamegraph-tip.png" ] || fail "no screenshot of the hover"
if [ -n "$copy_to" ]; then
  cp "$work/flamegraph-tip.png" "$copy_to"
  note "screenshot with the tooltip copied to $copy_to"
fi
chrome --virtual-time-budget=3000 --dump-dom "file://$driven" >"$work/dom-driven.html" || fail "chromium --dump-dom of the driven page failed"
tip=$(sed -n 's/.*<pre id="probe-tip">\([^<]*\)<\/pre>.*/\1/p' "$work/dom-driven.html")
echo "tooltip: $tip"
[ "$tip" = "demo.abc.FixedWork.b()|calls=10,000|elapsed inclusive=200 ms|elapsed exclusive=100 ms|on-CPU inclusive=192 ms|on-CPU exclusive=96.0 ms|run-queue inclusive=0 ns|run-queue exclusive=0 ns|blocked inclusive=8.00 ms|blocked exclusive=4.00 ms|share of elapsed=60.61%|block" ] ||
  fail "unexpected tooltip: $tip"
frames=$(frames_of "$work/dom-driven.html")
echo "$frames"
expect_width "$frames" "demo.abc.FixedWork.b()" "$svg_w" match
expect_width "$frames" "demo.abc.FixedWork.c()" "$(px 100 200)"
grep -q 'Matched: 60.61% (200 ms, 1 frame)' "$work/dom-driven.html" || fail "typing a search: wrong matched share"
grep -q 'zoomed into demo.abc.FixedWork.b(): 200 ms (60.61%)' "$work/dom-driven.html" || fail "clicking b did not zoom into it"
note "hover, click and typing: as expected"
echo "PASS"
