// pprof output with a hand-written protobuf wire encoder, not libprotobuf:
// jmethodtime must still link as one static binary (-DJMT_STATIC=ON) that
// needs nothing at run time, and the part of pprof's schema written here is
// six small messages of varints and length-delimited fields (~100 lines below)
// against libprotobuf's large runtime library plus protoc at build time. The
// schema (proto/profile.proto, proto3, package perftools.profiles) is stable:
// readers must accept its field numbers forever.
#include "report/pprof.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "util/error.h"

namespace jmt {

namespace {

// Field numbers from profile.proto, named as there. Only the fields written.
namespace pb {
namespace Profile {
constexpr uint32_t sample_type = 1;           // repeated ValueType
constexpr uint32_t sample = 2;                // repeated Sample
constexpr uint32_t mapping = 3;               // repeated Mapping
constexpr uint32_t location = 4;              // repeated Location
constexpr uint32_t function = 5;              // repeated Function
constexpr uint32_t string_table = 6;          // repeated string; [0] must be ""
constexpr uint32_t time_nanos = 9;            // int64
constexpr uint32_t duration_nanos = 10;       // int64
constexpr uint32_t period_type = 11;          // ValueType
constexpr uint32_t period = 12;               // int64
constexpr uint32_t comment = 13;              // repeated int64, string indices
constexpr uint32_t default_sample_type = 14;  // int64, string index
}  // namespace Profile
namespace ValueType {
constexpr uint32_t type = 1;  // int64, string index
constexpr uint32_t unit = 2;  // int64, string index
}  // namespace ValueType
namespace Sample {
constexpr uint32_t location_id = 1;  // repeated uint64, leaf first
constexpr uint32_t value = 2;        // repeated int64, one per sample_type
constexpr uint32_t label = 3;        // repeated Label
}  // namespace Sample
namespace Label {
constexpr uint32_t key = 1;  // int64, string index
constexpr uint32_t str = 2;  // int64, string index
}  // namespace Label
namespace Mapping {
constexpr uint32_t id = 1;             // uint64, non-zero
constexpr uint32_t has_functions = 7;  // bool
constexpr uint32_t has_filenames = 8;  // bool
}  // namespace Mapping
namespace Location {
constexpr uint32_t id = 1;          // uint64, non-zero
constexpr uint32_t mapping_id = 2;  // uint64
constexpr uint32_t line = 4;        // repeated Line
}  // namespace Location
namespace Line {
constexpr uint32_t function_id = 1;  // uint64
}  // namespace Line
namespace Function {
constexpr uint32_t id = 1;           // uint64, non-zero
constexpr uint32_t name = 2;         // int64, string index
constexpr uint32_t system_name = 3;  // int64, string index
constexpr uint32_t filename = 4;     // int64, string index
}  // namespace Function
}  // namespace pb

// One message's encoding. Scalars equal to 0 are left out (proto3 defaults);
// repeated scalars are packed, as proto3 writes them.
class Message {
public:
    void add_varint(uint32_t field, uint64_t v)
    {
        if (v == 0)
            return;
        tag(field, WireType::Varint);
        varint(v);
    }
    // Two's complement, as protobuf encodes int64 (only non-negative values are written here).
    void add_int64(uint32_t field, int64_t v) { add_varint(field, static_cast<uint64_t>(v)); }
    // Always written, even empty: string_table[0] is "".
    void add_bytes(uint32_t field, const std::string &bytes)
    {
        tag(field, WireType::Len);
        varint(bytes.size());
        buf_ += bytes;
    }
    void add_message(uint32_t field, const Message &m) { add_bytes(field, m.buf_); }
    void add_packed(uint32_t field, const std::vector<uint64_t> &values)
    {
        if (values.empty())
            return;
        Message packed;
        for (uint64_t v : values)
            packed.varint(v);
        add_bytes(field, packed.buf_);
    }
    const std::string &bytes() const { return buf_; }

private:
    enum class WireType : uint8_t { Varint = 0, Len = 2 };
    void tag(uint32_t field, WireType type) { varint(uint64_t{field} << 3 | static_cast<uint8_t>(type)); }
    void varint(uint64_t v)
    {
        for (; v >= 0x80; v >>= 7)
            buf_ += static_cast<char>((v & 0x7f) | 0x80);
        buf_ += static_cast<char>(v);
    }
    std::string buf_;
};

class StringTable {
public:
    StringTable() : strings_{""} { index_[""] = 0; }
    int64_t operator()(const std::string &s)
    {
        auto [it, added] = index_.emplace(s, static_cast<int64_t>(strings_.size()));
        if (added)
            strings_.push_back(s);
        return it->second;
    }
    const std::vector<std::string> &strings() const { return strings_; }

private:
    std::vector<std::string> strings_;
    std::unordered_map<std::string, int64_t> index_;
};

Message value_type(StringTable &strings, const std::string &type, const std::string &unit)
{
    Message m;
    m.add_int64(pb::ValueType::type, strings(type));
    m.add_int64(pb::ValueType::unit, strings(unit));
    return m;
}

// "org/postgresql/jdbc/PgResultSet$Row" -> "org/postgresql/jdbc/PgResultSet.java":
// nested, anonymous and lambda classes are in their outer class's file. A
// guess (the JVM's probes do not carry the SourceFile attribute): Kotlin or
// Scala sources are named otherwise.
std::string source_path(const std::string &klass)
{
    if (klass.empty())
        return {};
    return klass.substr(0, klass.find('$')) + ".java";
}

// A count or ns total for an int64 field: clamped to INT64_MAX, so that its
// varint is the int64's (non-negative int64s encode as their uint64 value).
uint64_t int64_range(uint64_t v) { return std::min<uint64_t>(v, std::numeric_limits<int64_t>::max()); }

void gzip_to(std::ostream &out, const std::string &data)
{
    z_stream zs{};
    // windowBits 15 + 16: gzip framing (header and CRC-32 trailer), as .pb.gz readers expect.
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error("pprof: cannot initialise zlib's deflate: out of memory?");
    auto in = reinterpret_cast<const Bytef *>(data.data());
    size_t left = data.size();
    unsigned char chunk[64 * 1024];
    int flush = Z_NO_FLUSH;
    while (flush != Z_FINISH) {
        const uInt n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
        zs.next_in = const_cast<Bytef *>(in);
        zs.avail_in = n;
        in += n;
        left -= n;
        flush = left ? Z_NO_FLUSH : Z_FINISH;
        do {
            zs.next_out = chunk;
            zs.avail_out = sizeof chunk;
            if (deflate(&zs, flush) == Z_STREAM_ERROR) {
                deflateEnd(&zs);
                throw Error("pprof: zlib's deflate failed");
            }
            out.write(reinterpret_cast<const char *>(chunk), static_cast<std::streamsize>(sizeof chunk - zs.avail_out));
        } while (zs.avail_out == 0);
    }
    deflateEnd(&zs);
}

// One mapping for every location: it says the functions and file names are
// known, so pprof does not try to symbolize addresses (there are none) in a
// binary. Its id is the one every location names.
constexpr uint64_t kJvmMappingId = 1;

// One Function and one Location per method, sharing an id from 1 in order of first use.
struct Locations {
    using MethodKey = std::tuple<bool, std::string, std::string, std::string>;  // synthetic, class or label, ...
    std::map<MethodKey, uint64_t> ids;
    std::vector<Message> locations, functions;

