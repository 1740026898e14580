#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "cli/options.h"

namespace {

jmt::ParseOutcome parse(std::vector<const char *> args)
{
    args.insert(args.begin(), "jmethodtime");
    return jmt::parse_options(static_cast<int>(args.size()), args.data());
}

TEST(NormalizePackage, DottedAndSlashedFormsAgree)
{
    EXPECT_EQ(jmt::normalize_package("org.postgresql"), "org/postgresql");
    EXPECT_EQ(jmt::normalize_package("org/postgresql"), "org/postgresql");
    EXPECT_EQ(jmt::normalize_package("org/postgresql/"), "org/postgresql");
    EXPECT_EQ(jmt::normalize_package("org.postgresql.jdbc."), "org/postgresql/jdbc");
    EXPECT_EQ(jmt::normalize_package("Hello"), "Hello");
}

TEST(NormalizePackage, RejectsMalformedPrefixes)
{
    EXPECT_THROW(jmt::normalize_package(""), std::invalid_argument);
    EXPECT_THROW(jmt::normalize_package("..."), std::invalid_argument);
    EXPECT_THROW(jmt::normalize_package("org//postgresql"), std::invalid_argument);
    EXPECT_THROW(jmt::normalize_package("org/post gresql"), std::invalid_argument);
    EXPECT_THROW(jmt::normalize_package("org/*"), std::invalid_argument);
    EXPECT_THROW(jmt::normalize_package(std::string(300, 'a')), std::invalid_argument);
}

TEST(ParseOptions, Defaults)
{
    auto r = parse({"-p", "1234"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.pid, 1234);
    EXPECT_TRUE(r.options.packages.empty());
    EXPECT_EQ(r.options.top, 20u);
    EXPECT_EQ(r.options.sort, jmt::SortKey::Excl);
    EXPECT_DOUBLE_EQ(r.options.duration_s, 0.0);
    EXPECT_FALSE(r.options.json);
}

TEST(ParseOptions, RepeatedPackagesAreNormalised)
{
    auto r = parse({"-p", "7", "--package", "org.postgresql", "--package", "com/example/", "-d", "2.5", "--top", "5",
                    "--sort", "calls", "--json"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.packages, (std::vector<std::string>{"org/postgresql", "com/example"}));
    EXPECT_DOUBLE_EQ(r.options.duration_s, 2.5);
    EXPECT_EQ(r.options.top, 5u);
    EXPECT_EQ(r.options.sort, jmt::SortKey::Calls);
    EXPECT_TRUE(r.options.json);
}

TEST(ParseOptions, SortKeys)
{
    EXPECT_EQ(parse({"-p", "1", "--sort", "incl"}).options.sort, jmt::SortKey::Incl);
    EXPECT_EQ(parse({"-p", "1", "--sort", "cpu-excl"}).options.sort, jmt::SortKey::CpuExcl);
    EXPECT_EQ(parse({"-p", "1", "--sort", "runq-incl"}).options.sort, jmt::SortKey::RunqIncl);
    EXPECT_EQ(parse({"-p", "1", "--sort", "runq-excl"}).options.sort, jmt::SortKey::RunqExcl);
    EXPECT_EQ(parse({"-p", "1", "--sort", "blocked-incl"}).options.sort, jmt::SortKey::BlockedIncl);
    EXPECT_EQ(parse({"-p", "1", "--sort", "blocked-excl"}).options.sort, jmt::SortKey::BlockedExcl);
    EXPECT_EQ(parse({"-p", "1", "--folded", "--metric", "runq"}).options.metric, jmt::PathMetric::Runq);
    EXPECT_EQ(parse({"-p", "1", "--folded", "--metric", "blocked"}).options.metric, jmt::PathMetric::Blocked);
    EXPECT_FALSE(parse({"-p", "1"}).options.offcpu);
    EXPECT_TRUE(parse({"-p", "1", "--offcpu"}).options.offcpu);
    auto bad = parse({"-p", "1", "--sort", "name"});
    EXPECT_TRUE(bad.exit_now);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.message.find("--sort: 'name' is not a sort key (one of blocked-excl, blocked-incl, calls,"),
              std::string::npos)
        << bad.message;
    auto metric = parse({"-p", "1", "--folded", "--metric", "wal"});
    EXPECT_EQ(metric.exit_code, 2);
    EXPECT_NE(metric.message.find("--metric: 'wal' is not a metric (one of blocked, calls, cpu, runq, wall)"),
              std::string::npos)
        << metric.message;
}

TEST(ParseOptions, ErrorsExitNonZeroWithAMessage)
{
    auto missing = parse({});
    EXPECT_TRUE(missing.exit_now);
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.message.find("--pid"), std::string::npos) << missing.message;

    auto negative = parse({"-p", "-3"});
    EXPECT_TRUE(negative.exit_now);
    EXPECT_NE(negative.exit_code, 0);

    auto badpkg = parse({"-p", "1", "--package", "org//x"});
    EXPECT_TRUE(badpkg.exit_now);
    EXPECT_EQ(badpkg.exit_code, 2);
    EXPECT_NE(badpkg.message.find("empty segment"), std::string::npos) << badpkg.message;
}

TEST(ParseOptions, OutputsAndRowFilters)
{
    auto r = parse({"-p", "42", "--csv", "--min-calls", "5", "-o", "/tmp/report.csv", "--raw"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_TRUE(r.options.csv);
    EXPECT_FALSE(r.options.json);
    EXPECT_EQ(r.options.min_calls, 5u);
    EXPECT_EQ(r.options.output, "/tmp/report.csv");
    EXPECT_TRUE(r.options.raw);
    auto both = parse({"-p", "42", "--csv", "--json"});
    EXPECT_TRUE(both.exit_now);
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.message.find("excludes"), std::string::npos) << both.message;
    auto bad = parse({"-p", "42", "--min-calls", "-3"});
    EXPECT_TRUE(bad.exit_now);
    EXPECT_EQ(bad.exit_code, 2);
}

TEST(ParseOptions, LaunchModeTakesTheCommandAfterDashes)
{
    auto r = parse({"--package", "demo", "-i", "2", "--", "java", "-cp", "app.jar", "-Xmx1g", "Main", "--x"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.pid, 0);
    EXPECT_EQ(r.options.command, (std::vector<std::string>{"java", "-cp", "app.jar", "-Xmx1g", "Main", "--x"}));
    EXPECT_DOUBLE_EQ(r.options.interval_s, 2.0);
    // A repeatable option right before "--" does not swallow the command.
    auto pkg = parse({"--package", "demo", "--", "java", "-cp", "x", "Main"});
    ASSERT_FALSE(pkg.exit_now) << pkg.message;
    EXPECT_EQ(pkg.options.packages, (std::vector<std::string>{"demo"}));
    EXPECT_EQ(pkg.options.command, (std::vector<std::string>{"java", "-cp", "x", "Main"}));
    EXPECT_EQ(parse({"--package", "demo", "--"}).exit_code, 2);
    auto both = parse({"-p", "5", "--", "java", "Main"});
    EXPECT_TRUE(both.exit_now);
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.message.find("excludes"), std::string::npos) << both.message;
}

TEST(ParseOptions, ListNeedsNoPid)
{
    auto r = parse({"--list"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_TRUE(r.options.list);
    auto both = parse({"--list", "-p", "3"});
    EXPECT_TRUE(both.exit_now);
    EXPECT_EQ(both.exit_code, 2);
}

TEST(ParseOptions, IntervalMustBePositive)
{
    EXPECT_EQ(parse({"-p", "1", "-i", "0"}).exit_code, 2);
    EXPECT_EQ(parse({"-p", "1", "--interval", "-1"}).exit_code, 2);
    EXPECT_FALSE(parse({"-p", "1", "-i", "0.5", "--per-thread"}).exit_now);
    EXPECT_TRUE(parse({"-p", "1", "--per-thread"}).options.per_thread);
}

TEST(ParseOptions, ClassAndMethodGlobs)
{
    auto r = parse({"-p", "1", "--class", "org.postgresql.jdbc.Pg*", "--class", "*Inner", "--method", "get*",
                    "--method", "<init>"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.class_globs, (std::vector<std::string>{"org/postgresql/jdbc/Pg*", "*Inner"}));
    EXPECT_EQ(r.options.method_globs, (std::vector<std::string>{"get*", "<init>"}));
    auto dotted = parse({"-p", "1", "--method", "Foo.get"});
    EXPECT_EQ(dotted.exit_code, 2);
    EXPECT_NE(dotted.message.find("--class"), std::string::npos) << dotted.message;
    EXPECT_EQ(parse({"-p", "1", "--class", "a b"}).exit_code, 2);
    EXPECT_EQ(parse({"-p", "1", "--method", std::string(200, 'x').c_str()}).exit_code, 2);
    std::vector<const char *> many = {"-p", "1"};
    for (int i = 0; i < 9; i++) {
        many.push_back("--method");
        many.push_back("m*");
    }
    EXPECT_EQ(parse(many).exit_code, 2);
}

TEST(ParseOptions, HelpExitsZero)
{
    auto r = parse({"--help"});
    EXPECT_TRUE(r.exit_now);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.message.find("--package"), std::string::npos);
}

// The windows before the trace measure the cost that is taken out: of a running JVM, not
// launched; not with --raw or -i, which leave the cost in.
TEST(ParseOptions, CostBeforeIsForARunningJvmsCorrectedReport)
{
    auto r = parse({"-p", "42", "--cost-before"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_TRUE(r.options.cost_before);
    EXPECT_FALSE(parse({"-p", "42"}).options.cost_before);
    const std::vector<std::vector<const char *>> refused = {{"-p", "42", "--cost-before", "--raw"},
                                                            {"-p", "42", "--cost-before", "-i", "5"},
                                                            {"--cost-before", "--", "java", "Main"}};
    for (const auto &args : refused) {
        auto bad = parse(args);
        EXPECT_TRUE(bad.exit_now);
        EXPECT_EQ(bad.exit_code, 2);
        EXPECT_EQ(bad.message.rfind("jmethodtime: --cost-before measures the probe cost ", 0), 0u) << bad.message;
        EXPECT_EQ(bad.message.find('\n'), bad.message.size() - 1) << bad.message;
    }
    EXPECT_NE(parse({"--cost-before", "--", "java", "Main"}).message.find("drop --cost-before"), std::string::npos);
}

}  // namespace

TEST(ParseOptions, MaxOverheadIsAPercent)
{
    auto r = parse({"-p", "42", "--max-overhead", "30"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.max_overhead_percent, 30.0);
    EXPECT_EQ(parse({"-p", "42"}).options.max_overhead_percent, 0.0);  // never
    for (const char *bad : {"0", "101", "x"}) {
        auto b = parse({"-p", "42", "--max-overhead", bad});
        EXPECT_TRUE(b.exit_now) << bad;
        EXPECT_EQ(b.exit_code, 2) << bad;
    }
    // --raw still calibrates the probe cost, which the guard needs.
    auto raw = parse({"-p", "42", "--max-overhead", "30", "--raw"});
    ASSERT_FALSE(raw.exit_now) << raw.message;
    EXPECT_EQ(raw.options.max_overhead_percent, 30.0);
    EXPECT_TRUE(raw.options.raw);
}

namespace {

// A bad value: exit 2 and exactly one line naming the option and the value.
void expect_one_line_error(std::vector<const char *> args, const std::string &option, const std::string &value)
{
    auto r = parse(args);
    EXPECT_TRUE(r.exit_now) << option << " " << value;
    EXPECT_EQ(r.exit_code, 2) << option << " " << value;
    const std::string start = "jmethodtime: " + option + ": '" + value + "' is not ";
    EXPECT_EQ(r.message.rfind(start, 0), 0u) << r.message;
    EXPECT_EQ(r.message.find('\n'), r.message.size() - 1) << r.message;
}

struct NumericCase {
    const char *option;  // as given
    const char *name;    // as named in the message
    std::vector<const char *> good;
    std::vector<const char *> bad;
};

// Every numeric option, with a plain value, a non-number, trailing garbage, a
// sign, bounds and overflow. --pid runs with --list excluded, so the rest add -p 1.
const std::vector<NumericCase> kNumericCases = {
    {"-p",
     "--pid",
     {"1", "4194303", "007"},
     {"abc", "0", "-3", "+3", "5x", "1.5", "1e3", " 5", "", "4194304", "99999999999999999999999", "0x10"}},
    {"-d",
     "--duration",
     {"1", "2.5", "0.001", ".5", "1.", "1e2", "1000000000"},
     {"abc", "0", "-1", "5x", "5s", "inf", "nan", "1e400", "1e10", "e5", "+1", "."}},
    {"-i", "--interval", {"0.1", "2", "1e3"}, {"0", "-1", "0.05", "1x", "inf", "1e10", "abc", ""}},
    {"--top",
     "--top",
     {"0", "5", "18446744073709551615"},
     {"-3", "abc", "5x", "2.5", "18446744073709551616", "99999999999999999999999", ""}},
    {"--max-overhead", "--max-overhead", {"1", "30", "100", "12.5"}, {"0", "0.5", "101", "-5", "x", "30%", "nan"}},
    {"--min-percent", "--min-percent", {"0", "0.5", "100"}, {"-1", "100.5", "abc", "1x", "inf", ""}},
    {"--max-paths", "--max-paths", {"1", "65534"}, {"0", "-1", "65535", "4294967297", "1.5", "abc", "10k"}},
    {"--min-calls",
     "--min-calls",
     {"0", "5", "18446744073709551615"},
     {"-3", "abc", "5x", "1e3", "18446744073709551616", ""}},
};

TEST(OptionChecks, EveryNumericOptionTakesPlainValuesInRange)
{
    for (const NumericCase &c : kNumericCases)
        for (const char *v : c.good) {
            std::vector<const char *> args = {c.option, v};
            if (std::string(c.name) != "--pid")
                args.insert(args.end(), {"-p", "1"});
            auto r = parse(args);
            EXPECT_FALSE(r.exit_now) << c.option << " " << v << ": " << r.message;
        }
}

TEST(OptionChecks, EveryBadNumericValueIsOneLineAndExit2)
{
    for (const NumericCase &c : kNumericCases)
        for (const char *v : c.bad) {
            std::vector<const char *> args = {c.option, v};
            if (std::string(c.name) != "--pid")
                args.insert(args.end(), {"-p", "1"});
            expect_one_line_error(args, c.name, v);
        }
}

TEST(OptionChecks, ValuesReachTheOptions)
{
    auto r = parse({"-p", "4194303", "-d", "0.25", "-i", "0.5", "--top", "0", "--max-overhead", "12.5", "--min-percent",
                    "2", "--max-paths", "100", "--min-calls", "18446744073709551615"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.pid, 4194303);
    EXPECT_DOUBLE_EQ(r.options.duration_s, 0.25);
    EXPECT_DOUBLE_EQ(r.options.interval_s, 0.5);
    EXPECT_EQ(r.options.top, 0u);
    EXPECT_DOUBLE_EQ(r.options.max_overhead_percent, 12.5);
    EXPECT_DOUBLE_EQ(r.options.min_percent, 2.0);
    EXPECT_EQ(r.options.max_paths, 100u);
    EXPECT_EQ(r.options.min_calls, 18446744073709551615ull);  // exact, not through a double
    auto d = parse({"-p", "1"});
    EXPECT_DOUBLE_EQ(d.options.min_percent, 0.5);
    EXPECT_EQ(d.options.top, 20u);
    EXPECT_EQ(d.options.max_paths, 0u);
}

TEST(OptionChecks, TheMessagesSayWhatIsExpected)
{
    EXPECT_EQ(parse({"-p", "abc"}).message,
              "jmethodtime: --pid: 'abc' is not a process id (a positive integer up to 4194303)\n");
    EXPECT_EQ(parse({"-p", "1", "--top", "-3"}).message,
              "jmethodtime: --top: '-3' is not a number of rows (an integer, 0 for all)\n");
    EXPECT_EQ(parse({"-p", "1", "-i", "0"}).message,
              "jmethodtime: --interval: '0' is not a number of seconds from 0.1 to 1e9\n");
    EXPECT_NE(parse({"-p", "1", "-d", "-1"}).message.find("without -d the trace runs until"), std::string::npos);
}

TEST(OptionChecks, OtherUsageErrorsAreOneLineToo)
{
    for (std::vector<const char *> args : std::vector<std::vector<const char *>>{{"-p", "1", "--foo"},
                                                                                 {"-p"},
                                                                                 {"-p", "1", "--top"},
                                                                                 {"-p", "1", "-p", "2"},
                                                                                 {"-p", "1", "--csv", "--json"},
                                                                                 {"-p", "1", "--sort", "name"},
                                                                                 {}}) {
        auto r = parse(args);
        EXPECT_TRUE(r.exit_now);
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_EQ(r.message.rfind("jmethodtime: ", 0), 0u) << r.message;
        EXPECT_EQ(r.message.find('\n'), r.message.size() - 1) << r.message;
    }
    EXPECT_EQ(parse({"-p"}).message,
              "jmethodtime: --pid: needs a value (jmethodtime --help lists what each option takes)\n");
    EXPECT_NE(parse({"-p", "1", "--foo"}).message.find("--foo"), std::string::npos);
}
}  // namespace

TEST(ParseOptions, MatchReplacesThePidAndExcludesItAndACommand)
{
    auto r = parse({"--match", "com\\.shop\\.Orders", "--package", "org/postgresql"});
    ASSERT_FALSE(r.exit_now) << r.message;
    EXPECT_EQ(r.options.match, "com\\.shop\\.Orders");
    EXPECT_EQ(r.options.pid, 0);
    auto both = parse({"--match", "Orders", "-p", "12"});
    EXPECT_TRUE(both.exit_now);
    EXPECT_EQ(both.exit_code, 2);
    auto launch = parse({"--match", "Orders", "--", "java", "-version"});
    EXPECT_TRUE(launch.exit_now);
    EXPECT_NE(launch.message.find("--match picks a running JVM"), std::string::npos) << launch.message;
}
