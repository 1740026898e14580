// The outputs of jmethodtime merge and jmethodtime diff.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/diff.h"
#include "model/merge.h"
#include "report/report.h"

namespace jmt {

// "Merged 3 reports: web1 (pid 11), web2 (pid 12), web3 (pid 13); package demo; traces of up to 2.50 s",
// and how the times were taken: the merged table's header, without a trailing newline.
std::string merge_header(const Profile &merged, size_t reports);

// The merged table: merge_header, the table's rows (write_table without its
// single-trace header), then the outliers. by_source: the rows of each input
// under its own heading instead of the summed rows.
void write_merge_table(std::ostream &out, const Profile &merged, const std::vector<MergeInput> &inputs,
                       const std::vector<Outlier> &outliers, const OutlierOptions &oopts, const TableOptions &opts,
                       bool by_source);

// The outlier lines ("Outliers (...):" and one line per outlier, or a line saying there are none).
void write_outliers(std::ostream &out, const std::vector<MergeInput> &inputs, const std::vector<Outlier> &outliers,
                    const OutlierOptions &oopts);

// The merged call tree: merge_header, then write_tree's lines.
void write_merge_tree(std::ostream &out, const Profile &merged, size_t reports, const CallTree &tree,
                      double min_percent);

// write_json of the merged profile (with "paths" when tree) plus "sources"
// (every source), "files", "warnings", "outliers" and, with by_source, "by_source":
// [{"file", "sources", "methods"}].
nlohmann::json merge_json(const Profile &merged, const CallTree *tree, const std::vector<MergeInput> &inputs,
                          const std::vector<Outlier> &outliers, const std::vector<std::string> &warnings,
                          bool by_source);

// write_csv of the merged profile; by_source: a first column "source" (hostname:pid) and each input's rows.
void write_merge_csv(std::ostream &out, const Profile &merged, const std::vector<MergeInput> &inputs, SortKey sort,
                     bool by_source);

// "+25.3%", "-50.0%", "new" (only in NEW), "gone" (only in BASE).
std::string change_text(const DiffRow &row);

// The diff as a table: calls and exclusive and inclusive elapsed time per call, before and after.
void write_diff_table(std::ostream &out, const std::vector<DiffRow> &rows, const std::string &base_label,
                      const std::string &new_label, size_t top);

// {"schema_version", "kind": "diff", "base": {"files", "sources"}, "new": {...},
//  "methods": [{"class", "method", "signature", "change", "base": {...} | null, "new": {...} | null}]}:
// base and new hold a report method's keys.
nlohmann::json diff_json(const std::vector<DiffRow> &rows, const Profile &base, const Profile &now);

// A differential flame graph as one self-contained page (inline SVG, no
// script): the frames of now, each as wide as its inclusive value of metric in
// now, coloured by how its inclusive time per call moved against the same
// path in base (red slower, blue faster, purple new; white within 5%).
void write_diff_flamegraph_html(std::ostream &out, const CallTree &base, const CallTree &now, const std::string &title,
                                PathMetric metric);

}  // namespace jmt
