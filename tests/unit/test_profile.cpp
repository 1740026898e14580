#include <gtest/gtest.h>

#include "profile.h"

namespace {

jmt::MethodRow row(const std::string &k, const std::string &m, const std::string &s, uint64_t calls,
                   uint64_t incl, uint64_t excl, uint64_t cpu_incl = 0, uint64_t cpu_excl = 0)
{
    jmt::MethodRow r;
    r.klass = k;
    r.method = m;
    r.signature = s;
    r.stats.calls = calls;
    r.stats.wall_incl_ns = incl;
    r.stats.wall_excl_ns = excl;
    r.stats.cpu_incl_ns = cpu_incl;
    r.stats.cpu_excl_ns = cpu_excl;
    return r;
}

std::vector<std::string> methods_of(const std::vector<jmt::MethodRow> &rows)
{
    std::vector<std::string> out;
    for (const auto &r : rows)
        out.push_back(r.method + r.signature);
    return out;
}

TEST(SortedRows, DescendingByEachKeyWithNameTies)
{
    std::vector<jmt::MethodRow> rows = {row("p/A", "x", "()V", 5, 100, 10, 7, 1),
                                        row("p/A", "y", "()V", 9, 50, 30, 3, 2),
                                        row("p/A", "z", "()V", 1, 70, 30, 9, 3)};
    EXPECT_EQ(methods_of(jmt::sorted_rows(rows, jmt::SortKey::Calls)),
              (std::vector<std::string>{"y()V", "x()V", "z()V"}));
    EXPECT_EQ(methods_of(jmt::sorted_rows(rows, jmt::SortKey::Incl)),
              (std::vector<std::string>{"x()V", "z()V", "y()V"}));
    // y and z tie on exclusive time: name order decides.
    EXPECT_EQ(methods_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)),
              (std::vector<std::string>{"y()V", "z()V", "x()V"}));
    EXPECT_EQ(methods_of(jmt::sorted_rows(rows, jmt::SortKey::CpuIncl)),
              (std::vector<std::string>{"z()V", "x()V", "y()V"}));
    EXPECT_EQ(methods_of(jmt::sorted_rows(rows, jmt::SortKey::CpuExcl)),
              (std::vector<std::string>{"z()V", "y()V", "x()V"}));
}

TEST(MergeRows, SumsEqualMethodsKeepsOverloadsApart)
{
    std::vector<jmt::MethodRow> rows = {row("p/A", "f", "()V", 1, 10, 5), row("p/A", "f", "(I)V", 2, 20, 10),
                                        row("p/A", "f", "()V", 3, 30, 15), row("p/B", "f", "()V", 4, 40, 20)};
    auto merged = jmt::merge_rows(rows);
    ASSERT_EQ(merged.size(), 3u);
    EXPECT_EQ(merged[0].signature, "()V");
    EXPECT_EQ(merged[0].stats.calls, 4u);
    EXPECT_EQ(merged[0].stats.wall_incl_ns, 40u);
    EXPECT_EQ(merged[0].stats.wall_excl_ns, 20u);
    EXPECT_EQ(merged[1].signature, "(I)V");
    EXPECT_EQ(merged[1].stats.calls, 2u);
    EXPECT_EQ(merged[2].klass, "p/B");
}

}  // namespace
