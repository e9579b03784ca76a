#include "text/unicode.hpp"

#include <algorithm>
#include <array>

#include "text/unicode_tables.hpp"

namespace infini::text {
namespace {

bool in_ranges(std::span<const CodepointRange> ranges, char32_t cp) {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                                   [](char32_t c, const CodepointRange& r) { return c < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->last;
}

// GPT-2's mapping, built once: the printable bytes keep their value, the rest take U+0100 + n.
struct ByteAlphabet {
  std::array<char32_t, 256> to_char{};
  ByteAlphabet() {
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[size_t(b)] = printable ? char32_t(b) : next++;
    }
  }
};
const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

}  // namespace

std::vector<char32_t> decode_utf8_lenient(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  const auto byte = [&](size_t i) { return uint8_t(s[i]); };
  for (size_t i = 0; i < s.size();) {
    const uint8_t lead = byte(i);
    size_t n = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (byte(i + k) & 0xC0) == 0x80;
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    char32_t cp = n == 1 ? lead : n == 2 ? lead & 0x1F : n == 3 ? lead & 0x0F : lead & 0x07;
    for (size_t k = 1; k < n; ++k) cp = cp << 6 | (byte(i + k) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | cp >> 6);
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | cp >> 12);
    out += char(0x80 | (cp >> 6 & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | cp >> 18);
    out += char(0x80 | (cp >> 12 & 0x3F));
    out += char(0x80 | (cp >> 6 & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

bool is_letter(char32_t cp) { return in_ranges(letter_ranges(), cp); }
bool is_number(char32_t cp) { return in_ranges(number_ranges(), cp); }
bool is_punctuation(char32_t cp) { return in_ranges(punctuation_ranges(), cp); }

bool is_whitespace(char32_t cp) {
  // PropList.txt's White_Space: tab to carriage return, space, NEL, no-break space, ogham space
  // mark, the spaces U+2000-U+200A, line and paragraph separators, narrow no-break space, medium
  // mathematical space, ideographic space.
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

char32_t char_of_byte(uint8_t byte) { return alphabet().to_char[byte]; }

int byte_of_char(char32_t cp) {
  if (cp >= 0x21 && cp <= 0xFF && cp != 0x7F && !(cp >= 0x80 && cp <= 0xA0) && cp != 0xAD) return int(cp);
  if (cp >= 0x100 && cp < 0x100 + 68) {
    const auto& m = alphabet().to_char;
    for (int b = 0; b < 256; ++b)
      if (m[size_t(b)] == cp) return b;
  }
  return -1;
}

}  // namespace infini::text
