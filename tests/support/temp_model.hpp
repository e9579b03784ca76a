#pragma once
// A random model written to a temporary GGUF file (temp_path), removed again at the end of the test.
#include <filesystem>
#include <string>

#include "reference/random_llama.hpp"
#include "support/temp_path.hpp"

namespace infini::test {

struct TempModel {
  std::filesystem::path path;
  explicit TempModel(const model::RandomLlamaOptions& o, const std::string& name) : path(temp_path(name)) {
    model::random_llama(o).write(path);
  }
  ~TempModel() { std::filesystem::remove(path); }
  TempModel(const TempModel&) = delete;
  TempModel& operator=(const TempModel&) = delete;
};

}  // namespace infini::test
