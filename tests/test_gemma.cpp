// The gemma architecture (Gemma 1, model/architecture.hpp): embeddings scaled by sqrt(n_embd), a
// GeGLU feed-forward (GELU's tanh approximation), the output tied to token_embd whatever the file
// holds, one KV head (MQA) and a head dim that is not embd / heads. Random gemma files run as both
// float64 references (with memory over several segments, and plain), prefill and decode, on the
// register kernels and on the vector kernel (which leaves the GeGLU to its own step); and the
// architecture's steps are what makes them agree (the same weights read as llama do not).
#include <span>
#include <string>
#include <vector>

#include "exec/llama_runner.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "reference/llama_reference.hpp"
#include "reference/plain_llama.hpp"
#include "reference/random_llama.hpp"
#include "support/gpu_fixture.hpp"
#include "util/nmse.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;
using model::RunnerOptions;

model::RandomLlamaOptions gemma_options(ElementType type, bool infini) {
  model::RandomLlamaOptions o;
  o.arch = "gemma";
  o.vocab = 300;
  o.embd = 64;
  o.heads = 4;
  o.heads_kv = 1;    // MQA, as Gemma 2B
  o.head_dim = 32;   // heads * head_dim = 128, not embd (Gemma's 8 x 256 against 2048)
  o.ffn = 96;
  o.dtype = type;
  o.infini = infini;
  o.segment = 6;
  return o;
}

double err(const std::vector<float>& got, const std::vector<double>& want) {
  return nmse(std::span<const float>(got), std::span<const double>(want));
}

const std::vector<int32_t> kIds = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};

}  // namespace

TEST_CASE_METHOD(GpuTest, "gemma files run as both references", "[gpu][model][gguf][gemma]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const double tol = type == ElementType::F16 ? 1e-4 : 1e-5;
  INFO(element_name(type));
  {  // Memory on, over several segments: the Infini-attention reference; prefill and decode.
    const std::vector<std::byte> bytes = model::random_llama(gemma_options(type, true)).to_bytes();
    const model::GgufFile file(bytes, "gemma.gguf");
    const model::LlamaWeights weights = model::load_llama(file);
    CHECK(weights.config.architecture == "gemma");
    CHECK(weights.config.ffn_gate == model::FfnGate::GeGlu);
    CHECK(weights.config.scaled_embedding);
    CHECK(weights.output.data.data() == weights.token_embd.data.data());
    const std::vector<double> want = model::LlamaReference(weights, weights.config.infini).prefill(kIds);
    RunnerOptions o;
    o.infini = weights.config.infini;
    LlamaRunner prefill(dev(), weights, o);
    CHECK(err(prefill.forward(kIds, true), want) <= tol);
    // Decode on the vector kernel, whose fused gate is SwiGLU's: gemma's GeGLU stays a step.
    o.matmul_kernel = ops::MatmulKernel::Vector;
    LlamaRunner decode(dev(), weights, o);
    std::vector<float> rows;
    for (const int32_t id : kIds) {
      const std::vector<float> r = decode.forward(std::span<const int32_t>(&id, 1), true);
      rows.insert(rows.end(), r.begin(), r.end());
    }
    CHECK(err(rows, want) <= tol);
    // The same weights as a llama file (no scale, SwiGLU) are another model: the steps matter.
    model::LlamaWeights as_llama = weights;
    as_llama.config.ffn_gate = model::FfnGate::SwiGlu;
    as_llama.config.scaled_embedding = false;
    CHECK(err(prefill.forward(kIds, true), model::LlamaReference(as_llama, weights.config.infini).prefill(kIds)) > 100 * tol);
  }
  // A plain file, memory off: the independent plain implementation.
  const std::vector<std::byte> bytes = model::random_llama(gemma_options(type, false)).to_bytes();
  const model::GgufFile file(bytes, "gemma-plain.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  RunnerOptions o;
  o.infini.memory = false;
  o.infini.segment = 64;
  o.infini.rope = weights.config.rope;
  LlamaRunner runner(dev(), weights, o);
  CHECK(err(runner.forward(kIds, true), model::plain_llama_logits(weights, kIds)) <= tol);
}

TEST_CASE("a gemma file's output.weight is not read: its logits use token_embd, as llama.cpp's", "[model][gguf][gemma]") {
  model::RandomLlamaOptions o = gemma_options(ElementType::F32, false);
  model::GgufWriter w = model::random_llama(o);
  w.add_tensor("output.weight", ElementType::F32, {o.embd, o.vocab}, std::vector<float>(size_t(o.embd * o.vocab), 0.5f));
  const std::vector<std::byte> bytes = w.to_bytes();
  const model::GgufFile file(bytes, "gemma-output.gguf");
  std::vector<std::string> warnings;
  const model::LlamaWeights weights = model::load_llama(file, warnings);
  CHECK(weights.output.data.data() == weights.token_embd.data.data());
  bool warned = false;
  for (const std::string& warning : warnings) warned = warned || warning.find("output.weight") != std::string::npos;
  CHECK(warned);
}

}  // namespace infini::test
