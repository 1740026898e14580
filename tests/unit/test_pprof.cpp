// write_pprof: gunzipped and decoded here with a small protobuf wire decoder
// of the test's own, independent of the writer's encoder.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "../common/path_fixture.h"
#include "report/pprof.h"

namespace {

std::string gunzip(const std::string &gz)
{
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)  // gzip framing only
        throw std::runtime_error("inflateInit2");
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gz.data()));
    zs.avail_in = static_cast<uInt>(gz.size());
    std::string out;
    char buf[4096];
    int rc;
    do {
        zs.next_out = reinterpret_cast<Bytef *>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            throw std::runtime_error("inflate: " + std::to_string(rc));
        }
        out.append(buf, sizeof buf - zs.avail_out);
    } while (rc != Z_STREAM_END);
    const bool trailing = zs.avail_in != 0;
    inflateEnd(&zs);
    if (trailing)
        throw std::runtime_error("bytes after the gzip stream");
    return out;
}

// One field of a protobuf message: a varint (wire type 0) or length-delimited bytes (2).
struct Field {
    uint32_t number = 0;
    int wire = 0;
    uint64_t varint = 0;
    std::string bytes;
};

uint64_t read_varint(const std::string &s, size_t &pos)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= s.size())
            throw std::runtime_error("truncated varint");
        const auto byte = static_cast<uint8_t>(s[pos++]);
        v |= uint64_t{byte & 0x7fu} << shift;
        if (!(byte & 0x80))
            return v;
    }
    throw std::runtime_error("varint longer than 10 bytes");
}

std::vector<Field> decode(const std::string &msg)
{
    std::vector<Field> fields;
    size_t pos = 0;
    while (pos < msg.size()) {
        const uint64_t key = read_varint(msg, pos);
        Field f;
        f.number = static_cast<uint32_t>(key >> 3);
        f.wire = static_cast<int>(key & 7);
        if (f.number == 0)
            throw std::runtime_error("field number 0");
        if (f.wire == 0) {
            f.varint = read_varint(msg, pos);
        } else if (f.wire == 2) {
            const uint64_t len = read_varint(msg, pos);
            if (len > msg.size() - pos)
                throw std::runtime_error("length past the end");
            f.bytes = msg.substr(pos, len);
            pos += len;
        } else {
            throw std::runtime_error("unexpected wire type " + std::to_string(f.wire));
        }
        fields.push_back(std::move(f));
    }
    return fields;
}

// A repeated scalar field, packed or not.
std::vector<uint64_t> repeated(const std::vector<Field> &fields, uint32_t number)
{
    std::vector<uint64_t> out;
    for (const Field &f : fields) {
        if (f.number != number)
            continue;
        if (f.wire == 0) {
            out.push_back(f.varint);
        } else {
            size_t pos = 0;
            while (pos < f.bytes.size())
                out.push_back(read_varint(f.bytes, pos));
        }
    }
    return out;
}

// A singular scalar field: its last occurrence, 0 when absent (proto3).
uint64_t scalar(const std::vector<Field> &fields, uint32_t number)
{
    uint64_t v = 0;
    for (const Field &f : fields)
        if (f.number == number) {
            EXPECT_EQ(f.wire, 0) << "field " << number;
            v = f.varint;
        }
    return v;
}

std::vector<std::string> messages(const std::vector<Field> &fields, uint32_t number)
{
    std::vector<std::string> out;
    for (const Field &f : fields)
        if (f.number == number) {
            EXPECT_EQ(f.wire, 2) << "field " << number;
            out.push_back(f.bytes);
        }
    return out;
}

// The parts of perftools.profiles.Profile the writer fills, field numbers from profile.proto.
struct Function {
    std::string name, system_name, filename;
};
struct Sample {
    std::vector<uint64_t> location_ids;
    std::vector<int64_t> values;
    std::vector<std::string> names;  // location_ids' function names, leaf first
};
struct Decoded {
    std::vector<std::string> strings;
    std::vector<std::pair<std::string, std::string>> sample_types;
    std::vector<Sample> samples;
    std::map<uint64_t, std::vector<std::pair<uint64_t, int64_t>>> location_lines;  // id -> (function_id, line)
    std::map<uint64_t, Function> functions;
    std::map<uint64_t, uint64_t> location_mapping;       // location id -> mapping id
    std::map<uint64_t, std::pair<bool, bool>> mappings;  // id -> (has_functions, has_filenames)
    int64_t time_nanos = 0, duration_nanos = 0, period = 0;
    std::pair<std::string, std::string> period_type;
    std::vector<std::string> comments;
    std::string default_sample_type;
    size_t location_count = 0, function_count = 0;
};

