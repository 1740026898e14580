#include "target/jvm.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "util/error.h"
#include "jmethodtime.h"

namespace jmt {

namespace {

constexpr uint32_t kNtStapsdt = 3;

bool ends_with(const std::string &s, const std::string &suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct ElfFile {
    int fd = -1;
    Elf *elf = nullptr;
    ~ElfFile()
    {
        if (elf)
            elf_end(elf);
        if (fd >= 0)
            close(fd);
    }
};

uint64_t read_word(const char *p, bool is64)
{
    if (is64) {
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void parse_stapsdt(Elf_Scn *scn, bool is64, const std::string &provider, std::vector<UsdtNote> &out)
{
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
        return;
    size_t offset = 0, name_off, desc_off;
    GElf_Nhdr nhdr;
    const size_t word = is64 ? 8 : 4;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) > 0) {
        if (nhdr.n_type != kNtStapsdt || nhdr.n_descsz < 3 * word)
            continue;
        const char *desc = static_cast<const char *>(data->d_buf) + desc_off;
        const char *end = desc + nhdr.n_descsz;
        UsdtNote note;
        note.location = read_word(desc, is64);
        note.semaphore = read_word(desc + 2 * word, is64);
        const char *s = desc + 3 * word;
        std::string fields[3];
        for (auto &f : fields) {
            const char *z = static_cast<const char *>(memchr(s, '\0', end - s));
            if (!z)
                break;
            f.assign(s, z);
            s = z + 1;
        }
        note.provider = fields[0];
        note.name = fields[1];
        note.args = fields[2];
        if (note.provider == provider)
            out.push_back(std::move(note));
    }
}

}  // namespace

std::string read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<uint64_t> stat_cpu_ticks(const std::string &stat_text)
{
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
    // fields count from the last ')'; utime and stime are fields 14 and 15.
    const size_t close = stat_text.rfind(')');
    if (close == std::string::npos)
        return std::nullopt;
    std::istringstream fields(stat_text.substr(close + 1));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int n = 3; n <= 15; n++) {
        if (!(fields >> field))
            return std::nullopt;
        if (n == 14 || n == 15) {
            if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos)
                return std::nullopt;
            (n == 14 ? utime : stime) = std::stoull(field);
        }
    }
    return utime + stime;
}

std::optional<uint64_t> process_cpu_ns(int pid)
{
    const std::optional<uint64_t> ticks = stat_cpu_ticks(read_file("/proc/" + std::to_string(pid) + "/stat"));
    const long hz = sysconf(_SC_CLK_TCK);
    if (!ticks || hz <= 0)
        return std::nullopt;
    return *ticks * (1000000000ULL / static_cast<uint64_t>(hz));
}

LibjvmMapping find_libjvm(const std::string &maps_text)
{
    LibjvmMapping m;
    std::istringstream in(maps_text);
    std::string line;
    while (std::getline(in, line)) {
        // start-end perms offset dev inode path
        std::istringstream fields(line);
        std::string range, perms, offset, dev, inode, path;
        if (!(fields >> range >> perms >> offset >> dev >> inode))
            continue;
        std::getline(fields, path);
        size_t first = path.find_first_not_of(' ');
        if (first == std::string::npos)
            continue;
        path = path.substr(first);
        if (ends_with(path, " (deleted)"))
            path.resize(path.size() - 10);
        if (!ends_with(path, "/libjvm.so"))
            continue;
        if (std::stoull(offset, nullptr, 16) != 0)
            continue;
        m.path = path;
        m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        m.found = true;
        return m;
    }
    return m;
}

