// --flamegraph FILE.html: the call paths as an exact flame graph in one self-contained page.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

// Writes an HTML page that draws tree as a flame graph in a browser, offline (its script,
// user/report/flamegraph.js, is inlined; no library): a frame per call path, its width the path's inclusive value of the metric
// chosen in the page (elapsed, on-CPU or calls; metric is the one shown first), with zoom,
// regex search, a tooltip of every number of the frame, and colours by top-level package.
// The tree is embedded as JSON between the markers below: nested
// {name, calls, wall_incl, wall_excl, cpu_incl, cpu_excl, children: [...]} from a root named
// "all" (its calls and *_incl the sums over the outermost frames, its *_excl 0); a node's
// values are its PathNode's stats, its name is frame_label, children are sorted by name.
// title is shown as the page's title and heading (HTML-escaped).
// methods: their latency histograms (rows of one method summed, by frame_label) go in a
// second JSON element, {label: {calls, p50, p90, p99, p999, min, max, buckets: [[low_ns,
// high_ns, calls], ...]}}, and a frame zoomed into shows its method's distribution (every
// call of the method, whatever its path: the kernel keeps histograms per method, not per path).
void write_flamegraph_html(std::ostream &out, const CallTree &tree, const std::string &title,
                           PathMetric metric = PathMetric::Wall, const std::vector<MethodRow> &methods = {});

// The embedded JSON sits between these two strings in the page ('<', '>' and '&' in it are
// written as \u003c, \u003e and \u0026, so no name can end the <script> element).
extern const char kFlamegraphDataBegin[];
extern const char kFlamegraphDataEnd[];

// text with &, <, >, " and ' as HTML entities, for text and attribute values.
std::string html_escape(const std::string &text);

}  // namespace jmt
