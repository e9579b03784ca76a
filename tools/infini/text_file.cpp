#include "text_file.hpp"

#include <fstream>
#include <sstream>

#include "infini/error.hpp"

namespace infini::cli {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace infini::cli
