#pragma once
// Random-weight Llama models of any shape, as GGUF: test and benchmark models for the runtime
// that need no download. Weights come from a seeded PRNG per tensor (the same seed gives the
// same file; a tensor's values do not depend on which other tensors exist) and are scaled like
// a freshly initialised transformer (std 0.02, output projections 0.02 / sqrt(2 * layers), norm
// weights near 1), so activations stay finite over many layers. The vocabulary is
// synthetic_spm_vocab(vocab).
#include <cstdint>

#include "infini/attention_options.hpp"
#include "model/gguf_writer.hpp"
#include "model/llama_weights.hpp"

namespace infini::model {

struct RandomLlamaOptions {
  int64_t vocab = 512;
  int64_t embd = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t heads_kv = 2;
  int64_t ffn = 172;
  int64_t context_length = 4096;
  TensorType dtype = TensorType::F32;  // of the matrices; norms and gates are always f32
  uint64_t seed = 1;
  bool tied = false;                   // no output.weight: the output reuses token_embd
  bool infini = true;                  // infini.* keys and blk.N.attn_mem_gate tensors
  int64_t segment = 2048;
  UpdateRule update = UpdateRule::Delta;
  FirstSegment first_segment = FirstSegment::Mix;
  double rope_base = 10000.0;
  float rms_eps = 1e-5f;
};

// Throws infini::Error (one line naming the option) for shapes llama cannot have.
GgufWriter random_llama(const RandomLlamaOptions& options);

}  // namespace infini::model
