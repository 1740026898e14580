#include <gtest/gtest.h>

#include "profile.h"

namespace {

jmt::MethodRow row(const std::string &k, const std::string &m, const std::string &s, uint64_t calls,
                   uint64_t incl, uint64_t excl, uint64_t cpu_incl = 0, uint64_t cpu_excl = 0,
                   uint64_t unreturned = 0)
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
    r.stats.unreturned = unreturned;
    return r;
}

std::vector<std::string> names_of(const std::vector<jmt::MethodRow> &rows)
{
    std::vector<std::string> out;
    for (const auto &r : rows)
        out.push_back(r.klass + "." + r.method + r.signature);
    return out;
}

using Names = std::vector<std::string>;

TEST(MethodStats, PlusEqualsSumsEveryField)
{
    jmt::MethodStats a = row("", "", "", 1, 2, 3, 4, 5, 6).stats;
    const jmt::MethodStats b = row("", "", "", 10, 20, 30, 40, 50, 60).stats;
    jmt::MethodStats &ref = (a += b);
    EXPECT_EQ(&ref, &a);
    EXPECT_EQ(a.calls, 11u);
    EXPECT_EQ(a.wall_incl_ns, 22u);
    EXPECT_EQ(a.wall_excl_ns, 33u);
    EXPECT_EQ(a.cpu_incl_ns, 44u);
    EXPECT_EQ(a.cpu_excl_ns, 55u);
    EXPECT_EQ(a.unreturned, 66u);
    EXPECT_EQ(b.calls, 10u);
}

TEST(SortedRows, DescendingByEachKey)
{
    std::vector<jmt::MethodRow> rows = {row("p/A", "x", "()V", 5, 100, 10, 7, 1),
                                        row("p/A", "y", "()V", 9, 50, 30, 3, 2),
                                        row("p/A", "z", "()V", 1, 70, 40, 9, 3)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Calls)), (Names{"p/A.y()V", "p/A.x()V", "p/A.z()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Incl)), (Names{"p/A.x()V", "p/A.z()V", "p/A.y()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)), (Names{"p/A.z()V", "p/A.y()V", "p/A.x()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::CpuIncl)),
              (Names{"p/A.z()V", "p/A.x()V", "p/A.y()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::CpuExcl)),
              (Names{"p/A.z()V", "p/A.y()V", "p/A.x()V"}));
}

TEST(SortedRows, TiesByClassThenMethodThenSignatureAscending)
{
    // All tie on the key; input order is deliberately reversed.
    std::vector<jmt::MethodRow> rows = {row("p/B", "a", "()V", 1, 5, 5), row("p/A", "b", "()V", 1, 5, 5),
                                        row("p/A", "a", "(J)V", 1, 5, 5), row("p/A", "a", "(I)V", 1, 5, 5),
                                        row("p/C", "a", "()V", 2, 1, 1)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)),
              (Names{"p/A.a(I)V", "p/A.a(J)V", "p/A.b()V", "p/B.a()V", "p/C.a()V"}));
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Calls)),
              (Names{"p/C.a()V", "p/A.a(I)V", "p/A.a(J)V", "p/A.b()V", "p/B.a()V"}));
}

TEST(SortedRows, ComparesFullValuesNotTruncated)
{
    // Values above 2^32 and above 2^53 must not collapse.
    std::vector<jmt::MethodRow> rows = {row("p/A", "small", "()V", 1, 0, (1ULL << 32) + 1),
                                        row("p/A", "big", "()V", 1, 0, (1ULL << 53) + 1),
                                        row("p/A", "bigger", "()V", 1, 0, (1ULL << 53) + 2)};
    EXPECT_EQ(names_of(jmt::sorted_rows(rows, jmt::SortKey::Excl)),
              (Names{"p/A.bigger()V", "p/A.big()V", "p/A.small()V"}));
}

TEST(SortedRows, EmptyAndInputUnchanged)
{
    EXPECT_TRUE(jmt::sorted_rows({}, jmt::SortKey::Calls).empty());
    std::vector<jmt::MethodRow> rows = {row("p/A", "x", "()V", 1, 1, 1), row("p/A", "y", "()V", 2, 2, 2)};
    auto sorted = jmt::sorted_rows(rows, jmt::SortKey::Calls);
    EXPECT_EQ(names_of(sorted), (Names{"p/A.y()V", "p/A.x()V"}));
    EXPECT_EQ(names_of(rows), (Names{"p/A.x()V", "p/A.y()V"}));
    EXPECT_EQ(sorted[0].stats.wall_incl_ns, 2u);  // stats travel with their row
}

TEST(MergeRows, SumsEqualMethodsKeepsOverloadsAndClassesApartInFirstSeenOrder)
{
    std::vector<jmt::MethodRow> rows = {
        row("p/B", "f", "()V", 4, 40, 20, 4, 2, 0), row("p/A", "f", "()V", 1, 10, 5, 1, 1, 1),
        row("p/A", "f", "(I)V", 2, 20, 10, 2, 1, 0), row("p/A", "f", "()V", 3, 30, 15, 3, 2, 2),
        row("p/A", "g", "()V", 5, 50, 25, 5, 3, 0), row("p/A", "f", "()V", 6, 60, 30, 6, 4, 3)};
    auto merged = jmt::merge_rows(rows);
    ASSERT_EQ(names_of(merged), (Names{"p/B.f()V", "p/A.f()V", "p/A.f(I)V", "p/A.g()V"}));
    const jmt::MethodStats &f = merged[1].stats;
    EXPECT_EQ(f.calls, 10u);
    EXPECT_EQ(f.wall_incl_ns, 100u);
    EXPECT_EQ(f.wall_excl_ns, 50u);
    EXPECT_EQ(f.cpu_incl_ns, 10u);
    EXPECT_EQ(f.cpu_excl_ns, 7u);
    EXPECT_EQ(f.unreturned, 6u);
    EXPECT_EQ(merged[0].stats.calls, 4u);
    EXPECT_EQ(merged[2].stats.calls, 2u);
    EXPECT_EQ(merged[2].stats.wall_incl_ns, 20u);
    EXPECT_EQ(merged[3].stats.calls, 5u);
}

TEST(MergeRows, NameFieldsAreNotConcatenated)
{
    // "a"+"bc" and "ab"+"c" are different methods even though the bytes join equally.
    std::vector<jmt::MethodRow> rows = {row("p/A", "a", "bc", 1, 1, 1), row("p/A", "ab", "c", 1, 1, 1),
                                        row("p/Aa", "", "bc", 1, 1, 1)};
    EXPECT_EQ(jmt::merge_rows(rows).size(), 3u);
    EXPECT_TRUE(jmt::merge_rows({}).empty());
}

}  // namespace