Decoded decode_profile(const std::string &gz)
{
    const auto profile = decode(gunzip(gz));
    Decoded d;
    for (const std::string &s : messages(profile, 6))
        d.strings.push_back(s);
    auto str = [&d](uint64_t i) {
        if (i >= d.strings.size())
            throw std::runtime_error("string index out of range: " + std::to_string(i));
        return d.strings[i];
    };
    auto value_type = [&](const std::string &m) {
        const auto f = decode(m);
        return std::make_pair(str(scalar(f, 1)), str(scalar(f, 2)));
    };
    for (const std::string &m : messages(profile, 1))
        d.sample_types.push_back(value_type(m));
    for (const std::string &m : messages(profile, 4)) {
        const auto f = decode(m);
        d.location_mapping[scalar(f, 1)] = scalar(f, 2);
        auto &lines = d.location_lines[scalar(f, 1)];
        for (const std::string &l : messages(f, 4)) {
            const auto lf = decode(l);
            lines.emplace_back(scalar(lf, 1), static_cast<int64_t>(scalar(lf, 2)));
        }
        d.location_count++;
    }
    for (const std::string &m : messages(profile, 3)) {
        const auto f = decode(m);
        d.mappings[scalar(f, 1)] = {scalar(f, 7) != 0, scalar(f, 8) != 0};
    }
    for (const std::string &m : messages(profile, 5)) {
        const auto f = decode(m);
        d.functions[scalar(f, 1)] = {str(scalar(f, 2)), str(scalar(f, 3)), str(scalar(f, 4))};
        d.function_count++;
    }
    for (const std::string &m : messages(profile, 2)) {
        const auto f = decode(m);
        Sample s;
        s.location_ids = repeated(f, 1);
        for (uint64_t v : repeated(f, 2))
            s.values.push_back(static_cast<int64_t>(v));
        for (uint64_t id : s.location_ids) {
            const auto &lines = d.location_lines.at(id);
            s.names.push_back(lines.empty() ? "?" : d.functions.at(lines.front().first).name);
        }
        d.samples.push_back(std::move(s));
    }
    d.time_nanos = static_cast<int64_t>(scalar(profile, 9));
    d.duration_nanos = static_cast<int64_t>(scalar(profile, 10));
    const auto period_type = messages(profile, 11);
    if (!period_type.empty())
        d.period_type = value_type(period_type.back());
    d.period = static_cast<int64_t>(scalar(profile, 12));
    for (uint64_t i : repeated(profile, 13))
        d.comments.push_back(str(i));
    d.default_sample_type = str(scalar(profile, 14));
    return d;
}

std::string pprof_bytes(const jmt::CallTree &tree, uint64_t duration_ns = 5'000'000'000,
                        int64_t time_nanos = 1'700'000'000'000'000'000)
{
    std::ostringstream out;
    jmt::write_pprof(out, tree, duration_ns, time_nanos);
    EXPECT_TRUE(out.good());
    return out.str();
}

jmt::PathNode node(uint32_t id, uint32_t parent, const std::string &method, uint64_t calls, uint64_t wall_excl,
                   uint64_t cpu_excl, const std::string &klass = "demo/abc/FixedWork", const std::string &sig = "()V")
{
    return jmt_test::path_node(id, parent, klass, method, sig, calls, {0, wall_excl, 0, cpu_excl});
}

