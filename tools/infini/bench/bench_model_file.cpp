#include "bench_model_file.hpp"

#include <algorithm>

#include "infini/error.hpp"
#include "model/llama_loader.hpp"

namespace infini::cli {

BenchModel load_bench_model(const BenchOptions& o, const std::string& workload, const std::string& path) {
  if (o.model.empty())
    throw Error("the " + workload + " workload needs --model FILE.gguf (infini make-model writes one)");
  BenchModel m;
  m.file = std::make_unique<model::GgufFile>(path.empty() ? o.model : path);
  m.weights = model::load_llama(*m.file);
  m.options = model::resolve_runner_options(m.weights.config, o.memory, o.model_segment, 1);
  m.options.max_piece = uint32_t(std::min<int64_t>(m.options.infini.segment, 512));
  // The kernels a Model would run: the tuned ones under INFINI_TUNE=auto (the default), the rules'
  // under off, so that the two can be compared.
  m.options.tune = model::tune_mode_from_environment();
  return m;
}

}  // namespace infini::cli
