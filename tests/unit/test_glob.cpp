// The kernel's --class/--method glob matcher (bpf/glob.h), run in userspace.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "glob.h"

namespace {

struct Outcome {
    int result;      // enum jmt_glob_result after the loop
    uint32_t steps;  // steps taken
};

// Drives jmt_glob_step like the BPF program's bpf_loop: at most budget calls,
// stopping when a step returns 1. The subject sits in a buffer of buf_size
// bytes (a power of two), like the kernel's name buffers.
Outcome run(const std::string &pat, const std::string &subject, uint32_t budget = 1u << 20,
            uint32_t buf_size = JMT_CLASS_BUF)
{
    std::vector<char> buf(buf_size, '\0');
    const size_t slen = std::min<size_t>(subject.size(), buf_size);
    std::copy(subject.begin(), subject.begin() + static_cast<long>(slen), buf.begin());
    std::vector<char> p(JMT_GLOB_LEN, '\0');
    std::copy(pat.begin(), pat.end(), p.begin());
    jmt_glob_state st;
    jmt_glob_init(&st, static_cast<uint32_t>(pat.size()), static_cast<uint32_t>(slen));
    for (uint32_t i = 0; i < budget; i++)
        if (jmt_glob_step(&st, p.data(), buf.data(), buf_size - 1))
            break;
    return {st.result, st.steps};
}

bool matches(const std::string &pat, const std::string &subject)
{
    const Outcome o = run(pat, subject);
    EXPECT_NE(o.result, JMT_GLOB_RUNNING) << pat << " vs " << subject;
    return o.result == JMT_GLOB_MATCH;
}

// The obvious recursive definition, for comparison.
bool reference(const char *p, const char *pe, const char *s, const char *se)
{
    if (p == pe)
        return s == se;
    if (*p == '*')
        return reference(p + 1, pe, s, se) || (s != se && reference(p, pe, s + 1, se));
    if (s == se)
        return false;
    return (*p == '?' || *p == *s) && reference(p + 1, pe, s + 1, se);
}

bool reference(const std::string &p, const std::string &s)
{
    return reference(p.data(), p.data() + p.size(), s.data(), s.data() + s.size());
}

TEST(Glob, LiteralsMatchWholeNamesOnly)
{
    EXPECT_TRUE(matches("getA", "getA"));
    EXPECT_FALSE(matches("getA", "getAB"));  // anchored at the end
    EXPECT_FALSE(matches("getA", "xgetA"));  // anchored at the start
    EXPECT_FALSE(matches("getA", "get"));
    EXPECT_FALSE(matches("getA", "getB"));
    EXPECT_FALSE(matches("geta", "getA"));  // case matters
    EXPECT_TRUE(matches("<init>", "<init>"));
    EXPECT_FALSE(matches("<init>", "<clinit>"));
    EXPECT_TRUE(matches("demo/globs/Shop$Inner", "demo/globs/Shop$Inner"));
}

TEST(Glob, StarAtEitherEndOrBoth)
{
    EXPECT_TRUE(matches("get*", "getA"));
    EXPECT_TRUE(matches("get*", "get"));  // a star may match nothing
    EXPECT_FALSE(matches("get*", "setA"));
    EXPECT_FALSE(matches("get*", "ge"));
    EXPECT_TRUE(matches("*Inner", "demo/globs/Shop$Inner"));
    EXPECT_TRUE(matches("*Inner", "Inner"));
    EXPECT_FALSE(matches("*Inner", "demo/globs/Shop$InnerX"));
    EXPECT_TRUE(matches("*Result*", "org/postgresql/jdbc/PgResultSet"));
    EXPECT_TRUE(matches("*Result*", "Result"));
    EXPECT_FALSE(matches("*Result*", "org/postgresql/jdbc/PgResulSet"));
    // '*' crosses package separators.
    EXPECT_TRUE(matches("org/*/Pg*", "org/postgresql/jdbc/PgResultSet"));
    EXPECT_TRUE(matches("org/postgresql/jdbc/Pg*", "org/postgresql/jdbc/PgResultSet"));
    EXPECT_FALSE(matches("org/postgresql/jdbc/Pg*", "org/postgresql/core/PgStream"));
}

TEST(Glob, QuestionMarkIsExactlyOneByte)
{
    EXPECT_TRUE(matches("get?", "getA"));
    EXPECT_FALSE(matches("get?", "get"));
    EXPECT_FALSE(matches("get?", "getAB"));
    EXPECT_TRUE(matches("?", "x"));
    EXPECT_FALSE(matches("?", ""));
    EXPECT_TRUE(matches("??", "ab"));
    EXPECT_TRUE(matches("a?c", "a/c"));
    EXPECT_TRUE(matches("*?", "a"));
    EXPECT_FALSE(matches("*?", ""));
    EXPECT_TRUE(matches("?*?", "ab"));
    EXPECT_FALSE(matches("?*?", "a"));
}

TEST(Glob, StarsAndEmptyRuns)
{
    EXPECT_TRUE(matches("*", ""));
    EXPECT_TRUE(matches("*", "anything/at/all"));
    EXPECT_TRUE(matches("**", ""));
    EXPECT_TRUE(matches("***", "abc"));
    EXPECT_TRUE(matches("a**b", "ab"));
    EXPECT_TRUE(matches("a*b*c", "abc"));  // every star empty
    EXPECT_TRUE(matches("*a*", "a"));
    EXPECT_FALSE(matches("", "a"));
    EXPECT_TRUE(matches("", ""));
    EXPECT_FALSE(matches("a*", ""));
}

TEST(Glob, Backtracking)
{
    EXPECT_TRUE(matches("a*b*c", "aXbYbZc"));
    EXPECT_TRUE(matches("a*b*c", "abbbbc"));
    EXPECT_FALSE(matches("a*b*c", "aXbYbZ"));
    EXPECT_FALSE(matches("a*b*c", "aXcYc b"));
    EXPECT_TRUE(matches("*ab", "aab"));  // the first 'a' is not the one
    EXPECT_TRUE(matches("*aab", "aaaab"));
    EXPECT_TRUE(matches("*abc*abd", "abcabcabd"));
    EXPECT_FALSE(matches("*abc*abd", "abcabcab"));
    EXPECT_TRUE(matches("a*?b", "aXYb"));
    EXPECT_TRUE(matches("get*Value*", "getIntValueAt"));
    EXPECT_TRUE(matches("*$*$*", "demo/A$B$C"));
    EXPECT_FALSE(matches("*$*$*", "demo/A$BC"));
}

TEST(Glob, NoMatch)
{
    EXPECT_FALSE(matches("set*", "getA"));
    EXPECT_FALSE(matches("*Outer", "demo/globs/Shop$Inner"));
    EXPECT_FALSE(matches("a*z", "abcdefg"));
    EXPECT_FALSE(matches("x", ""));
}

TEST(Glob, SubjectIsReadThroughItsBufferLengthOnly)
{
    // Bytes past slen in the buffer never take part.
    std::vector<char> buf(JMT_METHOD_BUF, 'A');
    const char pat[JMT_GLOB_LEN] = "AA";
    jmt_glob_state st;
    jmt_glob_init(&st, 2, 1);  // subject "A", followed by more 'A's in memory
    while (!jmt_glob_step(&st, pat, buf.data(), JMT_METHOD_BUF - 1)) {
    }
    EXPECT_EQ(st.result, JMT_GLOB_NO_MATCH);
    // A full-size subject is read in bounds (the test's buffer is exactly that size).
    const std::string long_name(JMT_METHOD_BUF, 'm');
    EXPECT_TRUE(run("m*m", long_name, 1u << 20, JMT_METHOD_BUF).result == JMT_GLOB_MATCH);
    EXPECT_TRUE(run("*?", long_name, 1u << 20, JMT_METHOD_BUF).result == JMT_GLOB_MATCH);
}

TEST(Glob, DecidedStateStaysDecided)
{
    std::vector<char> buf(JMT_CLASS_BUF, '\0');
    const char pat[JMT_GLOB_LEN] = "a";
    buf[0] = 'a';
    jmt_glob_state st;
    jmt_glob_init(&st, 1, 1);
    int steps = 0;
    while (!jmt_glob_step(&st, pat, buf.data(), JMT_CLASS_BUF - 1))
        steps++;
    EXPECT_EQ(st.result, JMT_GLOB_MATCH);
    EXPECT_EQ(jmt_glob_step(&st, pat, buf.data(), JMT_CLASS_BUF - 1), 1);
    EXPECT_EQ(st.result, JMT_GLOB_MATCH);
}

TEST(Glob, CorruptStateNeverMatchesOrReadsOutOfBounds)
{
    std::vector<char> buf(JMT_CLASS_BUF, 'a');
    const char pat[JMT_GLOB_LEN] = "*";
    jmt_glob_state st;
    jmt_glob_init(&st, 1, 4);
    st.s = 5000;  // beyond slen
    EXPECT_EQ(jmt_glob_step(&st, pat, buf.data(), JMT_CLASS_BUF - 1), 1);
    EXPECT_EQ(st.result, JMT_GLOB_NO_MATCH);
    jmt_glob_init(&st, 1, 4);
    st.p = 7;  // beyond plen
    EXPECT_EQ(jmt_glob_step(&st, pat, buf.data(), JMT_CLASS_BUF - 1), 1);
    EXPECT_EQ(st.result, JMT_GLOB_NO_MATCH);
    // An over-long pattern length is clamped below JMT_GLOB_LEN.
    jmt_glob_init(&st, 4096, 4);
    EXPECT_EQ(st.plen, uint32_t(JMT_GLOB_LEN - 1));
}

TEST(Glob, BudgetRunsOutOnPathologicalPatternsOnly)
{
    // Worst case: a 127-byte pattern of 'a's behind a star, against 1024 'a's
    // and a final mismatch: about (slen + 1) * (plen + 1) steps.
    const std::string worst_pat = "*" + std::string(125, 'a') + "b";
    const std::string worst_subject(JMT_CLASS_BUF, 'a');
    const Outcome full = run(worst_pat, worst_subject);
    EXPECT_EQ(full.result, JMT_GLOB_NO_MATCH);
    EXPECT_LE(full.steps, uint32_t((JMT_CLASS_BUF + 1) * JMT_GLOB_LEN + JMT_GLOB_LEN));
    EXPECT_GT(full.steps, uint32_t(JMT_GLOB_STEPS)) << "the worst case must exceed the kernel's budget";
    const Outcome cut = run(worst_pat, worst_subject, JMT_GLOB_STEPS);
    EXPECT_EQ(cut.result, JMT_GLOB_RUNNING);  // the kernel counts this and does not trace the method
    // Practical patterns stay far below the budget, even on the longest names.
    const std::string long_class = "org/" + std::string(1000, 'x') + "/PgResultSet";
    for (const char *p : {"*ResultSet", "org/postgresql/jdbc/Pg*", "*Result*", "org/*/Pg*Set", "*$*", "*x?x*"}) {
        const Outcome o = run(p, long_class);
        EXPECT_NE(o.result, JMT_GLOB_RUNNING) << p;
        EXPECT_LT(o.steps, uint32_t(4 * JMT_CLASS_BUF)) << p;
    }
}

TEST(Glob, AgreesWithTheRecursiveDefinition)
{
    std::mt19937 rng(12345);
    const std::string pat_alphabet = "ab*?";
    const std::string subject_alphabet = "ab/";
    for (int i = 0; i < 20000; i++) {
        std::string p, s;
        for (int n = static_cast<int>(rng() % 8); n > 0; n--)
            p += pat_alphabet[rng() % pat_alphabet.size()];
        for (int n = static_cast<int>(rng() % 10); n > 0; n--)
            s += subject_alphabet[rng() % subject_alphabet.size()];
        const Outcome o = run(p, s);
        ASSERT_NE(o.result, JMT_GLOB_RUNNING) << p << " vs " << s;
        ASSERT_EQ(o.result == JMT_GLOB_MATCH, reference(p, s)) << "'" << p << "' vs '" << s << "'";
        ASSERT_LE(o.steps, uint32_t((s.size() + 1) * (p.size() + 1) + p.size() + 1)) << p << " vs " << s;
    }
}

}  // namespace
