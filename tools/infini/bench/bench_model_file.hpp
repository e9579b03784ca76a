#pragma once
// The --model file of the model benchmarks, loaded, with the runner options they all use
// (the file's memory and segment unless --memory / --model-segment say otherwise; pieces of at
// most 512 tokens; the matmul kernels INFINI_TUNE says, as a Model's).
#include <memory>

#include "bench.hpp"
#include "formats/gguf_file.hpp"
#include "exec/llama_runner.hpp"
#include "model/llama_weights.hpp"

namespace infini::cli {

struct BenchModel {
  std::unique_ptr<model::GgufFile> file;  // the mapping the weights point into
  model::LlamaWeights weights;
  model::RunnerOptions options;
};

// Throws a one-line error naming `workload` when no --model was given. `path` replaces --model
// (the model workload's --reference-model).
BenchModel load_bench_model(const BenchOptions& o, const std::string& workload, const std::string& path = {});

}  // namespace infini::cli
