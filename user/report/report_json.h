// The JSON report's source and call paths, and reading a report back
// into the model, so that reports of many hosts can be merged and compared
// (model/merge.h, model/diff.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/paths.h"
#include "model/profile.h"
#include "model/source.h"

namespace jmt {

// {"hostname", "pid", "main_class", "command", "jdk_version", "kernel", "arch",
// "start_time", "duration_ns"}; duration_ns is s.duration_ns, or duration_ns when that is 0.
nlohmann::json source_json(const ReportSource &s, uint64_t duration_ns = 0);
ReportSource source_from_json(const nlohmann::json &j);

// A method's values by their keys (model/stat_keys.h): the --foreign ones only
// with foreign, and only the call paths' ones with paths_only.
nlohmann::json stats_json(const MethodStats &s, bool foreign, bool paths_only = false);
// The record's fields back (absent keys: 0); the derived ones follow from them.
MethodStats stats_from_json(const nlohmann::json &j);
// --slower-than's calls as the report's "slow_calls", and back.
nlohmann::json slow_calls_json(const std::vector<SlowCall> &calls);
std::vector<SlowCall> slow_calls_from_json(const nlohmann::json &j);

// [{"frames": [label, ...] root first (frame_label), "jvm_frames": [class.method+signature, ...],
//   and the path keys of stats_json}], parents before children.
nlohmann::json paths_json(const CallTree &tree);
// The tree back from "paths" (by jvm_frames): node ids from 1, parents first.
CallTree paths_from_json(const nlohmann::json &paths);

// A report read back: its profile (methods with their stats and bounds, filter,
// times, probe cost, overhead, diagnostics, sources) and its call paths when it has them.
struct LoadedReport {
    std::string file;
    Profile profile;
    std::optional<CallTree> tree;  // "paths"
    nlohmann::json doc;            // the whole document
};

// The report in text (file names it in errors). Throws jmt::Error with one
// line when it is not a jmethodtime JSON report or its schema_version is not
// kReportSchemaVersion.
LoadedReport parse_report(const std::string &text, const std::string &file);
// parse_report of a file's contents; an unreadable file throws jmt::Error too.
LoadedReport read_report(const std::string &file);

}  // namespace jmt
