// Writes known call trees with write_pprof and has Go's own pprof reader check
// them: check_pprof.sh runs go tool pprof -raw and -top -sample_index=calls/wall/cpu
// and compares the totals and each method's flat (exclusive) and cum (inclusive).
//
// usage: jmt_pprof_go_check PATH/check_pprof.sh
// Exit status: 0 pass, 1 fail, 77 skipped (go not installed and CI is not true).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "../common/path_fixture.h"
#include "report/pprof.h"

namespace {

jmt::PathNode node(uint32_t id, uint32_t parent, const std::string &klass, const std::string &method,
                   const std::string &sig, uint64_t calls, uint64_t wall_excl, uint64_t cpu_excl)
{
    return jmt_test::path_node(id, parent, klass, method, sig, calls, {0, wall_excl, 0, cpu_excl});
}

struct Case {
    std::string name;
    jmt::CallTree tree;
    std::vector<std::string> expected;  // check_pprof.sh's arguments after the file
};

// The A/B/C flow, N = 1000 calls of a(): a() calls b() twice and c() once,
// b() calls c() twice; per call exclusive a 1 us, b 2 us, c 5 us, 90% on CPU.
//   path    calls  wall excl   cpu excl
//   a        1000    1000000     900000
//   a;b      2000    4000000    3600000
//   a;b;c    4000   20000000   18000000
//   a;c      1000    5000000    4500000
// Inclusive (pprof's cum): a 30 ms, b 24 ms, c 25 ms (c's two paths).
Case abc()
{
    Case c{"abc", {}, {}};
    const std::string k = "demo/abc/FixedWork";
    c.tree.nodes = {
        node(1, 0, k, "a", "()V", 1000, 1'000'000, 900'000), node(2, 1, k, "b", "()V", 2000, 4'000'000, 3'600'000),
        node(3, 2, k, "c", "()V", 4000, 20'000'000, 18'000'000), node(4, 1, k, "c", "()V", 1000, 5'000'000, 4'500'000)};
    const std::string A = "demo.abc.FixedWork.a()", B = "demo.abc.FixedWork.b()", C = "demo.abc.FixedWork.c()";
    c.expected = {"8000", "30000000", "27000000",  // totals: calls, wall ns, cpu ns
                  A,      "calls",    "1000",     "8000",     B, "calls", "2000",     "6000",
                  C,      "calls",    "5000",     "5000",     A, "wall",  "1000000",  "30000000",
                  B,      "wall",     "4000000",  "24000000", C, "wall",  "25000000", "25000000",
                  A,      "cpu",      "900000",   "27000000", B, "cpu",   "3600000",  "21600000",
                  C,      "cpu",      "22500000", "22500000"};
    return c;
}

// Recursion and the truncated node: main -> r -> r (the recursive call its own
// path) and main -> [truncated]. pprof counts r once per sample in cum, so its
// cum is the outer r's inclusive time; a label with a space ("(int, long)").
Case recursion()
{
    Case c{"recursion", {}, {}};
    c.tree.nodes = {node(1, 0, "app/Main", "main", "([Ljava/lang/String;)V", 1, 100'000, 50'000),
                    node(2, 1, "app/Rec", "r", "(IJ)J", 3, 300'000, 200'000),
                    node(3, 2, "app/Rec", "r", "(IJ)J", 9, 900'000, 600'000),
                    node(4, 1, "", "", "", 7, 700'000, 500'000)};
    c.tree.nodes[3].truncated = true;
    c.tree.truncated_calls = 7;
    const std::string main = "app.Main.main(String[])", r = "app.Rec.r(int, long)", t = "[truncated]";
    c.expected = {"20",    "2000000", "1350000", main, "calls", "1",       "20",      r,
                  "calls", "12",      "12",      t,    "calls", "7",       "7",       main,
                  "wall",  "100000",  "2000000", r,    "wall",  "1200000", "1200000", t,
                  "wall",  "700000",  "700000",  r,    "cpu",   "800000",  "800000"};
    return c;
}

int run(const std::vector<std::string> &args)
{
    std::vector<char *> argv;
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::cout.flush();
    const pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        execv(argv[0], argv.data());
        perror(argv[0]);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) {
        perror("waitpid");
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " PATH/check_pprof.sh\n";
        return 2;
    }
    const char *tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/jmt-pprof-XXXXXX";
    if (!mkdtemp(dir.data())) {
        perror("mkdtemp");
        return 1;
    }
    int result = 0;
    for (const Case &c : {abc(), recursion()}) {
        const std::string file = dir + "/" + c.name + ".pb.gz";
        {
            std::ofstream out(file, std::ios::binary);
            jmt::write_pprof(out, c.tree, 5'000'000'000);
            if (!out) {
                std::cerr << "FAIL: cannot write " << file << "\n";
                result = 1;
                continue;
            }
        }
        std::cout << "== " << c.name << ": " << file << "\n";
        std::vector<std::string> args{argv[1], file};
        args.insert(args.end(), c.expected.begin(), c.expected.end());
        const int rc = run(args);
        unlink(file.c_str());
        if (rc == 77) {  // go missing: the same for every case
            result = result ? result : 77;
            break;
        }
        if (rc != 0)
            result = 1;
    }
    rmdir(dir.c_str());
    return result;
}
