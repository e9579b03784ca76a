#pragma once
// Tiny random Llama models held in memory for tests: the fixture owns the bytes and the
// LlamaWeights views span them, so no GGUF file (and no GGUF reader) is involved. The same spec
// and seed give the same weights, whatever the storage type or layout asked for.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/llama_weights.hpp"

namespace infini::testing {

struct TinyLlamaSpec {
  int64_t vocab = 50, embd = 32, layers = 2, heads = 4, heads_kv = 2, head_dim = 8, ffn = 48;
  ElementType type = ElementType::F32;  // matrices and norms; attn_mem_gate is always f32
  bool tied = false;                                // output shares token_embd's view
  bool mem_gate = true;                             // blk.N.attn_mem_gate present (beta in [-2, 2])
  int rotary_dim = 0;                               // 0: the whole head
  rope::RopeLayout layout = rope::RopeLayout::Interleaved;
  // Permute the rows of attn_q and attn_k within each head as llama.cpp's converter does, so a
  // model built with layout Interleaved and this flag equals the same seed with layout Neox.
  bool permute_qk = false;
  double rms_eps = 1e-5;
  uint64_t seed = 1;
};

class TinyLlama {
 public:
  explicit TinyLlama(const TinyLlamaSpec& spec);
  TinyLlama(const TinyLlama&) = delete;
  TinyLlama& operator=(const TinyLlama&) = delete;

  // A tensor of `values` stored as `type`, owned by this fixture; for tests that set weights by hand.
  model::TensorView tensor(const std::string& name, std::vector<int64_t> shape, const std::vector<double>& values,
                           ElementType type);

  model::LlamaWeights weights;

 private:
  std::vector<std::vector<std::byte>> storage_;  // one buffer per tensor; moving the outer vector keeps them put
};

}  // namespace infini::testing
