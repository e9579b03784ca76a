#pragma once
// Files the commands read and write: a whole file's bytes for the commands that take their input
// from -f FILE, and the check an output path gets before any work starts.
#include <string>

namespace infini::cli {

// Throws infini::Error ("PATH: cannot open", "PATH: is a directory") when the file cannot be read.
std::string read_text_file(const std::string& path);

// Throws UsageError naming `option` when `path` cannot be written: its folder does not exist or is
// not a folder, or the path is a folder. For checking outputs before a long run, not after.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace infini::cli
