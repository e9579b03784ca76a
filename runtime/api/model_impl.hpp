#pragma once
// What an infini::Model holds, shared by model.cpp and session.cpp: the mapped GGUF file, the
// weight views into it, their copies on the devices (shared by all the model's sessions), the
// tokenizer and the runner options resolved against the file (a session's stream,
// exec/session_stream.hpp, runs on them).
#include <memory>
#include <string>
#include <vector>

#include "infini/model.hpp"
#include "formats/gguf_file.hpp"
#include "exec/llama_runner.hpp"
#include "exec/step_batcher.hpp"
#include "graph/device_weights.hpp"
#include "model/llama_weights.hpp"
#include "text/tokenizer.hpp"

namespace infini {

struct Model::Impl {
  Context& context;
  std::unique_ptr<model::GgufFile> file;  // the mapping `weights` points into; never moves
  std::vector<std::string> warnings;
  model::LlamaWeights weights;
  model::RunnerOptions runner;
  std::vector<int64_t> layers_per_device;  // empty: by device memory, when a session uploads
  ModelInfo info;
  std::unique_ptr<const model::Tokenizer> tokenizer;  // null: a vocabulary kind infini does not tokenize
  // The weights on each device, uploaded by the first session there and freed with the last.
  mutable model::DeviceWeightCache weight_cache;
  // The batched decode steps of the sessions on each device (one batcher per weight copy).
  mutable model::StepBatcherCache batchers;

  const model::Tokenizer& tokens() const;  // throws (one line) when tokenizer is null

  Impl(Context& context, const std::filesystem::path& path, const ModelOptions& options);
};

struct ModelAccess {
  static const std::shared_ptr<const Model::Impl>& impl(const Model& model) { return model.impl_; }
};

}  // namespace infini
