#include "model/llama_weights_check.hpp"

#include <cmath>
#include <string>

#include "infini/error.hpp"
#include "model/tensor_values.hpp"

namespace infini::model {
namespace {

void require_positive(int64_t value, const char* name) {
  if (value <= 0) throw Error(std::string("llama config: ") + name + " must be positive, got " + std::to_string(value));
}

}  // namespace

void check_llama_weights(const LlamaWeights& w) {
  const LlamaConfig& c = w.config;
  require_positive(c.vocab, "vocab size");
  require_positive(c.embd, "embedding length");
  require_positive(c.layers, "block count");
  require_positive(c.heads, "head count");
  require_positive(c.heads_kv, "kv head count");
  require_positive(c.head_dim, "head dim");
  require_positive(c.ffn, "feed forward length");
  if (c.heads % c.heads_kv != 0)
    throw Error("llama config: head count " + std::to_string(c.heads) + " is not a multiple of kv head count " +
                std::to_string(c.heads_kv));
  if (!(c.rms_eps >= 0.0) || !std::isfinite(c.rms_eps))
    throw Error("llama config: rms epsilon must be finite and >= 0, got " + std::to_string(c.rms_eps));
  if (static_cast<int64_t>(w.layers.size()) != c.layers)
    throw Error("llama weights: " + std::to_string(w.layers.size()) + " layers, the config says " +
                std::to_string(c.layers));

  const int64_t q_dim = c.heads * c.head_dim, kv_dim = c.heads_kv * c.head_dim;
  check_tensor(w.token_embd, {c.embd, c.vocab});
  check_tensor(w.output_norm, {c.embd});
  check_tensor(w.output, {c.embd, c.vocab});
  for (const LlamaLayerWeights& l : w.layers) {
    check_tensor(l.attn_norm, {c.embd});
    check_tensor(l.wq, {c.embd, q_dim});
    check_tensor(l.wk, {c.embd, kv_dim});
    check_tensor(l.wv, {c.embd, kv_dim});
    check_tensor(l.wo, {q_dim, c.embd});
    if (l.mem_gate)
      check_tensor(*l.mem_gate, c.infini.gate_shape == GateShape::PerHeadValue ? std::vector<int64_t>{c.head_dim, c.heads}
                                : c.infini.gate_shape == GateShape::PerLayer   ? std::vector<int64_t>{1}
                                                                               : std::vector<int64_t>{c.heads});
    check_tensor(l.ffn_norm, {c.embd});
    check_tensor(l.ffn_gate, {c.embd, c.ffn});
    check_tensor(l.ffn_up, {c.embd, c.ffn});
    check_tensor(l.ffn_down, {c.ffn, c.embd});
  }
}

}  // namespace infini::model
