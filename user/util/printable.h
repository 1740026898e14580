// Text from a target (a JVM's attach reply, a class name) made safe for a terminal: the C0 and C1
// control characters (bytes below 0x20, 0x7f, and UTF-8's U+0080 to U+009F) become \xHH, so no
// escape sequence reaches root's terminal; every other byte stays (Java names may be UTF-8).
#pragma once

#include <string>

namespace jmt {

inline std::string printable(const std::string &text)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    auto escape = [&out](unsigned char b) {
        out += "\\x";
        out += hex[b >> 4];
        out += hex[b & 15];
    };
    for (size_t i = 0; i < text.size(); i++) {
        const auto b = static_cast<unsigned char>(text[i]);
        const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
        if (b < 0x20 || b == 0x7f) {
            escape(b);
        } else if (b == 0xc2 && next >= 0x80 && next <= 0x9f) {
            escape(b);
            escape(next);
            i++;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace jmt
