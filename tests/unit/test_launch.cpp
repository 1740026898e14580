#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.h"
#include "jvm/jvm.h"
#include "report/jvm_list.h"
#include "control/launch.h"

namespace {

// A fake JDK tree: HOME/bin/java (executable) and HOME/lib/server/libjvm.so.
class FakeJdk : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/jmt-fake-jdk-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        home = tmpl;
        ASSERT_EQ(system(("mkdir -p " + home + "/bin " + home + "/lib/server " + home + "/tools").c_str()), 0);
        for (const std::string f : {"/bin/java", "/tools/run.sh"}) {
            std::ofstream(home + f) << "#!/bin/sh\n";
            chmod((home + f).c_str(), 0755);
        }
        std::ofstream(home + "/lib/server/libjvm.so") << "not really";
        std::ofstream(home + "/release") << "IMPLEMENTOR=\"Debian\"\nJAVA_VERSION=\"17.0.99\"\n";
    }
    void TearDown() override { system(("rm -rf " + home).c_str()); }
    std::string home;
};

TEST_F(FakeJdk, PlanFindsTheLauncherOnPathAndAddsTheFlagAfterIt)
{
    jmt::LaunchPlan plan = jmt::plan_launch({"java", "-cp", "a.jar", "Main"}, "/nonexistent:" + home + "/bin");
    EXPECT_EQ(plan.java, home + "/bin/java");
    EXPECT_EQ(plan.libjvm, home + "/lib/server/libjvm.so");
    EXPECT_EQ(plan.argv, (std::vector<std::string>{home + "/bin/java", jmt::kProbeFlag, "-cp", "a.jar", "Main"}));
}

TEST_F(FakeJdk, PlanFollowsSymlinksToTheJdk)
{
    const std::string link = home + "/tools/java";
    ASSERT_EQ(symlink((home + "/bin/java").c_str(), link.c_str()), 0);
    jmt::LaunchPlan plan = jmt::plan_launch({link, "Main"}, "");
    EXPECT_EQ(plan.libjvm, home + "/lib/server/libjvm.so");
    EXPECT_EQ(plan.argv.front(), link);
}

TEST_F(FakeJdk, PlanRejectsWhatItCannotTrace)
{
    EXPECT_THROW(jmt::plan_launch({"no-such-java-command"}, home + "/bin"), jmt::Error);
    try {
        jmt::plan_launch({home + "/tools/run.sh"}, "");
        FAIL() << "a script was accepted";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("-p PID"), std::string::npos) << e.what();
    }
    try {
        jmt::plan_launch({"java", "-XX:-DTraceMethodProbes", "Main"}, home + "/bin");
        FAIL() << "probes switched off were accepted";
    } catch (const jmt::Error &e) {
        EXPECT_NE(std::string(e.what()).find("remove that option"), std::string::npos) << e.what();
    }
    unlink((home + "/lib/server/libjvm.so").c_str());
    EXPECT_THROW(jmt::plan_launch({"java", "Main"}, home + "/bin"), jmt::Error);
}

TEST_F(FakeJdk, JdkVersionComesFromTheReleaseFile)
{
    EXPECT_EQ(jmt::jdk_version_of(home + "/lib/server/libjvm.so", ""), "17.0.99");
    EXPECT_EQ(jmt::jdk_version_of("/nonexistent/lib/server/libjvm.so", ""), "");
}

TEST(LaunchedCommand, RunsOnlyWhenReleasedAndReturnsItsStatus)
{
    jmt::LaunchedCommand child({"/bin/sh", "-c", "exit 7"});
    EXPECT_GT(child.pid(), 0);
    child.release();
    EXPECT_EQ(child.wait(), 7);
}

TEST(LaunchedCommand, AnExecFailureIsAnError)
{
    jmt::LaunchedCommand child({"/nonexistent/java"});
    EXPECT_THROW(child.release(), jmt::Error);
}

TEST(LaunchedCommand, AKilledCommandReports128PlusTheSignal)
{
    jmt::LaunchedCommand child({"/bin/sh", "-c", "kill -TERM $$"});
    child.release();
    EXPECT_EQ(child.wait(), 128 + 15);
}

TEST(LaunchedCommand, NeverRunsWhenNotReleased)
{
    const std::string marker = "/tmp/jmt-launch-marker-" + std::to_string(getpid());
    unlink(marker.c_str());
    {
        jmt::LaunchedCommand child({"/bin/sh", "-c", "touch " + marker});
    }
    EXPECT_NE(access(marker.c_str(), F_OK), 0);
}

TEST(Capabilities, EffectiveSetIsReadFromStatus)
{
    EXPECT_EQ(jmt::effective_capabilities("Name:\tx\nCapPrm:\t0000000000000001\nCapEff:\t000000c000000000\n"),
              0xc000000000ULL);
    EXPECT_EQ(jmt::effective_capabilities("Name:\tx\n"), 0u);
}

