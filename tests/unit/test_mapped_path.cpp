// A maps path to the file here and to the process's own path: a host JVM, one
// in a container (its own mount namespace) and one in a plain chroot, with the
// files' identities given instead of stat.
#include <gtest/gtest.h>

#include <map>

#include "util/mapped_path.h"

namespace {

constexpr int kPid = 42;
constexpr char kLib[] = "/usr/lib/jvm/java-21-openjdk-amd64/lib/server/libjvm.so";
const jmt::FileId kLibId{0xfe, 1, 99};
const jmt::FileId kRootId{0xfe, 1, 7};

jmt::MapsEntry mapping(const std::string &path, const std::string &dev = "fe:01", uint64_t inode = 99)
{
    jmt::MapsEntry e;
    e.start = 0x7f1a2e200000ULL;
    e.end = 0x7f1a2e4c1000ULL;
    e.perms = "r--p";
    e.dev = dev;
    e.inode = inode;
    e.path = path;
    return e;
}

// identity_of over a fixed table of paths.
jmt::IdentityOf files(std::map<std::string, jmt::FileId> table)
{
    return [table](const std::string &path) -> std::optional<jmt::FileId> {
        auto it = table.find(path);
        if (it == table.end())
            return std::nullopt;
        return it->second;
    };
}

TEST(MapsFileId, DeviceInHexAndTheInode)
{
    const auto id = jmt::maps_file_id(mapping(kLib, "103:1a", 12345));
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(id->major, 0x103u);
    EXPECT_EQ(id->minor, 0x1au);
    EXPECT_EQ(id->inode, 12345u);
    EXPECT_FALSE(jmt::maps_file_id(mapping("", "00:00", 0)).has_value());
    EXPECT_FALSE(jmt::maps_file_id(mapping(kLib, "fe01", 99)).has_value());
    EXPECT_FALSE(jmt::maps_file_id(mapping(kLib, "fe:", 99)).has_value());
    EXPECT_FALSE(jmt::maps_file_id(mapping(kLib, "xy:01", 99)).has_value());
}

// A JVM of this host: both candidates are the file; the one through its root is taken.
TEST(ChooseView, HostJvmThroughItsRoot)
{
    const auto view = jmt::choose_view(kPid, mapping(kLib), "/", kRootId,
                                       files({{"/proc/42/root" + std::string(kLib), kLibId}, {kLib, kLibId}}));
    EXPECT_TRUE(view.verified);
    EXPECT_EQ(view.here(kLib), "/proc/42/root" + std::string(kLib));
    EXPECT_EQ(view.own(kLib), kLib);
}

// A container: its paths exist only through its root; here, a different file has the same path.
TEST(ChooseView, ContainerPathsThroughItsRoot)
{
    const auto view =
        jmt::choose_view(kPid, mapping(kLib), "/", kRootId,
                         files({{"/proc/42/root" + std::string(kLib), kLibId}, {kLib, jmt::FileId{0xfe, 1, 1234}}}));
    EXPECT_TRUE(view.verified);
    EXPECT_EQ(view.prefix, "/proc/42/root");
    EXPECT_EQ(view.own("/tmp/.jmethodtime-0123456789abcdef/libjmtagent.so"),
              "/tmp/.jmethodtime-0123456789abcdef/libjmtagent.so");
}

// A plain chroot: maps show our paths; the JVM's own are those below its root.
TEST(ChooseView, ChrootPathsAreOursAndItsOwnAreBelowItsRoot)
{
    const std::string root = "/var/cache/jmethodtime/trixie-root";
    const std::string seen = root + kLib;
    const auto view = jmt::choose_view(kPid, mapping(seen), root, kRootId, files({{seen, kLibId}, {root, kRootId}}));
    EXPECT_TRUE(view.verified);
    EXPECT_EQ(view.prefix, "");
    EXPECT_EQ(view.here(seen), seen);
    EXPECT_EQ(view.own(seen), kLib);
    EXPECT_EQ(view.own(root + "/tmp/.jmethodtime-0123456789abcdef/libjmtagent.so"),
              "/tmp/.jmethodtime-0123456789abcdef/libjmtagent.so");
    EXPECT_EQ(view.own(root + "-other/usr/lib/x.so"), "") << "a sibling directory is not below the root";
    EXPECT_EQ(view.own("/usr/lib/x.so"), "") << "outside its root: no name of its own";
    // A root given with a trailing slash names the same directory.
    const auto slash =
        jmt::choose_view(kPid, mapping(seen), root + "/", kRootId, files({{seen, kLibId}, {root + "/", kRootId}}));
    EXPECT_EQ(slash.own(seen), kLib);
}

// What /proc/PID/root reads is not its root (a root unreachable from ours): no own paths.
TEST(ChooseView, RootLinkThatIsNotTheRootNamesNothing)
{
    const std::string root = "/srv/jail";
    const std::string seen = root + kLib;
    const auto view =
        jmt::choose_view(kPid, mapping(seen), root, kRootId, files({{seen, kLibId}, {root, jmt::FileId{0xfe, 1, 8}}}));
    EXPECT_TRUE(view.verified);
    EXPECT_EQ(view.here(seen), seen);
    EXPECT_EQ(view.own(seen), "");
}

// Neither candidate is the mapped file (replaced since it was mapped, or another
// filesystem's device): the mapping itself, through map_files.
TEST(ChooseView, NeitherCandidateGivesTheMappingItself)
{
    const jmt::MapsEntry e = mapping(kLib);
    const auto view = jmt::choose_view(kPid, e, "/", kRootId, files({{kLib, jmt::FileId{0xfe, 1, 100}}}));
    EXPECT_FALSE(view.verified);
    EXPECT_EQ(view.prefix, "/proc/42/root");
    EXPECT_EQ(jmt::mapped_file_here(kPid, view, e), "/proc/42/map_files/7f1a2e200000-7f1a2e4c1000");
    EXPECT_FALSE(jmt::choose_view(kPid, mapping("[vdso]", "00:00", 0), "/", kRootId, files({})).verified);
}

}  // namespace
