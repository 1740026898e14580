// Why a report is empty (report/why_empty.h): the filter stage that removed
// every method, named with its values, counts and examples; JSON's nothing_traced.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "report/report.h"
#include "report/why_empty.h"

namespace {

// A whole trace's empty profile in which 40 methods were seen and events flowed.
jmt::Profile seen_nothing_kept()
{
    jmt::Profile p;
    p.pid = 9;
    p.duration_ns = 2'000'000'000ULL;
    p.overhead.events = 5'400'000;
    p.diag.methods_seen = 40;
    return p;
}

TEST(WhyEmpty, ReportsWithRowsOrIntervalsNeedNoReason)
{
    jmt::Profile p = seen_nothing_kept();
    p.interval = 3;
    EXPECT_FALSE(jmt::why_nothing_traced(p));
    EXPECT_EQ(jmt::nothing_traced_text(p), "No traced method completed a call in this interval.");
    p.interval = 0;
    p.methods.resize(1);
    EXPECT_FALSE(jmt::why_nothing_traced(p));
}

TEST(WhyEmpty, PackageThatMatchesNothingIsNamedWithClassesItSaw)
{
    jmt::Profile p = seen_nothing_kept();
    p.packages = {"org/apache/catalna"};
    p.diag.rejected_by_package = 40;
    p.rejected_by_package = {"java/lang/String", "org/apache/catalina/core/StandardWrapperValve"};
    const auto why = jmt::why_nothing_traced(p);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->filter, "--package");
    EXPECT_EQ(why->reason, "--package 'org/apache/catalna' matched none of the 40 methods seen (seen: "
                           "java/lang/String, org/apache/catalina/core/StandardWrapperValve): give whole leading "
                           "segments of a class name (org/postgresql or org.postgresql).");
    EXPECT_EQ(jmt::nothing_traced_text(p), why->reason);
}

// The application server's case: --package lets the server's classes through, --class then rejects them all.
TEST(WhyEmpty, GlobsThatRejectEverythingThePackageLetThroughSayTheFiltersCombineWithAnd)
{
    jmt::Profile p = seen_nothing_kept();
    p.packages = {"org/apache/catalina"};
    p.class_globs = {"*HelloWorldExample"};
    p.diag.rejected_by_package = 28;
    p.diag.rejected_by_class = 12;
    p.diag.classes_rejected_by_globs = 5;
    p.rejected_by_globs = {"org/apache/catalina/connector/CoyoteAdapter"};
    const auto why = jmt::why_nothing_traced(p);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->filter, "--class");
    EXPECT_EQ(why->rejected_classes, 5u);
    EXPECT_EQ(why->methods_seen, 40u);
    EXPECT_EQ(why->reason,
              "--package 'org/apache/catalina' let 12 of the 40 methods seen through; --class "
              "'*HelloWorldExample' rejected all 12 methods of 5 classes (seen: "
              "org/apache/catalina/connector/CoyoteAdapter). The filters combine with AND: a method is traced "
              "when its class is under --package and its class matches --class.");

    // Both globs: the methods --method rejected count too; the JSON carries the same facts.
    p.method_globs = {"doPost", "get*"};
    p.diag.rejected_by_class = 10;
    p.diag.rejected_by_method = 2;
    const auto both = jmt::why_nothing_traced(p);
    ASSERT_TRUE(both);
    EXPECT_EQ(both->filter, "--class and --method");
    EXPECT_NE(both->reason.find("--class '*HelloWorldExample' and --method 'doPost', 'get*' rejected all 12"),
              std::string::npos)
        << both->reason;
    EXPECT_NE(both->reason.find("its class is under --package, its class matches --class and its name matches "
                                "--method."),
              std::string::npos)
        << both->reason;
    std::ostringstream out;
    jmt::write_json(out, p);
    const auto j = nlohmann::json::parse(out.str()).at("nothing_traced");
    EXPECT_EQ(j.at("filter"), "--class and --method");
    EXPECT_EQ(j.at("methods_seen"), 40);
    EXPECT_EQ(j.at("rejected_classes"), 5);
    EXPECT_EQ(j.at("examples"), nlohmann::json::array({"org/apache/catalina/connector/CoyoteAdapter"}));
    EXPECT_EQ(j.at("reason"), both->reason);
}

TEST(WhyEmpty, TracedMethodsThatNeverReturnedAreNotBlamedOnTheFilters)
{
    jmt::Profile p = seen_nothing_kept();
    p.packages = {"demo"};
    p.diag.rejected_by_package = 38;
    p.method_ids = 2;
    const auto why = jmt::why_nothing_traced(p);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->filter, "");
    EXPECT_EQ(why->reason.rfind("2 methods passed the filters, but none completed a call while tracing", 0), 0u)
        << why->reason;
    std::ostringstream out;
    jmt::write_json(out, p);
    EXPECT_TRUE(nlohmann::json::parse(out.str()).at("nothing_traced").at("filter").is_null());
}

TEST(WhyEmpty, NoEventsMeansTheProbesAreOffOrNoJavaRan)
{
    jmt::Profile p;
    const auto why = jmt::why_nothing_traced(p);
    ASSERT_TRUE(why);
    EXPECT_NE(why->reason.find("-XX:+DTraceMethodProbes"), std::string::npos);
    std::ostringstream out;
    jmt::write_json(out, seen_nothing_kept());  // events, no verdicts counted: the general advice
    EXPECT_NE(nlohmann::json::parse(out.str())
                  .at("nothing_traced")
                  .at("reason")
                  .get<std::string>()
                  .find("No traced method completed a call during the trace"),
              std::string::npos);
}

}  // namespace
