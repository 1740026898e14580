#!/usr/bin/env bash
# The flame graph page with many frames in headless Chromium: how long until its frames are in
# the DOM, and how long the page's own handlers take to zoom, search and switch the metric.
# A probe script appended after the page's script reads performance.now() (ms since the
# navigation started: reading the file, parsing the HTML and the page's script, laying out and
# drawing the frames), then clicks a frame, types a search and switches the metric, timing each
# handler with the style and layout it causes. Prints one line per run and the medians.
#
# usage: loadtime.sh SAMPLE_BINARY WORK_DIR [FRAMES [RUNS]]   (FRAMES 10000, RUNS 5 unless set)
# Not a ctest: timings depend on the machine. Exit 77 (skip) without Chromium.
set -euo pipefail
(($# >= 2 && $# <= 4)) || { echo "usage: $0 SAMPLE_BINARY WORK_DIR [FRAMES [RUNS]]" >&2; exit 2; }
sample=$1 work=$2 frames=${3:-10000} runs=${4:-5}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: chromium is not installed"; exit 77; }

rm -rf "$work"
mkdir -p "$work"
page=$work/flamegraph-$frames.html
"$sample" --frames "$frames" "$page"
echo "page: $page, $(stat -c %s "$page") bytes, $frames frames"
cat >"$work/probe.js" <<'JS'
(function () {
  var out = {};
  function settle() { return document.body.getBoundingClientRect().height; }  // forces style and layout
  settle();
  out.ready = performance.now();
  out.drawn = document.querySelectorAll("g.frame").length;
  function timed(name, act) { var t = performance.now(); act(); settle(); out[name] = performance.now() - t; }
  // The widest frame two levels down: a click zooms into it.
  var best = null, bestW = -1;
  [].forEach.call(document.querySelectorAll("g.frame rect"), function (r) {
    var w = +r.getAttribute("width"), y = r.getBoundingClientRect().top;
    if (w > bestW && w < 1000 && y > 0) { best = r; bestW = w; }
  });
  timed("zoom", function () { best.dispatchEvent(new MouseEvent("click", { bubbles: true })); });
  timed("unzoom", function () { document.getElementById("jmt-reset").click(); });
  var input = document.getElementById("jmt-search");
  timed("search", function () { input.value = "HashMap\\.(get|put)"; input.dispatchEvent(new Event("input", { bubbles: true })); });
  var sel = document.getElementById("jmt-metric");
  timed("metric", function () { sel.value = "calls"; sel.dispatchEvent(new Event("change", { bubbles: true })); });
  timed("hover", function () { best.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: 300, clientY: 100 })); });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = Object.keys(out).map(function (k) { return k + "=" + (k === "drawn" ? out[k] : out[k].toFixed(1)); }).join(" ");
  document.body.appendChild(pre);
})();
JS
probed=$work/probed.html
sed 's#</body>#<script src="probe.js"></script></body>#' "$page" >"$probed"
results=()
for ((i = 1; i <= runs; i++)); do
  t0=$(date +%s%N)
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
    --window-size=1200,800 --dump-dom "file://$probed" >"$work/dom.html" 2>>"$work/chromium.log"
  t1=$(date +%s%N)
  line=$(sed -n 's/.*<pre id="probe">\([^<]*\)<\/pre>.*/\1/p' "$work/dom.html")
  [ -n "$line" ] || { echo "FAIL: no probe output (see $work/chromium.log)" >&2; exit 1; }
  line="$line process=$(((t1 - t0) / 1000000))"
  echo "run $i: $line"
  results+=("$line")
done
printf 'median:'
for key in $(tr ' ' '\n' <<<"${results[0]}" | cut -d= -f1); do
  printf ' %s=%s' "$key" "$(printf '%s\n' "${results[@]}" | tr ' ' '\n' | sed -n "s/^$key=//p" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done
echo " (ms; drawn: frames in the DOM; process: the whole chromium run)"
