#pragma once
// Host view of a Llama-family model as llama.cpp's GGUF files store it (docs/design.md §3.2): the
// hyperparameters, the Infini-attention additions and one TensorView per weight. The views point
// into the memory-mapped file (or any buffer that outlives them); nothing here copies weights.
//
// Shapes follow GGUF/ggml order: shape[0] is the fastest-varying (contiguous) dimension. A matrix
// weight of shape {in, out} is stored as `out` rows of `in` elements, so y = W x is
// y[o] = sum_i row(o)[i] * x[i] (C = A * W^T with A the activations, as ops::matmul computes).
//   token_embd.weight   {n_embd, n_vocab}   row t is the embedding of token t
//   blk.N.attn_norm     {n_embd}
//   blk.N.attn_q        {n_embd, n_head * head_dim}      rows permuted by llama.cpp's converter so
//   blk.N.attn_k        {n_embd, n_head_kv * head_dim}   that RoPE uses the interleaved layout
//   blk.N.attn_v        {n_embd, n_head_kv * head_dim}
//   blk.N.attn_output   {n_head * head_dim, n_embd}
//   blk.N.attn_mem_gate {n_head}  f32 beta logits (Infini-attention; optional; {head_dim, n_head} or {1} by infini.gate_shape)
//   blk.N.ffn_norm      {n_embd}
//   blk.N.ffn_gate      {n_embd, n_ff}
//   blk.N.ffn_up        {n_embd, n_ff}
//   blk.N.ffn_down      {n_ff, n_embd}
//   output_norm         {n_embd}
//   output              {n_embd, n_vocab}   absent when tied to token_embd
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/architecture.hpp"

#include "infini/attention_options.hpp"
#include "infini/element_type.hpp"
#include "infini/rope_config.hpp"
#include "formats/tensor_view.hpp"
#include "text/vocabulary.hpp"

namespace infini::model {


struct LlamaConfig {
  std::string architecture = "llama";  // general.architecture: llama, qwen2, qwen3 or gemma (its keys' prefix)
  int64_t vocab = 0;        // rows of token_embd (and of output)
  int64_t embd = 0;         // llama.embedding_length
  int64_t layers = 0;       // llama.block_count
  int64_t heads = 0;        // llama.attention.head_count
  int64_t heads_kv = 0;     // llama.attention.head_count_kv (defaults to heads)
  int64_t head_dim = 0;     // embd / heads unless llama.attention.key_length says otherwise
  int64_t ffn = 0;          // llama.feed_forward_length
  int64_t context_length = 0;  // llama.context_length (informational: the stream is unbounded)
  double rms_eps = 1e-5;    // llama.attention.layer_norm_rms_epsilon
  FfnGate ffn_gate = FfnGate::SwiGlu;  // the architecture's (model/architecture.hpp)
  bool scaled_embedding = false;       // embeddings times sqrt(embd) (gemma)
  // llama.rope.freq_base, llama.rope.dimension_count, llama.rope.scaling.*; layout is interleaved
  // (llama.cpp NORM mode) for the llama architecture.
  rope::RopeConfig rope;
  // infini.* (segment_length, memory_update, first_segment and the memory's conventions,
  // docs/design.md §1.8). has_infini_keys is false for
  // a plain Llama file: it then runs with memory off unless the user turns it on.
  bool has_infini_keys = false;
  InfiniOptions infini;
};

// The shape of every attention layer of the model (value dim = head dim).
inline AttentionShape attention_shape(const LlamaConfig& c) {
  return {int(c.heads), int(c.heads_kv), int(c.head_dim), int(c.head_dim)};
}

struct LlamaLayerWeights {
  TensorView attn_norm, wq, wk, wv, wo;
  std::optional<TensorView> bq, bk, bv;  // blk.N.attn_{q,k,v}.bias, f32 (qwen2; optional)
  // blk.N.attn_{q,k}_norm.weight, f32 [head_dim]: RMSNorm of each head of Q and K before RoPE (qwen3)
  std::optional<TensorView> q_norm, k_norm;
  std::optional<TensorView> mem_gate;  // blk.N.attn_mem_gate, f32 [n_head] (or as infini.gate_shape says)
  TensorView ffn_norm, ffn_gate, ffn_up, ffn_down;
};


struct LlamaWeights {
  LlamaConfig config;
  Vocabulary vocab;
  TensorView token_embd;
  TensorView output_norm;
  TensorView output;  // == token_embd (same view) when the file ties them
  std::vector<LlamaLayerWeights> layers;
};

}  // namespace infini::model