// utime + stime from /proc/PID/stat, counted from the last ')' (a thread name may hold both).
TEST(ProcessCpu, StatFieldsAfterTheCommand)
{
    const std::string stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 52 0 0 0 1234 567 0 0 20 0 30 0 100";
    EXPECT_EQ(jmt::stat_cpu_ticks(stat), 1801u);
    EXPECT_FALSE(jmt::stat_cpu_ticks("4242 (java) S 1 2"));
    EXPECT_FALSE(jmt::stat_cpu_ticks(""));
    EXPECT_FALSE(jmt::stat_cpu_ticks("4242 (java) S 1 4242 4242 0 -1 4194560 52 0 0 0 x 567 0"));
    // Field n at [n - 3], whatever the command holds: the state, the parent, the flags.
    const std::vector<std::string> f = jmt::stat_fields(stat);
    ASSERT_EQ(f.size(), 20u);
    EXPECT_EQ(f[3 - 3], "S");
    EXPECT_EQ(f[4 - 3], "1");
    EXPECT_EQ(f[9 - 3], "4194560");
    EXPECT_EQ(f[22 - 3], "100");
    EXPECT_TRUE(jmt::stat_fields("4242 java S 1").empty());
    // This process has run a little; a pid that does not exist has no CPU time.
    EXPECT_TRUE(jmt::process_cpu_ns(getpid()).has_value());
    EXPECT_FALSE(jmt::process_cpu_ns(999999999).has_value());
    // Its start time, after boot and before now; none for a pid that does not exist.
    const std::optional<uint64_t> start = jmt::process_start_ticks(getpid());
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(jmt::process_start_ticks(getpid()), start);
    EXPECT_FALSE(jmt::process_start_ticks(999999999).has_value());
}

TEST(JvmList, TableAndJsonShowProbeStates)
{
    jmt::JvmTarget on, off, missing;
    on.pid = 10;
    on.jdk_version = "17.0.15";
    on.has_probes = on.probes_on = true;
    on.access = jmt::ProbeAccess::AtStart;
    on.libjvm_seen = "/jdk/lib/server/libjvm.so";
    on.command = "java -XX:+DTraceMethodProbes -jar app.jar";
    off = on;
    off.pid = 200;
    off.probes_on = false;
    off.access = jmt::ProbeAccess::Off;
    off.command = std::string(300, 'x');
    jmt::JvmTarget standby = off, switchable = off;
    standby.pid = 41;
    standby.access = jmt::ProbeAccess::Standby;
    standby.command = "java -XX:+DTraceMethodProbes -jar b.jar";
    switchable.pid = 42;
    switchable.access = jmt::ProbeAccess::Switchable;
    switchable.command = "java -jar c.jar";
    missing = on;
    missing.pid = 3000;
    missing.has_probes = missing.probes_on = false;
    missing.jdk_version = "";
    std::ostringstream table;
    jmt::write_jvm_table(table, {on, standby, switchable, off, missing});
    const std::string t = table.str();
    EXPECT_NE(t.find("  41  17.0.15  standby     /jdk"), std::string::npos) << t;
    EXPECT_NE(t.find("  42  17.0.15  switchable  /jdk"), std::string::npos) << t;
    // One footnote per state shown, in the order enabled, standby, switchable, off, missing.
    const size_t standby_note = t.find("\nstandby: "), switchable_note = t.find("\nswitchable: ");
    EXPECT_LT(t.find("\nenabled: "), standby_note) << t;
    EXPECT_LT(standby_note, switchable_note) << t;
    EXPECT_LT(switchable_note, t.find("\noff: ")) << t;
    EXPECT_EQ(t.find("\ntraced: "), std::string::npos) << t;
    EXPECT_NE(t.find("  10  17.0.15  enabled     /jdk/lib/server/libjvm.so  java -XX"), std::string::npos) << t;
    EXPECT_NE(t.find(" 200  17.0.15  off "), std::string::npos) << t;
    EXPECT_NE(t.find("3000  ?        missing"), std::string::npos) << t;
    EXPECT_NE(t.find(std::string(97, 'x') + "...\n"), std::string::npos) << t;
    EXPECT_NE(t.find("off: restart that JVM with -XX:+DTraceMethodProbes"), std::string::npos) << t;
    EXPECT_EQ(t.find("deferred"), std::string::npos) << t;
    // A quiet JVM whose last trace left its compiled code with the probe calls until traffic.
    switchable.deferred_methods = 363;
    std::ostringstream deferred;
    jmt::write_jvm_table(deferred, {switchable});
    EXPECT_NE(deferred.str().find("\n 42  17.0.15  switchable +363 deferred  /jdk"), std::string::npos)
        << deferred.str();
    EXPECT_NE(deferred.str().find("\n+N deferred: the last trace left N methods compiled with their probe calls"),
              std::string::npos)
        << deferred.str();
    std::ostringstream json;
    jmt::write_jvm_json(json, {on, off, switchable});
    auto doc = nlohmann::json::parse(json.str());
    ASSERT_EQ(doc.size(), 3u);
    EXPECT_EQ(doc[2]["deferred_methods"], 363);
    EXPECT_EQ(doc[0]["deferred_methods"], 0);
    EXPECT_EQ(doc[0]["pid"], 10);
    EXPECT_EQ(doc[0]["probes"], "enabled");
    EXPECT_EQ(doc[1]["probes"], "off");
    EXPECT_EQ(doc[1]["jdk_version"], "17.0.15");
    std::ostringstream none;
    jmt::write_jvm_table(none, {});
    EXPECT_NE(none.str().find("No JVM"), std::string::npos);
}

}  // namespace

