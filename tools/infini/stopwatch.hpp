#pragma once
// Wall-clock seconds for the commands' progress lines and benchmarks.
#include <chrono>

namespace infini::cli {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace infini::cli
