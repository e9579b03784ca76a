#pragma once
// Float64 CPU forward pass of a Llama model whose attention layers are Infini-attention layers
// (docs/design.md §1, §3.1): the definition the GPU model runner is checked against. Plain loops on
// purpose; each attention layer is a reference::LayerReference, so the model inherits its
// guarantee that any split of the stream into prefill() and decode_token() calls gives the same
// logits.
//
// Per layer: h = RMSNorm(x) * attn_norm; q, k, v = Wq h, Wk h, Wv h (rows of W are output
// features); a = Infini-attention(q, k, v) with query head h reading KV head h / (Hq/Hkv), beta
// from blk.N.attn_mem_gate (zeros when absent); x += Wo a; h = RMSNorm(x) * ffn_norm;
// x += Wdown (silu(Wgate h) * Wup h). Logits = output (RMSNorm(x) * output_norm).
// RMSNorm(x) = x / sqrt(mean(x^2) + rms_eps).
//
// With options.memory == false and options.segment >= the tokens seen this is a plain causal
// Llama (RoPE positions are segment-local, and scores depend only on position differences).
#include <cstdint>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "model/llama_weights.hpp"
#include "reference/infini_attention_reference.hpp"

namespace infini::model {

class LlamaReference {
 public:
  // `weights` (and the memory its views span) must outlive this object. Checks the weights
  // (check_llama_weights). options.rope is ignored: RoPE is the model's, weights.config.rope; its
  // frequencies are computed once for a length of options.segment (what the device layer does,
  // and what dynamic RoPE scales for). Throws infini::Error on a bad config or tensor.
  LlamaReference(const LlamaWeights& weights, const InfiniOptions& options);

  // Next tokens of the stream -> logits [tokens.size()][vocab], row-major.
  std::vector<double> prefill(std::span<const int32_t> tokens);
  // Next single token -> logits [vocab]. Uses the layers' decode path (open-segment cache).
  std::vector<double> decode_token(int32_t token);
  // Back to the start of a stream: memory, open segments and the token count cleared.
  void reset();

  int64_t tokens_seen() const { return tokens_seen_; }
  // The options in effect (rope replaced by the model's).
  const InfiniOptions& options() const { return options_; }

 private:
  std::vector<double> forward(std::span<const int32_t> tokens, bool decode);

  const LlamaWeights& weights_;
  InfiniOptions options_;
  rope::RopeFrequencies freqs_;
  AttentionShape shape_;
  std::vector<std::vector<double>> betas_;  // [layer][Hq]
  std::vector<reference::LayerReference> layers_;
  int64_t tokens_seen_ = 0;
};

}  // namespace infini::model
