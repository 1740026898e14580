#include <gtest/gtest.h>

#include <string>

#include "control/flag_write.h"
#include "util/printable.h"

namespace {

// A JVM's maps around its libjvm: text, read-only data, data, and the rest of .bss after it.
const std::string kMaps =
    "7f0000000000-7f0000800000 r-xp 00000000 fe:01 1234 /usr/lib/jvm/java-17/lib/server/libjvm.so\n"
    "7f0000800000-7f0000900000 r--p 00800000 fe:01 1234 /usr/lib/jvm/java-17/lib/server/libjvm.so\n"
    "7f0000900000-7f0000950000 rw-p 00900000 fe:01 1234 /usr/lib/jvm/java-17/lib/server/libjvm.so\n"
    "7f0000950000-7f0000990000 rw-p 00000000 00:00 0 \n"
    "7f0000a00000-7f0000a10000 rw-p 00000000 00:00 0 \n"
    "7f0000b00000-7f0000b10000 rw-p 00010000 fe:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n";

}  // namespace

TEST(FlagWrite, OnlyLibjvmsWritableDataCanHoldTheFlag)
{
    EXPECT_EQ(jmt::flag_address_problem(kMaps, 0x7f0000900010), "");  // its .data
    EXPECT_EQ(jmt::flag_address_problem(kMaps, 0x7f0000960000), "");  // its .bss beyond the file's pages
    const std::string code = jmt::flag_address_problem(kMaps, 0x7f0000001000);
    EXPECT_NE(code.find("read-only memory (r-xp /usr/lib/jvm/java-17/lib/server/libjvm.so)"), std::string::npos)
        << code;
    EXPECT_NE(jmt::flag_address_problem(kMaps, 0x7f0000800010).find("read-only memory (r--p"), std::string::npos);
    // Writable, but not libjvm's: an anonymous mapping not next to it, another library's data.
    EXPECT_NE(jmt::flag_address_problem(kMaps, 0x7f0000a00000).find("not in libjvm.so's data"), std::string::npos);
    EXPECT_NE(jmt::flag_address_problem(kMaps, 0x7f0000b00000).find("not in libjvm.so's data (rw-p /usr/lib/"),
              std::string::npos);
    EXPECT_EQ(jmt::flag_address_problem(kMaps, 0x1000), "nothing is mapped there");
    EXPECT_EQ(jmt::flag_address_problem(kMaps, 0x7f0000990000), "nothing is mapped there");  // one past the end
}

TEST(Printable, TextFromAJvmReachesTheTerminalWithoutControlBytes)
{
    EXPECT_EQ(jmt::printable("return code: 0"), "return code: 0");
    EXPECT_EQ(jmt::printable("\x1b]0;owned\x07\n"), "\\x1b]0;owned\\x07\\x0a");
    EXPECT_EQ(jmt::printable("\xc2\x9b"
                             "31m"),
              "\\xc2\\x9b31m");                                                               // C1's CSI, as UTF-8
    EXPECT_EQ(jmt::printable("org/caf\xc3\xa9/M\xc3\xa4in"), "org/caf\xc3\xa9/M\xc3\xa4in");  // UTF-8 names stay
}