    uint64_t of(const PathNode &node, StringTable &strings)
    {
        // "[truncated]" and "[untraced callees]" are one function each, with no class.
        const bool synthetic = node.truncated || node.untraced;
        MethodKey key{synthetic, synthetic ? frame_label(node) : node.klass, synthetic ? "" : node.method,
                      synthetic ? "" : node.signature};
        auto [it, added] = ids.emplace(std::move(key), ids.size() + 1);
        if (!added)
            return it->second;
        const uint64_t id = it->second;
        Message function;
        function.add_varint(pb::Function::id, id);
        function.add_int64(pb::Function::name, strings(frame_label(node)));
        if (!synthetic) {
            function.add_int64(pb::Function::system_name, strings(node.klass + "." + node.method + node.signature));
            function.add_int64(pb::Function::filename, strings(source_path(node.klass)));
        }
        functions.push_back(std::move(function));
        Message line;  // line 0: the probes give no line numbers
        line.add_varint(pb::Line::function_id, id);
        Message location;
        location.add_varint(pb::Location::id, id);
        location.add_varint(pb::Location::mapping_id, kJvmMappingId);
        location.add_message(pb::Location::line, line);
        locations.push_back(std::move(location));
        return id;
    }
};

// One sample per call path of source's tree, valued at its exclusive calls and times, with its labels.
void add_samples(Message &profile, StringTable &strings, Locations &where, const PprofSource &source)
{
    const PathIndex index(*source.tree);
    std::vector<Message> labels;
    for (const auto &[key, value] : source.labels) {
        Message label;
        label.add_int64(pb::Label::key, strings(key));
        label.add_int64(pb::Label::str, strings(value));
        labels.push_back(std::move(label));
    }
    for (const PathNode &node : source.tree->nodes) {
        const uint64_t calls = exclusive_value(node, PathMetric::Calls);
        const uint64_t wall = exclusive_value(node, PathMetric::Wall);
        const uint64_t cpu = exclusive_value(node, PathMetric::Cpu);
        const uint64_t runq = exclusive_value(node, PathMetric::Runq);
        const uint64_t blocked = exclusive_value(node, PathMetric::Blocked);
        if (calls == 0 && wall == 0 && cpu == 0)
            continue;
        std::vector<uint64_t> location_ids;  // leaf first, as pprof wants
        for (const PathNode *at : index.chain(node))
            location_ids.push_back(where.of(*at, strings));
        Message sample;
        sample.add_packed(pb::Sample::location_id, location_ids);
        sample.add_packed(pb::Sample::value, {int64_range(calls), int64_range(wall), int64_range(cpu),
                                              int64_range(runq), int64_range(blocked)});
        for (const Message &label : labels)
            sample.add_message(pb::Sample::label, label);
        profile.add_message(pb::Profile::sample, sample);
    }
}

}  // namespace

void write_pprof(std::ostream &out, const CallTree &tree, uint64_t duration_ns, int64_t time_nanos)
{
    write_pprof(out, std::vector<PprofSource>{PprofSource{&tree, {}}}, duration_ns, time_nanos);
}

void write_pprof(std::ostream &out, const std::vector<PprofSource> &sources, uint64_t duration_ns, int64_t time_nanos)
{
    StringTable strings;
    Message profile;
    // Index 0 holds the count of calls, by the proto's convention for a count.
    profile.add_message(pb::Profile::sample_type, value_type(strings, "calls", "count"));
    profile.add_message(pb::Profile::sample_type, value_type(strings, "wall", "nanoseconds"));
    profile.add_message(pb::Profile::sample_type, value_type(strings, "cpu", "nanoseconds"));
    profile.add_message(pb::Profile::sample_type, value_type(strings, "runq", "nanoseconds"));
    profile.add_message(pb::Profile::sample_type, value_type(strings, "blocked", "nanoseconds"));

    // No file name on the mapping: pprof would show it as the profile's "File:".
    Message mapping;
    mapping.add_varint(pb::Mapping::id, kJvmMappingId);
    mapping.add_varint(pb::Mapping::has_functions, 1);
    mapping.add_varint(pb::Mapping::has_filenames, 1);
    profile.add_message(pb::Profile::mapping, mapping);

    Locations where;
    for (const PprofSource &source : sources)
        if (source.tree)
            add_samples(profile, strings, where, source);

    for (const Message &m : where.locations)
        profile.add_message(pb::Profile::location, m);
    for (const Message &m : where.functions)
        profile.add_message(pb::Profile::function, m);

    // Every string is interned before the table is written.
    const Message period_type = value_type(strings, "calls", "count");
    const int64_t comment =
        strings("jmethodtime " JMT_VERSION ": exact, not sampled: every traced call, one sample per call path");
    const int64_t default_type = strings("wall");
    for (const std::string &s : strings.strings())
        profile.add_bytes(pb::Profile::string_table, s);

    profile.add_int64(pb::Profile::time_nanos, time_nanos);
    profile.add_varint(pb::Profile::duration_nanos, int64_range(duration_ns));
    profile.add_message(pb::Profile::period_type, period_type);
    profile.add_int64(pb::Profile::period, 1);  // every call, nothing sampled
    profile.add_packed(pb::Profile::comment, {static_cast<uint64_t>(comment)});
    profile.add_int64(pb::Profile::default_sample_type, default_type);

    gzip_to(out, profile.bytes());
}

void write_pprof(std::ostream &out, const CallTree &tree, uint64_t duration_ns)
{
    write_pprof(out, std::vector<PprofSource>{PprofSource{&tree, {}}}, duration_ns);
}

void write_pprof(std::ostream &out, const std::vector<PprofSource> &sources, uint64_t duration_ns)
{
    const int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const auto since = static_cast<int64_t>(std::min<uint64_t>(duration_ns, static_cast<uint64_t>(now)));
    write_pprof(out, sources, duration_ns, now - since);
}

}  // namespace jmt
