// The --package rule (bpf/package.h), the one function the kernel's filter (class_kept) and the
// agent's class filter (jmt_class_selected) call: run here in userspace, and through the agent's
// filter, on the same table of names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "control/agent/agent_request.h"
#include "package.h"

namespace {

// The name in a JMT_CLASS_BUF buffer, as the kernel reads it (names_scratch).
bool kernel_rule(const std::string &name, const std::string &pkg)
{
    std::vector<char> buf(JMT_CLASS_BUF, '\0');
    std::copy(name.begin(), name.end(), buf.begin());
    return jmt_under_package(buf.data(), static_cast<__u32>(name.size()), pkg.data(), static_cast<__u32>(pkg.size())) !=
           0;
}

bool agent_rule(const std::string &name, const std::string &pkg)
{
    const std::string filter = "p:" + pkg;
    return jmt_class_selected(filter.data(), filter.size(), name.data(), name.size()) != 0;
}

struct Case {
    const char *name;
    const char *pkg;
    bool under;
};

const Case kCases[] = {
    {"org/postgresql/Driver", "org/postgresql", true},
    {"org/postgresql/core/v3/QueryExecutorImpl", "org/postgresql", true},
    {"org/postgresql", "org/postgresql", true},                 // the package's own name
    {"org/postgresqlx/A", "org/postgresql", false},             // not at a segment's end
    {"org/postgres/A", "org/postgresql", false},                // shorter than the package
    {"org/Postgresql/A", "org/postgresql", false},              // bytes, case and all
    {"com/example/org/postgresql/A", "org/postgresql", false},  // a prefix, never a substring
    {"demo/abc/Abc$1", "demo/abc", true},
    {"demo/abc$1", "demo/abc", false},  // a nested class of demo/abc is not in package demo/abc
    {"A", "A", true},
    {"AB", "A", false},
    {"A", "", false},  // an empty package takes no name that does not start with '/'
};

TEST(PackageRule, WholeSegmentsInTheKernelsBufferAndTheAgentsFilterAlike)
{
    for (const Case &c : kCases) {
        EXPECT_EQ(kernel_rule(c.name, c.pkg), c.under) << c.name << " under " << c.pkg;
        EXPECT_EQ(agent_rule(c.name, c.pkg), c.under) << c.name << " under " << c.pkg << " (agent)";
    }
}

TEST(PackageRule, APackageOverThePrefixLengthTakesNothing)
{
    const std::string pkg(JMT_PREFIX_LEN + 1, 'a');
    EXPECT_FALSE(kernel_rule(pkg + "/A", pkg));
    EXPECT_FALSE(agent_rule(pkg + "/A", pkg));
    const std::string longest(JMT_PREFIX_LEN, 'a');
    EXPECT_TRUE(kernel_rule(longest + "/A", longest));
    EXPECT_TRUE(agent_rule(longest + "/A", longest));
}

TEST(PackageRule, ANameLongerThanTheKernelsBufferIsStillReadWithinIt)
{
    // The kernel's name is cut at its buffer; the rule reads only the package's bytes and the
    // one after them, so a long name under the package is still under it.
    const std::string name = "org/postgresql/" + std::string(2 * JMT_CLASS_BUF, 'x');
    EXPECT_TRUE(kernel_rule(name.substr(0, JMT_CLASS_BUF - 1), "org/postgresql"));
    EXPECT_TRUE(agent_rule(name, "org/postgresql"));
}

}  // namespace
