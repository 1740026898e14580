// Launch mode: jmethodtime [options] -- java ...: traced from the first Java
// method, the command's exit status, signals passed on, -d detaching early.
// The command names its JDK's launcher by absolute path (jmt_it::test_java()),
// whatever java PATH holds, and what depends on the JDK is read from that JDK.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness.h"

using jmt_it::Child;

namespace {

struct Launched {
    int exit = -1;
    std::string out, err;
    nlohmann::json report;
    double seconds = 0;
};

std::string temp_report() { return "/tmp/jmt-launch-" + std::to_string(getpid()) + ".json"; }

nlohmann::json read_json(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return nlohmann::json::parse(ss.str());
    } catch (const std::exception &e) {
        ADD_FAILURE() << "not JSON in " << path << ": " << ss.str();
        return {};
    }
}

// Runs jmethodtime JMT_ARGS -o REPORT --json -- JAVA -cp CLASSES demo.launch.Startup ARGS.
Launched launch(const std::vector<std::string> &jmt_args, const std::vector<std::string> &startup_args,
                int signal_after_done = 0)
{
    const std::string report = temp_report();
    unlink(report.c_str());
    std::vector<std::string> argv = {JMT_BINARY, "--json", "-o", report};
    argv.insert(argv.end(), jmt_args.begin(), jmt_args.end());
    argv.insert(argv.end(), {"--", jmt_it::test_java(), "-cp", JMT_JAVA_CLASSES, "demo.launch.Startup"});
    argv.insert(argv.end(), startup_args.begin(), startup_args.end());
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Child jmt(argv, false);
    Launched r;
    if (signal_after_done) {
        EXPECT_FALSE(jmt.wait_line(false, "DONE", 60000).empty()) << jmt.drain(true, 1000);
        usleep(200000);
        jmt.signal(signal_after_done);
    }
    r.exit = jmt.wait_exit(120000);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r.seconds = static_cast<double>(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    r.out = jmt.drain(false, 2000);
    r.err = jmt.drain(true, 1000);
    r.report = read_json(report);
    unlink(report.c_str());
    return r;
}

// The descriptor of klass.method (the first of that name) as the launched JDK's own javap
// gives it: the JDK's private start-up methods change between releases.
std::string descriptor_in_test_jdk(const std::string &klass, const std::string &method)
{
    Child javap({jmt_it::test_jdk_home() + "/bin/javap", "-p", "-s", klass}, false);
    EXPECT_EQ(javap.wait_exit(60000), 0) << javap.drain(true, 1000);
    std::istringstream out(javap.drain(false, 2000));
    bool named = false;
    for (std::string line; std::getline(out, line);) {
        const size_t at = line.find("descriptor: ");
        if (named && at != std::string::npos)
            return line.substr(at + 12);
        named = line.find(" " + method + "(") != std::string::npos;
    }
    ADD_FAILURE() << "no " << klass << "." << method << " in " << jmt_it::test_jdk_home();
    return "";
}

class Launch : public jmt_it::BpfTest {
protected:
    void SetUp() override
    {
        BpfTest::SetUp();
        std::cout << "  launching " << jmt_it::test_java() << " (JDK " << jmt_it::test_jdk_version() << ")"
                  << std::endl;
    }
};

TEST_F(Launch, TracesFromTheFirstJavaMethod)
{
    Launched r = launch({"--package", "demo/launch", "--package", "java/lang/System"}, {"1000"});
    ASSERT_EQ(r.exit, 0) << r.err;
    const auto &report = r.report;
    // The JVM's own start-up, before any class of the application loads: exactly once each.
    EXPECT_EQ(jmt_it::calls_of(report, "java/lang/System", "initPhase1", "()V"), 1u);
    const std::string init_phase2 = descriptor_in_test_jdk("java.lang.System", "initPhase2");  // 9 to 25: (ZZ)I
    EXPECT_EQ(jmt_it::calls_of(report, "java/lang/System", "initPhase2", init_phase2), 1u) << init_phase2;
    EXPECT_EQ(jmt_it::calls_of(report, "java/lang/System", "initPhase3", "()V"), 1u);
    EXPECT_EQ(jmt_it::calls_of(report, "java/lang/System", "<clinit>", "()V"), 1u);
    // The application's call tree.
    EXPECT_EQ(jmt_it::calls_of(report, "demo/launch/Startup", "<clinit>", "()V"), 1u);
    EXPECT_EQ(jmt_it::calls_of(report, "demo/launch/Startup", "main", "([Ljava/lang/String;)V"), 1u);
    EXPECT_EQ(jmt_it::calls_of(report, "demo/launch/Startup", "step", "(I)V"), 1000u);
    EXPECT_EQ(jmt_it::calls_of(report, "demo/launch/Startup", "leaf", "(I)I"), 1000u);
    ASSERT_NE(jmt_it::test_jdk_version(), "");
    EXPECT_EQ(report["jdk_version"], jmt_it::test_jdk_version());
    // Nothing was entered before the probes were attached.
    EXPECT_EQ(report["diagnostics"]["unmatched_returns"], 0) << report["diagnostics"].dump();
    // The launched JVM is the tool's child, a zombie until the tool reaps it: its whole CPU
    // time is read at the end. Start-up makes hundreds of thousands of Java calls, every one
    // trapping, so the traps are a large share of it (measured: 61% and 70%).
    const auto &o = report["overhead"];
    EXPECT_FALSE(o["jvm_cpu_early"].get<bool>()) << o.dump();
    EXPECT_GT(o["events"].get<uint64_t>(), 100000u) << o.dump();
    EXPECT_GT(o["share"].get<double>(), 0.3) << o.dump();
    EXPECT_LT(o["share"].get<double>(), 1.3) << o.dump();
    std::printf("overhead: %s\n", o.dump().c_str());
    // The command's output is its own; the report went to -o.
    EXPECT_EQ(r.out, "DONE calls=1000 sink=15491500\n");
    EXPECT_NE(r.err.find("Command exited with status 0"), std::string::npos) << r.err;
}

TEST_F(Launch, ReportOnStdoutFollowsTheCommandsOutput)
{
    Child jmt({JMT_BINARY, "--json", "--raw", "--package", "demo/launch", "--", jmt_it::test_java(), "-cp",
               JMT_JAVA_CLASSES, "demo.launch.Startup", "10"},
              false);
    ASSERT_EQ(jmt.wait_exit(120000), 0) << jmt.drain(true, 1000);
    const std::string out = jmt.drain(false, 2000);
    const std::string done = "DONE calls=10 sink=1465\n";
    ASSERT_EQ(out.compare(0, done.size(), done), 0) << out;
    auto report = nlohmann::json::parse(out.substr(done.size()));
    EXPECT_EQ(jmt_it::calls_of(report, "demo/launch/Startup", "step", "(I)V"), 10u);
}

TEST_F(Launch, ExitsWithTheCommandsStatus)
{
    Launched r = launch({"--package", "demo/launch", "--raw"}, {"5", "3"});
    EXPECT_EQ(r.exit, 3) << r.err;
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/launch/Startup", "step", "(I)V"), 5u);
    // A JVM that fails to start: its status, and still a report.
    Launched bad = launch({"--raw"}, {});
    EXPECT_EQ(bad.exit, 1) << bad.err;  // Startup without arguments throws in main
    EXPECT_TRUE(bad.report.contains("methods"));
}

TEST_F(Launch, SigtermIsPassedOnAndTheReportFollowsTheExit)
{
    Launched r = launch({"--package", "demo/launch", "--raw"}, {"100", "0", "60000"}, SIGTERM);
    EXPECT_EQ(r.exit, 128 + SIGTERM) << r.err;  // the JVM's own exit on SIGTERM
    EXPECT_LT(r.seconds, 50);
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/launch/Startup", "step", "(I)V"), 100u);
}

TEST_F(Launch, DurationDetachesAndTheCommandRunsOn)
{
    Launched r = launch({"--package", "demo/launch", "--raw", "-d", "1"}, {"20", "5", "4000"});
    EXPECT_EQ(r.exit, 5) << r.err;
    EXPECT_GE(r.seconds, 4.0);
    EXPECT_EQ(jmt_it::calls_of(r.report, "demo/launch/Startup", "step", "(I)V"), 20u);
    EXPECT_LT(r.report["duration_ns"].get<uint64_t>(), 3'000'000'000u);
    EXPECT_NE(r.err.find("runs on untraced"), std::string::npos) << r.err;
}

TEST(Usage, RefusesWhatIsNotAJavaLauncher)
{
    Child jmt({JMT_BINARY, "--", "/bin/sleep", "1"}, false);
    EXPECT_EQ(jmt.wait_exit(30000), 1);
    const std::string err = jmt.drain(true, 1000);
    EXPECT_NE(err.find("launch mode runs a java launcher"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace

namespace {

// Only the tracer needs root. -u USER runs the command as USER; under sudo without -u,
// as the user who ran sudo (one line says so); -u root keeps root. The probes are attached before
// the JVM's first Java method in every case (System.initPhase1 counted exactly once).
struct AsUser {
    std::string user_name;  // the JVM's user.name
    std::string err;
    uint64_t init_phase1 = 0;
};

AsUser launch_as(const std::vector<std::string> &jmt_args, bool sudo_env)
{
    const std::string report = temp_report();
    unlink(report.c_str());
    std::vector<std::string> argv;
    if (sudo_env)
        argv = {"env", "SUDO_UID=65534", "SUDO_GID=65534"};
    argv.insert(argv.end(), {JMT_BINARY, "--json", "-o", report});
    argv.insert(argv.end(), jmt_args.begin(), jmt_args.end());
    argv.insert(argv.end(), {"--", jmt_it::test_java(), "-XshowSettings:properties", "-version"});
    Child jmt(argv, false);
    EXPECT_EQ(jmt.wait_exit(60000), 0);
    AsUser r;
    r.err = jmt.drain(true, 1000);
    const size_t at = r.err.find("user.name = ");
    if (at != std::string::npos)
        r.user_name = r.err.substr(at + 12, r.err.find('\n', at) - at - 12);
    const nlohmann::json doc = read_json(report);
    unlink(report.c_str());
    if (const auto *row = jmt_it::find_method(doc, "java/lang/System", "initPhase1", "()V"))
        r.init_phase1 = row->at("calls").get<uint64_t>();
    return r;
}

TEST_F(Launch, RunsTheCommandAsTheGivenUserOrTheOneWhoRanSudo)
{
    const AsUser given = launch_as({"-u", "nobody"}, false);
    EXPECT_EQ(given.user_name, "nobody") << given.err;
    EXPECT_EQ(given.init_phase1, 1u) << "traced from the first Java method";

    const AsUser sudo = launch_as({}, true);
    EXPECT_EQ(sudo.user_name, "nobody") << sudo.err;
    EXPECT_NE(
        sudo.err.find("jmethodtime: running the command as nobody (uid 65534, who ran sudo); -u root runs it as root"),
        std::string::npos)
        << sudo.err;
    EXPECT_EQ(sudo.init_phase1, 1u);

    const AsUser root = launch_as({"-u", "root"}, true);
    EXPECT_EQ(root.user_name, "root") << root.err;
    EXPECT_EQ(root.err.find("running the command as"), std::string::npos) << root.err;
    EXPECT_EQ(root.init_phase1, 1u);

    const AsUser plain = launch_as({}, false);
    EXPECT_EQ(plain.user_name, "root") << "not under sudo: root, as jmethodtime";
}

TEST(Usage, AnUnknownUserIsOneLine)
{
    Child jmt({JMT_BINARY, "-u", "no-such-user-jmt", "--", jmt_it::test_java(), "-version"}, false);
    EXPECT_EQ(jmt.wait_exit(30000), 1);
    const std::string err = jmt.drain(true, 1000);
    EXPECT_EQ(err, "jmethodtime: -u no-such-user-jmt: no such user: give a user name or a numeric uid (-u root keeps "
                   "root)\n");
}

}  // namespace
