// The typed map readers (loader/map_reader.h) against the programs' own maps as
// the BPF object declares them: the skeleton opened, not loaded (no root needed).
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "jmethodtime.h"
// The skeleton's globals are the ABI header's types.
#include "jmethodtime.skel.h"
#include "loader/map_reader.h"
#include "loader/programs.h"

namespace {

struct Closer {
    void operator()(jmethodtime_bpf *skel) const { jmethodtime_bpf__destroy(skel); }
};

TEST(MapReader, EveryReadMapHasTheSizesOfItsReader)
{
    std::unique_ptr<jmethodtime_bpf, Closer> skel(jmethodtime_bpf__open());
    ASSERT_TRUE(skel) << "the BPF object does not open";
    const jmt::ProgramMaps maps = jmt::program_maps(skel.get());
    EXPECT_EQ(maps.names.fd(), -1) << "not loaded: no map yet";
    // A reader of the wrong size is refused, naming the map.
    try {
        jmt::map_reader<__u32, jmt_method_stats>(skel->maps.names);
        FAIL() << "a jmt_method_stats reader of the names map";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("the BPF map names has keys of 4 bytes"), std::string::npos) << e.what();
    }
    EXPECT_THROW((jmt::map_reader<__u64, __u32>(skel->maps.row_ids)), jmt::Error);
    EXPECT_THROW((jmt::map_reader<__u32, std::array<char, JMT_COMM_LEN - 1>>(skel->maps.thread_names)), jmt::Error);
}

TEST(MapReader, WithoutAMapEveryReadFindsNothing)
{
    const jmt::MapReader<__u32, jmt_method_stats> none;
    jmt_method_stats one{};
    std::vector<jmt_method_stats> per_cpu;
    EXPECT_FALSE(none.lookup(1, one));
    EXPECT_FALSE(none.lookup_per_cpu(1, per_cpu));
    EXPECT_TRUE(none.entries().empty());
}

}  // namespace
