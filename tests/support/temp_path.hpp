#pragma once
// Paths for test files: CTest runs every test case as its own process, several at once, so a
// fixed name in the temporary directory would be shared (and deleted) by concurrent cases. The
// process id keeps each case's files its own.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace infini::test {

// "model.gguf" -> $TMPDIR/model-<pid>.gguf (the extension kept: some code looks at it).
inline std::filesystem::path temp_path(const std::string& name) {
  const std::filesystem::path leaf(name);
  return std::filesystem::temp_directory_path() /
         (leaf.stem().string() + "-" + std::to_string(::getpid()) + leaf.extension().string());
}

}  // namespace infini::test