TEST(RunAs, UsersComeFromEtcPasswdWithTheirGroups)
{
    const jmt::RunAs none = jmt::resolve_run_as("", "", "");
    EXPECT_FALSE(none.change);  // not under sudo: root, as jmethodtime
    const jmt::RunAs nobody = jmt::resolve_run_as("nobody", "", "");
    EXPECT_TRUE(nobody.change);
    EXPECT_EQ(nobody.uid, 65534u);
    EXPECT_EQ(nobody.name, "nobody");
    ASSERT_FALSE(nobody.groups.empty());
    EXPECT_EQ(nobody.groups[0], nobody.gid);
    EXPECT_TRUE(nobody.note.empty());
    const jmt::RunAs sudo = jmt::resolve_run_as("", "65534", "65534");
    EXPECT_EQ(sudo.uid, 65534u);
    EXPECT_EQ(sudo.gid, 65534u);
    EXPECT_NE(sudo.note.find("running the command as nobody (uid 65534, who ran sudo)"), std::string::npos);
    EXPECT_FALSE(jmt::resolve_run_as("root", "65534", "65534").change);  // -u root keeps root
    const jmt::RunAs numeric = jmt::resolve_run_as("43210", "", "");     // no passwd entry: the uid as given
    EXPECT_EQ(numeric.uid, 43210u);
    EXPECT_EQ(numeric.gid, 65534u);  // nogroup, not a gid equal to the uid (someone else's group)
    EXPECT_EQ(numeric.groups, std::vector<gid_t>{65534u});
    EXPECT_EQ(numeric.name, "43210");
    EXPECT_EQ(numeric.home, "/");
    EXPECT_THROW(jmt::resolve_run_as("no-such-user-jmt", "", ""), jmt::Error);
    EXPECT_THROW(jmt::resolve_run_as("99999999999999999999", "", ""), jmt::Error);  // no stoul overflow
}

TEST(RunAs, TheCommandGetsTheUsersHomeAndNameNotRoots)
{
    const char *root_env[] = {"HOME=/root", "USER=root", "LOGNAME=root", "PATH=/usr/bin", "HOMEY=kept", nullptr};
    jmt::RunAs nobody;
    nobody.change = true;
    nobody.name = "nobody";
    nobody.home = "/nonexistent";
    const std::vector<std::string> env = jmt::command_environment(const_cast<char *const *>(root_env), nobody);
    EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "HOMEY=kept", "HOME=/nonexistent", "USER=nobody",
                                             "LOGNAME=nobody"}));
    const std::vector<std::string> as_root = jmt::command_environment(const_cast<char *const *>(root_env), {});
    EXPECT_EQ(as_root.size(), 5u);  // root runs it: the environment as given
    EXPECT_EQ(jmt::resolve_run_as("nobody", "", "").home, "/nonexistent");
}

TEST(Launch, AnEmptyPathEntryIsNotTheWorkingDirectory)
{
    char dir[] = "/tmp/jmt-path-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string java = std::string(dir) + "/java";
    FILE *f = fopen(java.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fclose(f);
    chmod(java.c_str(), 0755);
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    ASSERT_EQ(chdir(dir), 0);
    const std::string found_empty = jmt::find_executable("java", ":/nonexistent-jmt");
    const std::string found_dot = jmt::find_executable("java", ".:/nonexistent-jmt");
    ASSERT_EQ(chdir(cwd), 0);
    unlink(java.c_str());
    rmdir(dir);
    EXPECT_EQ(found_empty, "");      // "" in PATH is not searched
    EXPECT_EQ(found_dot, "./java");  // "." written out is, as the user asked
}
