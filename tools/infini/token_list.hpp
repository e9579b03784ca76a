#pragma once
// Token ids given on the command line ("1,2,3") or in a file (integers separated by commas or
// white space). Anything else is a one-line error naming the offending text and where it was.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infini::cli {

std::vector<int32_t> parse_token_list(std::string_view text, const std::string& where);
std::vector<int32_t> read_token_file(const std::string& path);

}  // namespace infini::cli