std::optional<std::array<uint8_t, 7>> register_args(const std::string &args)
{
    static const std::map<std::string, uint8_t> regs = {
        {"rax", JMT_REG_AX}, {"eax", JMT_REG_AX}, {"rbx", JMT_REG_BX}, {"ebx", JMT_REG_BX},
        {"rcx", JMT_REG_CX}, {"ecx", JMT_REG_CX}, {"rdx", JMT_REG_DX}, {"edx", JMT_REG_DX},
        {"rsi", JMT_REG_SI}, {"esi", JMT_REG_SI}, {"rdi", JMT_REG_DI}, {"edi", JMT_REG_DI},
        {"rbp", JMT_REG_BP}, {"ebp", JMT_REG_BP}, {"rsp", JMT_REG_SP}, {"esp", JMT_REG_SP},
        {"r8", JMT_REG_R8}, {"r8d", JMT_REG_R8}, {"r9", JMT_REG_R9}, {"r9d", JMT_REG_R9},
        {"r10", JMT_REG_R10}, {"r10d", JMT_REG_R10}, {"r11", JMT_REG_R11}, {"r11d", JMT_REG_R11},
        {"r12", JMT_REG_R12}, {"r12d", JMT_REG_R12}, {"r13", JMT_REG_R13}, {"r13d", JMT_REG_R13},
        {"r14", JMT_REG_R14}, {"r14d", JMT_REG_R14}, {"r15", JMT_REG_R15}, {"r15d", JMT_REG_R15},
    };
    std::array<uint8_t, 7> out{};
    std::istringstream in(args);
    std::string arg;
    size_t i = 0;
    while (in >> arg) {
        if (i >= out.size())
            return std::nullopt;
        size_t at = arg.find('@');
        if (at == std::string::npos || at + 2 >= arg.size() || arg[at + 1] != '%')
            return std::nullopt;
        int size = std::abs(std::atoi(arg.substr(0, at).c_str()));
        // Pointers (odd indexes 1,3,5) must be whole 8-byte registers; lengths at least 2 bytes.
        bool pointer = i % 2 == 1;
        if ((pointer && size != 8) || (!pointer && i > 0 && size < 2))
            return std::nullopt;
        auto reg = regs.find(arg.substr(at + 2));
        if (reg == regs.end())
            return std::nullopt;
        out[i++] = reg->second;
    }
    if (i != out.size())
        return std::nullopt;
    return out;
}

LibjvmInfo inspect_libjvm(const std::string &path, const std::string &provider)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        throw Error("libelf initialisation failed: " + std::string(elf_errmsg(-1)));
    ElfFile f;
    f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) {
        int err = errno;
        throw Error("cannot open " + path + ": " + strerror(err), err);
    }
    f.elf = elf_begin(f.fd, ELF_C_READ, nullptr);
    if (!f.elf || elf_kind(f.elf) != ELF_K_ELF)
        throw Error(path + " is not an ELF file: " + std::string(elf_errmsg(-1)));
    const bool is64 = gelf_getclass(f.elf) == ELFCLASS64;

    LibjvmInfo info;
    size_t phnum = 0;
    elf_getphdrnum(f.elf, &phnum);
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(f.elf, i, &ph) && ph.p_type == PT_LOAD) {
            info.first_load_vaddr = ph.p_vaddr;
            break;
        }
    }
    size_t shstrndx = 0;
    elf_getshdrstrndx(f.elf, &shstrndx);
    for (Elf_Scn *scn = elf_nextscn(f.elf, nullptr); scn; scn = elf_nextscn(f.elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(f.elf, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_NOTE && name && strcmp(name, ".note.stapsdt") == 0)
            parse_stapsdt(scn, is64, provider, info.notes);
        if (sh.sh_type == SHT_SYMTAB) {
            Elf_Data *data = elf_getdata(scn, nullptr);
            size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
            for (size_t i = 0; data && i < count; i++) {
                GElf_Sym sym;
                if (!gelf_getsym(data, static_cast<int>(i), &sym))
                    continue;
                const char *sname = elf_strptr(f.elf, sh.sh_link, sym.st_name);
                if (sname && strcmp(sname, "DTraceMethodProbes") == 0 && sym.st_size == 1) {
                    info.flag_vaddr = sym.st_value;
                    break;
                }
            }
        }
    }
    return info;
}

std::string read_target_memory(int pid, uint64_t addr, size_t len)
{
    std::string buf(len, '\0');
    struct iovec local = {buf.data(), len};
    struct iovec remote = {reinterpret_cast<void *>(addr), len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n != static_cast<ssize_t>(len))
        return {};
    return buf;
}

namespace {

bool cmdline_enables_probes(int pid)
{
    std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::string environ = read_file("/proc/" + std::to_string(pid) + "/environ");
    for (const char *flag : {"-XX:+DTraceMethodProbes", "-XX:+ExtendedDTraceProbes"}) {
        if (cmdline.find(flag) != std::string::npos || environ.find(flag) != std::string::npos)
            return true;
    }
    return false;
}

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

}  // namespace

