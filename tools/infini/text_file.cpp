#include "text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "command.hpp"
#include "infini/error.hpp"

namespace infini::cli {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  // A directory opens as a stream that reads as empty text.
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read");
  return text.str();
}

void check_output_path(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) throw UsageError(option + ": the path is empty");
  if (fs::is_directory(path, ec)) throw UsageError(option + ": " + path + " is a directory");
  const fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) return;  // the working directory
  if (!fs::exists(folder, ec)) throw UsageError(option + ": the folder " + folder.string() + " does not exist");
  if (!fs::is_directory(folder, ec)) throw UsageError(option + ": " + folder.string() + " is not a folder");
}

}  // namespace infini::cli
