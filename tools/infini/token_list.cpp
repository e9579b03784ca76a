#include "token_list.hpp"

#include <charconv>

#include "infini/error.hpp"
#include "text_file.hpp"

namespace infini::cli {

std::vector<int32_t> parse_token_list(std::string_view text, const std::string& where) {
  std::vector<int32_t> ids;
  size_t i = 0;
  auto separator = [](char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < text.size()) {
    if (separator(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    int32_t value = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc() || ptr != word.data() + word.size()) {
      const std::string shown(word.substr(0, 32));
      throw Error(where + ": '" + shown + "' is not a token id (32-bit integer)");
    }
    ids.push_back(value);
    i = end;
  }
  if (ids.empty()) throw Error(where + ": no token ids");
  return ids;
}

std::vector<int32_t> read_token_file(const std::string& path) { return parse_token_list(read_text_file(path), path); }

}  // namespace infini::cli