// The A/B/C flow, N = 1000 calls of a(): a() calls b() twice and c() once,
// b() calls c() twice. Per call exclusive: a 1000 ns, b 2000 ns, c 5000 ns of
// elapsed time, 90% of it on CPU. Inclusive times are filled bottom-up.
jmt::CallTree abc_tree()
{
    jmt::CallTree t;
    t.nodes.push_back(node(1, 0, "a", 1000, 1'000'000, 900'000));
    t.nodes.push_back(node(2, 1, "b", 2000, 4'000'000, 3'600'000));
    t.nodes.push_back(node(3, 2, "c", 4000, 20'000'000, 18'000'000));
    t.nodes.push_back(node(4, 1, "c", 1000, 5'000'000, 4'500'000));
    auto incl = [&t](size_t i, std::initializer_list<size_t> children) {
        auto &s = t.nodes[i].stats;
        s.wall_incl_ns = s.wall_excl_ns;
        s.cpu_incl_ns = s.cpu_excl_ns;
        for (size_t c : children) {
            s.wall_incl_ns += t.nodes[c].stats.wall_incl_ns;
            s.cpu_incl_ns += t.nodes[c].stats.cpu_incl_ns;
        }
    };
    incl(2, {});
    incl(3, {});
    incl(1, {2});
    incl(0, {1, 3});
    return t;
}

const std::string A = "demo.abc.FixedWork.a()";
const std::string B = "demo.abc.FixedWork.b()";
const std::string C = "demo.abc.FixedWork.c()";

// What pprof computes per function for sample index i: flat = the samples
// whose leaf it is, cum = the samples it appears in (once per sample, however often).
std::pair<int64_t, int64_t> flat_cum(const Decoded &d, const std::string &name, size_t i)
{
    int64_t flat = 0, cum = 0;
    for (const Sample &s : d.samples) {
        if (s.names.front() == name)
            flat += s.values[i];
        if (std::find(s.names.begin(), s.names.end(), name) != s.names.end())
            cum += s.values[i];
    }
    return {flat, cum};
}

TEST(Pprof, GzipFraming)
{
    const std::string gz = pprof_bytes(abc_tree());
    ASSERT_GE(gz.size(), 18u);
    EXPECT_EQ(static_cast<uint8_t>(gz[0]), 0x1f);
    EXPECT_EQ(static_cast<uint8_t>(gz[1]), 0x8b);
    EXPECT_EQ(static_cast<uint8_t>(gz[2]), 8);  // deflate
    EXPECT_NO_THROW(gunzip(gz));
}

TEST(Pprof, HeaderFields)
{
    const Decoded d = decode_profile(pprof_bytes(abc_tree(), 5'000'000'000, 1'700'000'000'123'456'789));
    ASSERT_FALSE(d.strings.empty());
    EXPECT_EQ(d.strings[0], "");
    // No string twice.
    EXPECT_EQ(std::set<std::string>(d.strings.begin(), d.strings.end()).size(), d.strings.size());
    using VT = std::pair<std::string, std::string>;
    EXPECT_EQ(d.sample_types, (std::vector<VT>{{"calls", "count"},
                                               {"wall", "nanoseconds"},
                                               {"cpu", "nanoseconds"},
                                               {"runq", "nanoseconds"},
                                               {"blocked", "nanoseconds"}}));
    EXPECT_EQ(d.default_sample_type, "wall");
    EXPECT_EQ(d.period_type, (VT{"calls", "count"}));
    EXPECT_EQ(d.period, 1);
    EXPECT_EQ(d.duration_nanos, 5'000'000'000);
    EXPECT_EQ(d.time_nanos, 1'700'000'000'123'456'789);
    ASSERT_EQ(d.comments.size(), 1u);
    EXPECT_NE(d.comments[0].find("jmethodtime"), std::string::npos);
}

TEST(Pprof, OneSamplePerPathLeafFirst)
{
    const Decoded d = decode_profile(pprof_bytes(abc_tree()));
    ASSERT_EQ(d.samples.size(), 4u);
    using Names = std::vector<std::string>;
    using Values = std::vector<int64_t>;
    EXPECT_EQ(d.samples[0].names, (Names{A}));
    EXPECT_EQ(d.samples[0].values, (Values{1000, 1'000'000, 900'000, 0, 100'000}));
    EXPECT_EQ(d.samples[1].names, (Names{B, A}));
    EXPECT_EQ(d.samples[1].values, (Values{2000, 4'000'000, 3'600'000, 0, 400'000}));
    EXPECT_EQ(d.samples[2].names, (Names{C, B, A}));
    EXPECT_EQ(d.samples[2].values, (Values{4000, 20'000'000, 18'000'000, 0, 2'000'000}));
    EXPECT_EQ(d.samples[3].names, (Names{C, A}));
    EXPECT_EQ(d.samples[3].values, (Values{1000, 5'000'000, 4'500'000, 0, 500'000}));
    // The same method is the same location in every path.
    EXPECT_EQ(d.samples[2].location_ids[0], d.samples[3].location_ids[0]);
    EXPECT_EQ(d.samples[1].location_ids[1], d.samples[3].location_ids[1]);
}

TEST(Pprof, OneFunctionAndLocationPerMethod)
{
    const Decoded d = decode_profile(pprof_bytes(abc_tree()));
    EXPECT_EQ(d.function_count, 3u);
    EXPECT_EQ(d.location_count, 3u);
    std::map<std::string, Function> by_name;
    for (const auto &[id, f] : d.functions) {
        EXPECT_NE(id, 0u);
        by_name[f.name] = f;
    }
    ASSERT_EQ(by_name.size(), 3u);
    EXPECT_EQ(by_name[A].system_name, "demo/abc/FixedWork.a()V");
    EXPECT_EQ(by_name[B].system_name, "demo/abc/FixedWork.b()V");
    EXPECT_EQ(by_name[C].system_name, "demo/abc/FixedWork.c()V");
    EXPECT_EQ(by_name[C].filename, "demo/abc/FixedWork.java");
    for (const auto &[id, lines] : d.location_lines) {
        EXPECT_NE(id, 0u);
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_EQ(d.functions.count(lines[0].first), 1u);
        EXPECT_EQ(lines[0].second, 0);  // no line numbers
    }
    // One mapping, saying the functions are known (pprof does not try to symbolize).
    ASSERT_EQ(d.mappings.size(), 1u);
    const auto &[mapping_id, has] = *d.mappings.begin();
    EXPECT_NE(mapping_id, 0u);
    EXPECT_TRUE(has.first);
    EXPECT_TRUE(has.second);
    for (const auto &[location, mapping] : d.location_mapping)
        EXPECT_EQ(mapping, mapping_id) << "location " << location;
}

TEST(Pprof, FlatIsExclusiveCumIsInclusive)
{
    const jmt::CallTree t = abc_tree();
    const Decoded d = decode_profile(pprof_bytes(t));
    // Totals: every call once; the roots' inclusive times.
    int64_t calls = 0, wall = 0, cpu = 0;
    for (const Sample &s : d.samples) {
        calls += s.values[0];
        wall += s.values[1];
        cpu += s.values[2];
    }
    uint64_t tree_calls = 0;
    for (const auto &n : t.nodes)
        tree_calls += n.stats.calls;
    EXPECT_EQ(calls, static_cast<int64_t>(tree_calls));
    EXPECT_EQ(wall, static_cast<int64_t>(t.nodes[0].stats.wall_incl_ns));
    EXPECT_EQ(cpu, static_cast<int64_t>(t.nodes[0].stats.cpu_incl_ns));

    using P = std::pair<int64_t, int64_t>;
    EXPECT_EQ(flat_cum(d, A, 1), (P{1'000'000, 30'000'000}));
    EXPECT_EQ(flat_cum(d, B, 1), (P{4'000'000, 24'000'000}));
    EXPECT_EQ(flat_cum(d, C, 1), (P{25'000'000, 25'000'000}));
    EXPECT_EQ(flat_cum(d, A, 0), (P{1000, 8000}));
    EXPECT_EQ(flat_cum(d, B, 0), (P{2000, 6000}));
    EXPECT_EQ(flat_cum(d, C, 0), (P{5000, 5000}));
    EXPECT_EQ(flat_cum(d, A, 2), (P{900'000, 27'000'000}));
    // a's cum is its path node's inclusive time.
    EXPECT_EQ(flat_cum(d, A, 1).second, static_cast<int64_t>(t.nodes[0].stats.wall_incl_ns));
    EXPECT_EQ(flat_cum(d, B, 1).second, static_cast<int64_t>(t.nodes[1].stats.wall_incl_ns));
}

TEST(Pprof, RecursionTruncatedAndZeroPaths)
{
    jmt::CallTree t;
    // main (no exclusive value of its own) -> r -> r (recursion is its own path); [truncated] under main.
    t.nodes.push_back(node(10, 0, "main", 0, 0, 0, "app/Main", "([Ljava/lang/String;)V"));
    t.nodes.push_back(node(11, 10, "r", 3, 300, 200, "app/Rec$Inner", "(I)I"));
    t.nodes.push_back(node(12, 11, "r", 9, 900, 600, "app/Rec$Inner", "(I)I"));
    jmt::PathNode trunc = node(13, 10, "", 7, 700, 500, "", "");
    trunc.truncated = true;
    t.nodes.push_back(trunc);
    t.nodes.push_back(node(14, 10, "idle", 0, 0, 0, "app/Main$$Lambda$14/0x0000000800c03000", "()V"));
    t.truncated_calls = 7;

    const Decoded d = decode_profile(pprof_bytes(t));
    using Names = std::vector<std::string>;
    ASSERT_EQ(d.samples.size(), 3u);  // main and idle have nothing of their own
    const std::string main = "app.Main.main(String[])", r = "app.Rec$Inner.r(int)";
    EXPECT_EQ(d.samples[0].names, (Names{r, main}));
    EXPECT_EQ(d.samples[1].names, (Names{r, r, main}));
    EXPECT_EQ(d.samples[1].location_ids[0], d.samples[1].location_ids[1]);
    EXPECT_EQ(d.samples[2].names, (Names{"[truncated]", main}));
    EXPECT_EQ(d.samples[2].values, (std::vector<int64_t>{7, 700, 500, 0, 200}));
    // r's cum counts the recursive path once.
    EXPECT_EQ(flat_cum(d, r, 1), (std::pair<int64_t, int64_t>{1200, 1200}));
    EXPECT_EQ(flat_cum(d, main, 0), (std::pair<int64_t, int64_t>{0, 19}));

    EXPECT_EQ(d.function_count, 3u);  // idle is in no sample
    std::map<std::string, Function> by_name;
    for (const auto &[id, f] : d.functions)
        by_name[f.name] = f;
    EXPECT_EQ(by_name[r].filename, "app/Rec.java");
    EXPECT_EQ(by_name[r].system_name, "app/Rec$Inner.r(I)I");
    EXPECT_EQ(by_name[main].filename, "app/Main.java");
    EXPECT_EQ(by_name["[truncated]"].system_name, "");
    EXPECT_EQ(by_name["[truncated]"].filename, "");
}

TEST(Pprof, LambdaClassFileIsItsOuterClass)
{
    jmt::CallTree t;
    t.nodes.push_back(node(1, 0, "run", 1, 10, 10, "app/Main$$Lambda$14/0x0000000800c03000", "()V"));
    const Decoded d = decode_profile(pprof_bytes(t));
    ASSERT_EQ(d.functions.size(), 1u);
    EXPECT_EQ(d.functions.begin()->second.filename, "app/Main.java");
}

TEST(Pprof, EmptyTreeIsAValidProfile)
{
    const Decoded d = decode_profile(pprof_bytes(jmt::CallTree{}, 0));
    EXPECT_TRUE(d.samples.empty());
    EXPECT_EQ(d.function_count, 0u);
    EXPECT_EQ(d.sample_types.size(), 5u);
    EXPECT_EQ(d.strings.at(0), "");
    EXPECT_EQ(d.default_sample_type, "wall");
}

TEST(Pprof, ValuesAboveInt64MaxAreClamped)
{
    jmt::CallTree t;
    t.nodes.push_back(node(1, 0, "a", 1, std::numeric_limits<uint64_t>::max(), 5));
    const Decoded d = decode_profile(pprof_bytes(t));
    ASSERT_EQ(d.samples.size(), 1u);
    EXPECT_EQ(d.samples[0].values[1], std::numeric_limits<int64_t>::max());
    EXPECT_EQ(d.samples[0].values[2], 5);
}

TEST(Pprof, MalformedParentChainEnds)
{
    jmt::CallTree t;
    t.nodes.push_back(node(1, 2, "a", 1, 10, 10));  // a cycle: 1 -> 2 -> 1
    t.nodes.push_back(node(2, 1, "b", 1, 10, 10));
    t.nodes.push_back(node(3, 99, "c", 1, 10, 10));  // parent missing: c is a root
    const Decoded d = decode_profile(pprof_bytes(t));
    ASSERT_EQ(d.samples.size(), 3u);
    EXPECT_LE(d.samples[0].location_ids.size(), t.nodes.size() + 1);  // the bound PathIndex::chain has
    EXPECT_EQ(d.samples[2].names, (std::vector<std::string>{C}));
}

TEST(Pprof, SameInputSameBytes) { EXPECT_EQ(pprof_bytes(abc_tree()), pprof_bytes(abc_tree())); }

TEST(Pprof, TimeDefaultsToTheTraceStart)
{
    const int64_t before =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    std::ostringstream out;
    jmt::write_pprof(out, abc_tree(), 2'000'000'000);
    const int64_t after =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const Decoded d = decode_profile(out.str());
    EXPECT_GE(d.time_nanos, before - 2'000'000'000);
    EXPECT_LE(d.time_nanos, after - 2'000'000'000);
}

}  // namespace