namespace {

// /proc/PID/cmdline with NULs as spaces.
std::string command_line(const std::string &proc)
{
    std::string cmd = read_file(proc + "/cmdline");
    while (!cmd.empty() && cmd.back() == '\0')
        cmd.pop_back();
    for (char &c : cmd)
        if (c == '\0')
            c = ' ';
    return cmd;
}

bool is_kernel_thread(const std::string &proc)
{
    // Field 9 of stat is flags; PF_KTHREAD = 0x00200000. comm (field 2) may hold spaces.
    std::string stat = read_file(proc + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos)
        return false;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i < 9 && rest >> field; i++) {
    }
    unsigned long flags = 0;
    rest >> flags;
    return (flags & 0x00200000UL) != 0;
}

// The JDK of whose (a pid, or the java launch mode runs), at libjvm, has no method probes.
std::string no_probes_message(const std::string &whose, const std::string &libjvm)
{
    return "the JDK of " + whose + " (" + libjvm +
           ") was built without DTrace probes (no hotspot method__entry/method__return stapsdt notes): use a "
           "JDK built with --enable-dtrace, such as Debian's or Temurin's";
}

std::string unquote(std::string v)
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        v = v.substr(1, v.size() - 2);
    return v;
}

}  // namespace

std::string jdk_version_of(const std::string &libjvm_seen, const std::string &root_prefix)
{
    // JDK 9+: HOME/lib/server/libjvm.so; JDK 8: HOME/jre/lib/ARCH/server/libjvm.so.
    std::string dir = libjvm_seen;
    for (int up = 0; up < 5; up++) {
        size_t slash = dir.rfind('/');
        if (slash == std::string::npos || slash == 0)
            break;
        dir.resize(slash);
        std::istringstream in(read_file(root_prefix + dir + "/release"));
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("JAVA_VERSION=", 0) == 0)
                return unquote(line.substr(13));
    }
    return {};
}

bool has_method_probes(const LibjvmInfo &info, std::optional<std::array<uint8_t, 7>> *regs)
{
    const UsdtNote *entry = nullptr, *ret = nullptr;
    for (const auto &n : info.notes) {
        if (n.name == "method__entry")
            entry = &n;
        else if (n.name == "method__return")
            ret = &n;
    }
    if (!entry || !ret)
        return false;
    if (regs && entry->args == ret->args)
        *regs = register_args(entry->args);
    return true;
}

TargetStatus examine_target(int pid)
{
    TargetStatus st;
    JvmTarget &t = st.target;
    t.pid = pid;
    const std::string proc = "/proc/" + std::to_string(pid);
    const std::string who = "pid " + std::to_string(pid);
    auto fail = [&](TargetProblem p, const std::string &message, int err) {
        st.problem = p;
        st.message = message;
        st.err = err;
        return st;
    };
    if (access(proc.c_str(), F_OK) != 0)
        return fail(TargetProblem::NoProcess,
                    "no process with pid " + std::to_string(pid) + ": check the pid (e.g. `jmethodtime --list`)",
                    ESRCH);
    t.comm = trim(read_file(proc + "/comm"));
    t.command = command_line(proc);
    const std::string named = who + " (" + t.comm + ")";
    std::string maps;
    {
        std::ifstream in(proc + "/maps");
        int err = errno;
        if (in) {
            std::ostringstream ss;
            ss << in.rdbuf();
            maps = ss.str();
        }
        if (maps.empty() && is_kernel_thread(proc))
            return fail(TargetProblem::KernelThread,
                        named + " is a kernel thread, not a JVM: give the pid of a java process "
                                "(`jmethodtime --list`)",
                        EINVAL);
        if (maps.empty() && !in) {
            if (err == 0)
                err = EACCES;
            if (geteuid() != 0)
                return fail(TargetProblem::Unreadable,
                            "cannot read " + proc + "/maps (" + strerror(err) +
                                "): run jmethodtime as root (sudo), or as the JVM's user with "
                                "CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE",
                            err);
            return fail(TargetProblem::Unreadable,
                        "cannot read " + proc + "/maps (" + strerror(err) +
                            ") although running as root: " + named +
                            " holds privileges this process lacks, or a security module forbids "
                            "ptrace access to it; run jmethodtime where it may ptrace the JVM",
                        err);
        }
        if (maps.empty()) {
            // The file opened but read nothing: the process is exiting, or access was refused on read.
            if (access(proc.c_str(), F_OK) != 0)
                return fail(TargetProblem::NoProcess, named + " exited: check the pid", ESRCH);
            return fail(TargetProblem::Unreadable,
                        "cannot read " + proc + "/maps: " +
                            (geteuid() != 0 ? std::string("run jmethodtime as root (sudo)")
                                            : std::string("access refused although running as root; run "
                                                          "jmethodtime where it may ptrace the JVM")),
                        EACCES);
        }
    }
    LibjvmMapping m = find_libjvm(maps);
    if (!m.found)
        return fail(TargetProblem::NotJvm,
                    named + " is not a JVM: no libjvm.so is mapped; give the pid of a java process "
                            "(`jmethodtime --list`)",
                    EINVAL);
    t.libjvm_seen = m.path;
    // Through the target's root, so a JVM in another mount namespace resolves.
    t.libjvm = proc + "/root" + m.path;
    if (access(t.libjvm.c_str(), R_OK) != 0)
        t.libjvm = m.path;
    t.jdk_version = jdk_version_of(m.path, proc + "/root");
    LibjvmInfo info;
    try {
        info = inspect_libjvm(t.libjvm);
    } catch (const Error &e) {
        return fail(TargetProblem::Unreadable, who + ": " + e.what(), e.error_number());
    }
    if (!has_method_probes(info, &t.arg_regs))
        return fail(TargetProblem::NoProbes, no_probes_message(named, m.path), ENOTSUP);
    t.has_probes = true;

    if (info.flag_vaddr) {
        uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
        uint64_t bias = m.start - (info.first_load_vaddr & ~(page - 1));
        std::string byte = read_target_memory(pid, bias + *info.flag_vaddr, 1);
        t.probes_on = byte.empty() ? cmdline_enables_probes(pid) : byte[0] != 0;
    } else {
        t.probes_on = cmdline_enables_probes(pid);
    }
    if (!t.probes_on)
        return fail(TargetProblem::ProbesOff,
                    named + " runs with the method probes off: restart the JVM with -XX:+DTraceMethodProbes "
                            "(it cannot be switched on in a running JVM), or start it with "
                            "`jmethodtime [options] -- java ...`",
                    ENOTSUP);
    return st;
}

