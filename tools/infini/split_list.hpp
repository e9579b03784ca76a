#pragma once
// "a,b,,c" -> {"a", "b", "c"}: the items of a separated list, empty ones dropped.
#include <sstream>
#include <string>
#include <vector>

namespace infini::cli {

inline std::vector<std::string> split_list(const std::string& s, char separator = ',') {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, separator);)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace infini::cli
