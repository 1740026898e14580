#include "jvm/source.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <climits>

#include "jvm/jvm.h"
#include "util/time_text.h"

namespace jmt {

std::string java_main_class(const std::vector<std::string> &argv)
{
    // Options of the java launcher that take their value as the next argument.
    static const char *const with_value[] = {"-cp",
                                             "-classpath",
                                             "--class-path",
                                             "-p",
                                             "--module-path",
                                             "--upgrade-module-path",
                                             "--add-modules",
                                             "--limit-modules",
                                             "--add-opens",
                                             "--add-exports",
                                             "--add-reads",
                                             "--patch-module",
                                             "--enable-native-access"};
    for (size_t i = 1; i < argv.size(); i++) {
        const std::string &a = argv[i];
        if (a == "-jar" || a == "-m" || a == "--module")
            return i + 1 < argv.size() ? argv[i + 1] : std::string();
        if (a.rfind("--module=", 0) == 0)
            return a.substr(9);
        bool takes_value = false;
        for (const char *w : with_value)
            takes_value = takes_value || a == w;
        if (takes_value) {
            i++;
            continue;
        }
        if (!a.empty() && a[0] == '-')
            continue;
        return a;
    }
    return {};
}

ReportSource describe_source(int pid, const std::string &jdk_version, uint64_t start_unix_ns)
{
    ReportSource s;
    char host[HOST_NAME_MAX + 1] = {};
    if (gethostname(host, sizeof host - 1) == 0)
        s.hostname = host;
    struct utsname u {};
    if (uname(&u) == 0) {
        s.kernel = u.release;
        s.arch = u.machine;
    }
    s.pid = pid;
    s.jdk_version = jdk_version;
    s.start_time = format_utc(start_unix_ns);
    std::vector<std::string> argv;
    const std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    for (size_t at = 0; at < cmdline.size();) {
        size_t end = cmdline.find('\0', at);
        if (end == std::string::npos)
            end = cmdline.size();
        argv.push_back(cmdline.substr(at, end - at));
        at = end + 1;
    }
    for (size_t i = 0; i < argv.size(); i++)
        s.command += (i ? " " : "") + argv[i];
    s.main_class = java_main_class(argv);
    return s;
}

}  // namespace jmt