JvmTarget inspect_jdk(const std::string &java, const std::string &libjvm)
{
    JvmTarget t;
    t.comm = "java";
    t.libjvm = t.libjvm_seen = libjvm;
    if (!has_method_probes(inspect_libjvm(libjvm), &t.arg_regs))
        throw Error(no_probes_message(java, libjvm), ENOTSUP);
    t.has_probes = true;
    return t;
}

JvmTarget inspect_target(int pid)
{
    TargetStatus st = examine_target(pid);
    if (st.problem != TargetProblem::None)
        throw Error(st.message, st.err);
    return st.target;
}

std::vector<JvmTarget> list_jvms()
{
    std::vector<int> pids;
    if (DIR *dir = opendir("/proc")) {
        while (struct dirent *e = readdir(dir)) {
            char *end = nullptr;
            long pid = strtol(e->d_name, &end, 10);
            if (pid > 0 && end && *end == '\0')
                pids.push_back(static_cast<int>(pid));
        }
        closedir(dir);
    }
    std::sort(pids.begin(), pids.end());
    std::vector<JvmTarget> jvms;
    for (int pid : pids) {
        if (pid == getpid())
            continue;
        TargetStatus st = examine_target(pid);
        if (st.problem == TargetProblem::None || st.problem == TargetProblem::NoProbes ||
            st.problem == TargetProblem::ProbesOff)
            jvms.push_back(st.target);
    }
    return jvms;
}

uint64_t effective_capabilities(const std::string &status_text)
{
    std::istringstream in(status_text);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("CapEff:", 0) == 0)
            return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

void check_privileges()
{
    if (geteuid() == 0)
        return;
    constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;
    const uint64_t caps = effective_capabilities(read_file("/proc/self/status"));
    auto has = [caps](int cap) { return (caps >> cap) & 1; };
    if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon)))
        return;
    throw Error("not enough privilege to load BPF programs (uid " + std::to_string(geteuid()) +
                    "): run jmethodtime as root (sudo), or give it CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE",
                EPERM);
}

int jdk_feature_release(const std::string &version)
{
    size_t digits = 0;
    while (digits < version.size() && isdigit(static_cast<unsigned char>(version[digits])))
        digits++;
    if (digits == 0 || digits > 4)
        return 0;
    int major = std::stoi(version.substr(0, digits));
    if (major == 1 && version.size() > 2 && version[1] == '.')  // 1.8.0_392: JDK 8
        return jdk_feature_release(version.substr(2));
    return major;
}

}  // namespace jmt
