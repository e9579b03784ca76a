#pragma once
// Untrusted text (names and strings read from files, answers a model wrote) made safe for a
// one-line message: control bytes and, optionally, non-ASCII bytes become \xNN, and long text is
// cut with "...". The library quotes what it reports this way; programs may do the same.
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
