#pragma once
// A whole file's bytes, for the commands that take their input from -f FILE.
#include <string>

namespace infini::cli {

// Throws infini::Error ("PATH: cannot open") when the file cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace infini::cli
