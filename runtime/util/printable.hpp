#pragma once
// Untrusted text (names and strings read from files) made safe for a one-line error message:
// control bytes and, optionally, non-ASCII bytes become \xNN, and long text is cut with "...".
#include <cstddef>
#include <string>
#include <string_view>

namespace infini {

inline std::string printable(std::string_view s, bool ascii_only, std::size_t max_len = std::string::npos) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || (ascii_only && c >= 0x80)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace infini
