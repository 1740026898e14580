// jmethodtime's flame graph page: lays the call tree out and draws it as SVG, with the metric
// switch, zoom, search, tooltip, colours and the view kept in the address. Plain DOM, no
// library: embed_flamegraph.cmake inlines this file into flamegraph_template.html at build
// time (see the comment at the top of the template for why there is no d3).
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var ROW = 18;        // px per frame row
  var PAD = 3;         // px of text padding inside a frame
  var MIN_PX = 0.4;    // frames narrower than this are not drawn (nor their callees)
  var METRICS = {
    wall: { name: "elapsed", excl: "wall_excl", time: true },
    cpu: { name: "on-CPU", excl: "cpu_excl", time: true },
    runq: { name: "run-queue wait", excl: "runq_excl", time: true },
    blocked: { name: "blocked", excl: "blocked_excl", time: true },
    calls: { name: "calls", excl: "calls", time: false }
  };

  function byId(id) { return document.getElementById(id); }
  function svgElement(name, attrs) {
    var el = document.createElementNS(SVG_NS, name);
    for (var a in attrs) el.setAttribute(a, attrs[a]);
    return el;
  }
  function htmlElement(name, className, text) {
    var el = document.createElement(name);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  var data = JSON.parse(byId("jmt-flamegraph-data").textContent);
  var chart = byId("jmt-chart"), tip = byId("jmt-tip"), status = byId("jmt-status");
  var searchInput = byId("jmt-search"), metricSelect = byId("jmt-metric");
  var svg = svgElement("svg", { "class": "flamegraph" });
  chart.appendChild(svg);
  var firstMetric = METRICS[document.body.getAttribute("data-metric")] ? document.body.getAttribute("data-metric") : "wall";
  var metric = firstMetric;
  metricSelect.value = metric;

  // Every node of the tree, parents before children (depth first, children in the data's
  // order), each with its parent, depth and parsed label.
  var nodes = [], maxDepth = 0;
  (function prepare(n, parent, depth) {
    n.parent = parent;
    n.depth = depth;
    n.root = !parent;
    n.parts = labelParts(n.name);
    n.children = n.children || [];
    maxDepth = Math.max(maxDepth, depth);
    nodes.push(n);
    for (var i = 0; i < n.children.length; i++) prepare(n.children[i], n, depth + 1);
  })(data, null, 0);

  // "demo.abc.FixedWork.c(int)" -> package "demo.abc", class "FixedWork", method "c", params "(int)".
  function labelParts(label) {
    var paren = label.indexOf("(");
    if (paren < 0) return null;  // "all", "[truncated]", "[untraced callees]"
    var qualified = label.substring(0, paren), params = label.substring(paren);
    var dot = qualified.lastIndexOf(".");
    var cls = dot < 0 ? "" : qualified.substring(0, dot), method = qualified.substring(dot + 1);
    var cdot = cls.lastIndexOf(".");
    return { pkg: cdot < 0 ? "" : cls.substring(0, cdot), cls: cls, simple: cls.substring(cdot + 1),
             method: method, params: params };
  }

  // Its top-level package: the first two components ("org.postgresql", "java.util").
  function topPackage(n) {
    if (!n.parts) return null;
    var pkg = n.parts.pkg;
    if (!pkg) return "(default package)";
    return pkg.split(".").slice(0, 2).join(".");
  }

  function hash(s) {  // FNV-1a, 32 bits
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h;
  }

  // A stable hue per top-level package; saturation and lightness vary a little per method, so
  // neighbouring frames of one package stay apart.
  function packageColour(top, key) {
    var hue = (hash(top) % 3600) / 10, h = hash(key);
    return "hsl(" + hue.toFixed(1) + "," + (55 + h % 16) + "%," + (60 + (h >>> 8) % 15) + "%)";
  }
  function colour(n) {
    if (n.colour === undefined) {
      var top = topPackage(n);
      n.colour = top === null ? (n.root ? "#c8c8c8" : "#a9a9a9") : packageColour(top, n.parts.cls + "." + n.parts.method);
    }
    return n.colour;
  }

  // "950 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits like the table report.
  function fmtNs(ns) {
    ns = Math.max(0, Math.round(ns));
    if (ns < 1000) return ns + " ns";
    if (ns >= 999.5e9) return (Math.floor(ns / 1e9) + (ns % 1e9 >= 5e8 ? 1 : 0)) + " s";
    var scale = 1, digits = 3;
    while (Math.floor(ns / scale) >= 1000) { scale *= 10; digits++; }
    var sig = Math.floor((ns + scale / 2) / scale);
    if (sig === 1000) { sig = 100; digits++; }
    var unit = Math.floor((digits - 4) / 3), intDigits = digits - 3 * (unit + 1), s = String(sig);
    return (intDigits >= 3 ? s : s.substring(0, intDigits) + "." + s.substring(intDigits)) + " " + ["us", "ms", "s"][unit];
  }
  function fmtCount(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function fmtValue(v) { return METRICS[metric].time ? fmtNs(v) : fmtCount(v) + " calls"; }
  function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(2) + "%" : "-"; }

  function exclusive(n, m) { return n.root ? 0 : (+n[METRICS[m].excl] || 0); }

  // The partition of metric m. A node's value is its exclusive value plus its children's
  // values, so it is exactly its inclusive value (the embedded exclusive values add up to the
  // inclusive ones). Its x is where it starts: children sit side by side from their parent's
  // x, in the data's order, and the rest of the parent's width is its own exclusive part.
  function layout(m) {
    var i, j, n, x;
    for (i = nodes.length - 1; i >= 0; i--) {  // children before parents
      n = nodes[i];
      n.value = exclusive(n, m);
      for (j = 0; j < n.children.length; j++) n.value += n.children[j].value;
    }
    data.x = 0;
    for (i = 0; i < nodes.length; i++) {  // parents before children
      n = nodes[i];
      for (j = 0, x = n.x; j < n.children.length; j++) {
        n.children[j].x = x;
        x += n.children[j].value;
      }
    }
  }

  var focus = data;  // the zoomed-into node; data (the root "all") when not zoomed
  var charWidth = 6.6;

  function measureChars() {
    var g = svgElement("g", { "class": "frame" }), text = svgElement("text", {});
    text.textContent = "MMMMMMMMMMMMMMMMMMMM";
    g.appendChild(text);
    svg.appendChild(g);
    var w = text.getComputedTextLength ? text.getComputedTextLength() : 0;
    if (w > 0) charWidth = w / 20;
    svg.removeChild(g);
  }

  // The longest of the label's forms that fits px: full, Class.method(params), Class.method(..),
  // method(..), then the method cut short.
  function fitLabel(n, px) {
    var chars = Math.floor(px / charWidth);
    if (chars < 3) return "";
    var forms = [n.name];
    if (n.parts) {
      var p = n.parts, args = p.params === "()" ? "()" : "(..)";
      forms.push(p.simple + "." + p.method + p.params, p.simple + "." + p.method + args, p.method + args);
    }
    for (var i = 0; i < forms.length; i++) if (forms[i].length <= chars) return forms[i];
    return forms[forms.length - 1].substring(0, chars - 2) + "..";
  }

  // Draws the frames anew: the focus fills the width, its ancestors span it (faded), its
  // callees keep their share; a frame narrower than MIN_PX is left out with its callees.
  function render() {
    var width = Math.max(200, chart.clientWidth || 1000);
    var x0 = focus.x, k = width / (focus.value || 1);
    svg.setAttribute("width", width);
    svg.setAttribute("height", (maxDepth + 1) * ROW);
    var fragment = document.createDocumentFragment();
    (function draw(n) {
      var left = Math.max(0, (n.x - x0) * k), right = Math.min(width, (n.x + n.value - x0) * k);
      if (!(n.value > 0) || right - left < MIN_PX) return;
      var g = svgElement("g", { transform: "translate(" + left + "," + (maxDepth - n.depth) * ROW + ")", "class": frameClass(n) });
      g.jmtNode = n;
      g.appendChild(svgElement("rect", { height: ROW - 1, fill: colour(n), width: right - left }));
      var label = fitLabel(n, right - left - 2 * PAD);
      if (label) {  // most frames of a big tree are too narrow for one
        var text = svgElement("text", { x: PAD, y: ROW - 5.5 });
        text.textContent = label;
        g.appendChild(text);
      }
      fragment.appendChild(g);
      for (var i = 0; i < n.children.length; i++) draw(n.children[i]);
    })(data);
    svg.textContent = "";
    svg.appendChild(fragment);
    showSummary();
  }
  // "frame", plus "match" when the search matches it, "ancestor" when it is above the focus.
  function frameClass(n) {
    var ancestor = n !== focus && n.depth < focus.depth && isAncestor(n, focus);
    return "frame" + (n.matched ? " match" : "") + (ancestor ? " ancestor" : "");
  }
  function isAncestor(n, of) {
    for (var a = of.parent; a; a = a.parent) if (a === n) return true;
    return false;
  }

  function showSummary() {
    var total = data.value;
    var line = metric === "calls"
      ? "Total: " + fmtCount(total) + " traced calls, " + fmtCount(data.calls) + " of them outermost"
      : "Total " + METRICS[metric].name + ": " + fmtValue(total) + " in " + fmtCount(data.calls) + " outermost traced calls";
    if (focus !== data) line += "  |  zoomed into " + focus.name + ": " + fmtValue(focus.value) + " (" + pct(focus.value, total) + ")";
    status.textContent = line;
    showLatency();
  }

  // The zoomed frame's method: the latency distribution of all its calls, whatever their path
  // (the kernel keeps a histogram per method), from the page's second JSON element. Its buckets
  // as bars on a log time axis from the first bucket's low edge to the last's high edge, each
  // bar's height the log of its calls (a tail of 100 calls beside 24,000 stays visible).
  var latency = {};
  try { latency = JSON.parse(byId("jmt-flamegraph-latency").textContent) || {}; } catch (e) { latency = {}; }
  function showLatency() {
    var box = byId("jmt-latency"), d = focus.root ? null : latency[focus.name];
    box.textContent = "";
    if (!d || !d.buckets || !d.buckets.length) return;
    box.appendChild(htmlElement("div", "line", "Latency of " + focus.name + ", all " + fmtCount(d.calls) +
      " calls: p50 " + fmtNs(d.p50) + ", p90 " + fmtNs(d.p90) + ", p99 " + fmtNs(d.p99) + ", p99.9 " +
      fmtNs(d.p999) + ", max " + fmtNs(d.max)));
    var lo = Math.log(Math.max(1, d.buckets[0][0])), hi = Math.log(Math.max(2, d.buckets[d.buckets.length - 1][1]));
    var span = Math.max(hi - lo, 1e-9), most = 0, bars = htmlElement("div", "bars");
    d.buckets.forEach(function (b) { most = Math.max(most, b[2]); });
    d.buckets.forEach(function (b) {
      var bar = htmlElement("div", "bar");
      var left = (Math.log(Math.max(1, b[0])) - lo) / span, right = (Math.log(Math.max(2, b[1])) - lo) / span;
      bar.style.left = (100 * left).toFixed(3) + "%";
      bar.style.width = Math.max(0.6, 100 * (right - left)).toFixed(3) + "%";
      bar.style.height = Math.round(4 + 44 * Math.log(1 + b[2]) / Math.log(1 + most)) + "px";
      bar.title = fmtNs(b[0]) + " to " + fmtNs(b[1]) + ": " + fmtCount(b[2]) + " calls";
      bars.appendChild(bar);
    });
    box.appendChild(bars);
    var axis = htmlElement("div", "axis");
    [fmtNs(d.buckets[0][0]), "time, log scale (bar heights: calls, log scale)", fmtNs(d.buckets[d.buckets.length - 1][1])].forEach(function (t) {
      axis.appendChild(htmlElement("span", "", t));
    });
    box.appendChild(axis);
  }

  // The top-level packages by their exclusive share of the metric, largest first (24 at most).
  function legend() {
    var sums = {};
    nodes.forEach(function (n) {
      var top = topPackage(n);
      if (top !== null) sums[top] = (sums[top] || 0) + exclusive(n, metric);
    });
    var pkgs = Object.keys(sums).sort(function (a, b) { return sums[b] - sums[a] || (a < b ? -1 : 1); });
    var box = byId("jmt-legend");
    box.textContent = "";
    pkgs.slice(0, 24).forEach(function (p) {
      var item = htmlElement("span", "pkg"), swatch = htmlElement("span", "swatch");
      swatch.style.background = packageColour(p, "");
      item.appendChild(swatch);
      item.appendChild(htmlElement("span", "name", p + " " + pct(sums[p], data.value)));
      box.appendChild(item);
    });
  }

  // Tooltip: every number of the frame, whatever the metric.
  var tipNode = null;
  function showTip(n, event) {
    var rows;
    if (n.root) {
      rows = [["outermost calls", fmtCount(n.calls)], ["elapsed", fmtNs(n.wall_incl)], ["on-CPU", fmtNs(n.cpu_incl)]];
    } else {
      rows = [["calls", fmtCount(n.calls)],
              ["elapsed inclusive", fmtNs(n.wall_incl)], ["elapsed exclusive", fmtNs(n.wall_excl)],
              ["on-CPU inclusive", fmtNs(n.cpu_incl)], ["on-CPU exclusive", fmtNs(n.cpu_excl)]];
      if (n.runq_incl || n.blocked_incl)
        rows.push(["run-queue inclusive", fmtNs(n.runq_incl)], ["run-queue exclusive", fmtNs(n.runq_excl)],
                  ["blocked inclusive", fmtNs(n.blocked_incl)], ["blocked exclusive", fmtNs(n.blocked_excl)]);
    }
    rows.push(["share of " + METRICS[metric].name, pct(n.value, data.value) +
               (focus !== data ? " (" + pct(n.value, focus.value) + " of zoom)" : "")]);
    tip.textContent = "";
    tip.appendChild(htmlElement("div", "label", n.name));
    var table = htmlElement("table");
    rows.forEach(function (r) {
      var tr = table.insertRow();
      tr.insertCell().textContent = r[0];
      tr.insertCell().textContent = r[1];
    });
    tip.appendChild(table);
    tip.style.display = "block";
    tipNode = n;
    moveTip(event);
  }
  function moveTip(event) {
    var tw = tip.offsetWidth, th = tip.offsetHeight;
    var x = event.clientX + 14, y = event.clientY + 16;
    // Left of or above the pointer when it does not fit right of or below it, and there is space.
    if (x + tw > window.innerWidth - 4 && event.clientX - tw - 14 >= 4) x = event.clientX - tw - 14;
    if (y + th > window.innerHeight - 4 && event.clientY - th - 12 >= 4) y = event.clientY - th - 12;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() {
    tipNode = null;
    tip.style.display = "none";
  }
  function nodeAt(target) {
    var el = target && target.closest ? target.closest("g.frame") : null;
    return el ? el.jmtNode : null;
  }

  svg.addEventListener("mousemove", function (event) {
    var n = nodeAt(event.target);
    if (!n) hideTip();
    else if (n !== tipNode) showTip(n, event);
    else moveTip(event);
  });
  svg.addEventListener("mouseleave", hideTip);
  svg.addEventListener("click", function (event) {
    var n = nodeAt(event.target);
    if (n) zoom(n);
  });

  function zoom(n) {
    focus = n;
    hideTip();
    render();
    saveState();
  }
  byId("jmt-reset").addEventListener("click", function () { zoom(data); });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && document.activeElement !== searchInput) zoom(data);
  });

  // Search: frames whose label matches the regular expression (a plain string when it is not
  // one); the share counts a matched frame once even when matched frames nest.
  function search(text) {
    var re = null;
    if (text) {
      try { re = new RegExp(text, "i"); } catch (e) { re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    }
    nodes.forEach(function (n) { n.matched = !!re && !n.root && re.test(n.name); });
    svg.classList.toggle("searching", !!re);
    showMatch();
    // The frames stay where they are: only their classes change.
    for (var g = svg.firstChild; g; g = g.nextSibling) g.setAttribute("class", frameClass(g.jmtNode));
    saveState();
  }
  function showMatch() {
    var text = searchInput.value, match = byId("jmt-match");
    if (!text) { match.textContent = ""; return; }
    var matched = 0, count = 0;
    (function sum(n, inMatch) {
      if (n.matched) count++;
      if (n.matched && !inMatch) matched += n.value;
      for (var i = 0; i < n.children.length; i++) sum(n.children[i], inMatch || n.matched);
    })(data, false);
    match.textContent = "Matched: " + pct(matched, data.value) + " (" + fmtValue(matched) + ", " +
                        count + " frame" + (count === 1 ? "" : "s") + ")";
  }
  searchInput.addEventListener("input", function () { search(searchInput.value); });

  // The view in the address: #metric=calls&search=REGEX&zoom=LABEL;LABEL;... (the zoomed
  // frame's path), so a view can be bookmarked or shared with the file.
  function pathOf(n) {
    var labels = [];
    for (var a = n; a && a.parent; a = a.parent) labels.unshift(a.name);
    return labels.join(";");
  }
  function saveState() {
    var parts = [];
    if (metric !== firstMetric) parts.push("metric=" + metric);
    if (searchInput.value) parts.push("search=" + encodeURIComponent(searchInput.value));
    if (focus !== data) parts.push("zoom=" + encodeURIComponent(pathOf(focus)));
    try { history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search); } catch (e) { }
  }
  function loadState() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var eq = kv.indexOf("=");
      if (eq > 0) { try { state[kv.substring(0, eq)] = decodeURIComponent(kv.substring(eq + 1)); } catch (e) { } }
    });
    return state;
  }
  // The node at a path of labels (the first child of each name), if it has a width.
  function nodeAtPath(path) {
    var n = data;
    path.split(";").forEach(function (label) {
      var next = null;
      for (var i = 0; n && i < n.children.length && !next; i++) if (n.children[i].name === label) next = n.children[i];
      n = next;
    });
    return n && n.value > 0 ? n : null;
  }

  function setMetric(m) {
    metric = m;
    layout(m);
    if (!(focus.value > 0)) focus = data;
    legend();
    showMatch();
    render();
  }
  metricSelect.addEventListener("change", function () { setMetric(metricSelect.value); saveState(); });
  window.addEventListener("resize", render);

  measureChars();
  var state = loadState();
  if (METRICS[state.metric]) {
    metric = state.metric;
    metricSelect.value = metric;
  }
  setMetric(metric);
  if (state.search) {
    searchInput.value = state.search;
    search(state.search);
  }
  if (state.zoom && nodeAtPath(state.zoom)) {
    focus = nodeAtPath(state.zoom);
    render();
  }
})();
