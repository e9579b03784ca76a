// llama.cpp GGUF -> LlamaWeights. Three steps, each checking what it reads before the next uses
// it: hyperparameters (bounded, so the shape arithmetic below cannot overflow), the vocabulary,
// then the tensors (shape and type per name), the Infini keys and the non-finite weight scan.
#include "model/llama_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <limits>
#include <set>
#include <tuple>
#include <string_view>

#include "infini/error.hpp"
#include "model/architecture.hpp"
#include "text/pre_tokenizer.hpp"
#include "util/block_codec.hpp"
#include "model/weight_scan.hpp"
#include "infini/printable.hpp"

namespace infini::model {

namespace {

constexpr int64_t kMaxEmbd = int64_t(1) << 18;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxHeadDim = 4096;
constexpr int64_t kMaxFfn = int64_t(1) << 20;
constexpr int64_t kMaxContext = int64_t(1) << 40;
constexpr std::size_t kMaxUnusedListed = 8;

class Loader {
 public:
  Loader(const GgufFile& file, std::vector<std::string>& warnings) : f_(file), warnings_(warnings) {}

  LlamaWeights load() {
    LlamaWeights w;
    read_config(w.config);
    read_infini_keys(w.config);
    read_tensors(w);
    read_vocabulary(w.vocab, w.config.vocab);
    finish_infini(w);
    report_unused();
    scan();
    return w;
  }

  Vocabulary vocabulary() {
    Vocabulary v;
    read_vocabulary(v, std::numeric_limits<int64_t>::max());
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(f_.name() + ": " + what); }
  void warn(const std::string& what) { warnings_.push_back(f_.name() + ": " + what); }
  std::string key(std::string_view k) const { return "key '" + std::string(k) + "'"; }
  // A hyperparameter key of the file's architecture: "llama.block_count", "qwen2.block_count".
  std::string arch_key(std::string_view name) const { return arch_ + "." + std::string(name); }

  // A required (or, with a fallback, optional) integer hyperparameter in [lo, hi].
  int64_t integer(std::string_view k, int64_t lo, int64_t hi, std::optional<int64_t> fallback = std::nullopt) {
    if (!f_.has(k)) {
      if (fallback) return *fallback;
      fail(key(k) + " is missing");
    }
    const int64_t v = f_.get_i64(k);
    if (v < lo || v > hi)
      fail(key(k) + " is " + std::to_string(v) + " (must be " + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    return v;
  }

  double real(std::string_view k, double fallback, bool required, double lo, double hi) {
    if (!f_.has(k)) {
      if (required) fail(key(k) + " is missing");
      return fallback;
    }
    const double v = f_.get_f64(k);
    if (!(v >= lo && v <= hi))
      fail(key(k) + " is " + shortest(v) + " (must be " + shortest(lo) + " to " + shortest(hi) + ")");
    return v;
  }
  static std::string shortest(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
  }

  // ---- hyperparameters ----

  void read_config(LlamaConfig& c) {
    const std::string arch = f_.get_string("general.architecture");
    const std::optional<Architecture> row = find_architecture(arch);
    if (!row) fail("architecture '" + printable(arch, true, 64) + "' is not supported (" + architecture_names() + ")");
    arch_ = arch;
    rope_layout_ = row->rope_layout;
    tied_output_ = row->tied_output;
    c.architecture = arch;
    c.ffn_gate = row->ffn_gate;
    c.scaled_embedding = row->scaled_embedding;
    c.embd = integer(arch_key("embedding_length"), 1, kMaxEmbd);
    c.layers = integer(arch_key("block_count"), 1, kMaxLayers);
    c.ffn = integer(arch_key("feed_forward_length"), 1, kMaxFfn);
    c.heads = integer(arch_key("attention.head_count"), 1, kMaxHeads);
    c.heads_kv = integer(arch_key("attention.head_count_kv"), 1, kMaxHeads, c.heads);
    if (c.heads % c.heads_kv != 0)
      fail(arch_key("attention.head_count") + " " + std::to_string(c.heads) + " is not a multiple of head_count_kv " +
           std::to_string(c.heads_kv));
    if (f_.has(arch_key("attention.key_length"))) {
      c.head_dim = integer(arch_key("attention.key_length"), 1, kMaxHeadDim);
    } else {
      if (c.embd % c.heads != 0)
        fail(arch_key("embedding_length") + " " + std::to_string(c.embd) + " is not a multiple of head_count " +
             std::to_string(c.heads) + " (and llama.attention.key_length is not set)");
      c.head_dim = c.embd / c.heads;
    }
    if (f_.has(arch_key("attention.value_length")) && integer(arch_key("attention.value_length"), 1, kMaxHeadDim) != c.head_dim)
      fail(arch_key("attention.value_length") + " differs from the key length " + std::to_string(c.head_dim) +
           " (not supported)");
    c.context_length = integer(arch_key("context_length"), 1, kMaxContext);
    c.rms_eps = real(arch_key("attention.layer_norm_rms_epsilon"), 1e-5, true, 1e-30, 1.0);
    read_rope(c);
  }

  void read_rope(LlamaConfig& c) {
    rope::RopeConfig& r = c.rope;
    r.layout = rope_layout_;  // the architecture's (model/architecture.hpp)
    r.base = real(arch_key("rope.freq_base"), 10000.0, false, 1.0 + 1e-9, 1e30);
    r.rotary_dim = static_cast<int>(integer(arch_key("rope.dimension_count"), 2, c.head_dim, c.head_dim));
    if (r.rotary_dim % 2 != 0) fail(arch_key("rope.dimension_count") + " " + std::to_string(r.rotary_dim) + " is odd");
    r.type = rope::RopeType::Default;
    std::string type = f_.has(arch_key("rope.scaling.type")) ? f_.get_string(arch_key("rope.scaling.type")) : "none";
    double factor = real(arch_key("rope.scaling.factor"), 1.0, false, 0.0, 1e6);
    if (!f_.has(arch_key("rope.scaling.type")) && f_.has(arch_key("rope.scale_linear"))) {  // older llama.cpp files
      factor = real(arch_key("rope.scale_linear"), 1.0, false, 0.0, 1e6);
      if (factor != 1.0) type = "linear";
    }
    if (type == "none") {
    } else if (type == "linear") {
      r.type = rope::RopeType::Linear;
      r.factor = factor;
    } else if (type == "yarn") {
      r.type = rope::RopeType::Yarn;
      r.factor = factor;
      r.original_max_position_embeddings = integer(arch_key("rope.scaling.original_context_length"), 1, kMaxContext);
      r.beta_fast = real(arch_key("rope.scaling.yarn_beta_fast"), r.beta_fast, false, 0.0, 1e6);
      r.beta_slow = real(arch_key("rope.scaling.yarn_beta_slow"), r.beta_slow, false, 0.0, 1e6);
      if (f_.has(arch_key("rope.scaling.attn_factor")))
        r.attention_factor = real(arch_key("rope.scaling.attn_factor"), 1.0, false, 0.0, 1e6);
    } else {
      fail("unsupported llama.rope.scaling.type '" + printable(type, true, 64) + "' (none, linear, yarn)");
    }
    try {
      (void)rope::rope_frequencies(r, static_cast<int>(c.head_dim), 0);
    } catch (const Error& e) {
      fail(std::string("RoPE settings: ") + e.what());
    }
  }

  // ---- tensors ----

  const TensorView* optional_tensor(const std::string& name) {
    const TensorView* t = f_.find_tensor(name);
    if (t) used_.insert(name);
    return t;
  }

  // The tensor `name` with exactly `shape`; `meaning` spells the expected shape in hyperparameters.
  TensorView tensor(const std::string& name, std::vector<int64_t> shape, const char* meaning) {
    const TensorView* t = optional_tensor(name);
    if (!t) fail("tensor '" + name + "' is missing");
    if (t->shape != shape)
      fail("tensor '" + name + "' has shape " + gguf::shape_text(t->shape) + " but the hyperparameters need " +
           gguf::shape_text(shape) + " " + meaning);
    return *t;
  }

  void read_tensors(LlamaWeights& w) {
    const LlamaConfig& c = w.config;
    const TensorView* embd = optional_tensor("token_embd.weight");
    if (!embd) fail("tensor 'token_embd.weight' is missing");
    if (embd->shape.size() != 2 || embd->shape[0] != c.embd || embd->shape[1] < 1 || embd->shape[1] > INT32_MAX)
      fail("tensor 'token_embd.weight' has shape " + gguf::shape_text(embd->shape) + " but the hyperparameters need [" +
           std::to_string(c.embd) + ", n_vocab] (n_embd, n_vocab)");
    w.config.vocab = embd->shape[1];
    w.token_embd = *embd;
    w.output_norm = tensor("output_norm.weight", {c.embd}, "(n_embd)");
    w.output = !tied_output_ && f_.find_tensor("output.weight")
                   ? tensor("output.weight", {c.embd, c.vocab}, "(n_embd, n_vocab)")
                   : w.token_embd;
    const int64_t q = c.heads * c.head_dim, kv = c.heads_kv * c.head_dim;
    for (int64_t i = 0; i < c.layers; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".";
      LlamaLayerWeights l;
      l.attn_norm = tensor(b + "attn_norm.weight", {c.embd}, "(n_embd)");
      l.wq = tensor(b + "attn_q.weight", {c.embd, q}, "(n_embd, n_head * head_dim)");
      l.wk = tensor(b + "attn_k.weight", {c.embd, kv}, "(n_embd, n_head_kv * head_dim)");
      l.wv = tensor(b + "attn_v.weight", {c.embd, kv}, "(n_embd, n_head_kv * head_dim)");
      l.wo = tensor(b + "attn_output.weight", {q, c.embd}, "(n_head * head_dim, n_embd)");
      l.ffn_norm = tensor(b + "ffn_norm.weight", {c.embd}, "(n_embd)");
      l.ffn_gate = tensor(b + "ffn_gate.weight", {c.embd, c.ffn}, "(n_embd, n_ff)");
      l.ffn_up = tensor(b + "ffn_up.weight", {c.embd, c.ffn}, "(n_embd, n_ff)");
      l.ffn_down = tensor(b + "ffn_down.weight", {c.ffn, c.embd}, "(n_ff, n_embd)");
      // Q/K/V biases (the qkv_bias architectures'; read in any, as llama.cpp does).
      for (const auto& [name, width, slot] : {std::tuple{"attn_q.bias", q, &l.bq}, std::tuple{"attn_k.bias", kv, &l.bk},
                                              std::tuple{"attn_v.bias", kv, &l.bv}}) {
        if (!f_.find_tensor(b + name)) continue;
        *slot = tensor(b + name, {width}, "(the projection's width)");
        if ((*slot)->type != ElementType::F32)
          fail("tensor '" + b + name + "' must be f32, got " + std::string(element_name((*slot)->type)));
      }
      // Per-head RMSNorm of Q and K (the qk_norm architectures'; read in any).
      for (const auto& [name, slot] : {std::pair{"attn_q_norm.weight", &l.q_norm}, std::pair{"attn_k_norm.weight", &l.k_norm}}) {
        if (!f_.find_tensor(b + name)) continue;
        *slot = tensor(b + name, {c.head_dim}, "(head_dim)");
        if ((*slot)->type != ElementType::F32)
          fail("tensor '" + b + name + "' must be f32, got " + std::string(element_name((*slot)->type)));
      }
      if (l.q_norm.has_value() != l.k_norm.has_value())
        fail("layer " + std::to_string(i) + " has only one of attn_q_norm.weight and attn_k_norm.weight");
      if (f_.find_tensor(b + "attn_mem_gate")) {
        l.mem_gate = c.infini.gate_shape == GateShape::PerHeadValue ? tensor(b + "attn_mem_gate", {c.head_dim, c.heads}, "(head_dim, n_head)")
                     : c.infini.gate_shape == GateShape::PerLayer   ? tensor(b + "attn_mem_gate", {1}, "(1: infini.gate_shape is layer)")
                                                                    : tensor(b + "attn_mem_gate", {c.heads}, "(n_head)");
        if (l.mem_gate->type != ElementType::F32)
          fail("tensor '" + b + "attn_mem_gate' must be f32, got " + std::string(element_name(l.mem_gate->type)));
      }
      w.layers.push_back(std::move(l));
    }
    // Llama 3.1-style RoPE scaling, as per-frequency divisors of theta_i (llama.cpp's freq_factors).
    if (f_.find_tensor("rope_freqs.weight")) {
      const int64_t rotary = c.rope.rotary_dim == 0 ? c.head_dim : c.rope.rotary_dim;
      const TensorView t = tensor("rope_freqs.weight", {rotary / 2}, "(rotary dim / 2)");
      if (t.type != ElementType::F32) fail("tensor 'rope_freqs.weight' must be f32, got " + std::string(element_name(t.type)));
      std::vector<double> divisors(static_cast<std::size_t>(rotary / 2));
      decode_blocks(t.type, t.data, 0, divisors.size(), divisors.data());
      w.config.rope.frequency_divisors = std::move(divisors);
      try {
        (void)rope::rope_frequencies(w.config.rope, static_cast<int>(c.head_dim), 0);
      } catch (const Error& e) {
        fail(std::string("tensor 'rope_freqs.weight': ") + e.what());
      }
    }
  }

  // ---- vocabulary ----

  int32_t token_id(std::string_view k, std::size_t n_tokens) {
    if (!f_.has(k)) return -1;
    const int64_t id = f_.get_i64(k);
    if (id < 0 || static_cast<uint64_t>(id) >= n_tokens) {
      warn(key(k) + " is " + std::to_string(id) + ", outside the " + std::to_string(n_tokens) + " tokens; ignored");
      return -1;
    }
    return static_cast<int32_t>(id);
  }

  void read_vocabulary(Vocabulary& v, int64_t rows) {
    if (f_.has("tokenizer.ggml.model")) v.model = f_.get_string("tokenizer.ggml.model");
    v.tokens = f_.get_string_array("tokenizer.ggml.tokens");
    const std::size_t n = v.tokens.size();
    if (n == 0) fail(key("tokenizer.ggml.tokens") + " is empty");
    if (static_cast<uint64_t>(n) > static_cast<uint64_t>(rows))
      fail("the tokenizer has " + std::to_string(n) + " tokens but token_embd.weight has only " + std::to_string(rows) +
           " rows");
    if (static_cast<int64_t>(n) < rows)
      warn("the tokenizer has " + std::to_string(n) + " tokens for " + std::to_string(rows) +
           " embedding rows; the extra rows are never produced by tokenisation");
    if (f_.has("tokenizer.ggml.scores")) {
      v.scores = f_.get_f32_array("tokenizer.ggml.scores");
      if (v.scores.size() != n)
        fail(key("tokenizer.ggml.scores") + " has " + std::to_string(v.scores.size()) + " entries for " +
             std::to_string(n) + " tokens");
    }
    if (f_.has("tokenizer.ggml.token_type")) {
      const std::vector<int64_t> types = f_.get_int_array("tokenizer.ggml.token_type");
      if (types.size() != n)
        fail(key("tokenizer.ggml.token_type") + " has " + std::to_string(types.size()) + " entries for " +
             std::to_string(n) + " tokens");
      v.token_types.reserve(n);
      for (int64_t t : types) {
        if (t < 0 || t > 255) fail(key("tokenizer.ggml.token_type") + " has the invalid type " + std::to_string(t));
        v.token_types.push_back(static_cast<int32_t>(t));
      }
    }
    v.bos = token_id("tokenizer.ggml.bos_token_id", n);
    v.eos = token_id("tokenizer.ggml.eos_token_id", n);
    v.unknown = token_id("tokenizer.ggml.unknown_token_id", n);
    v.padding = token_id("tokenizer.ggml.padding_token_id", n);
    if (f_.has("tokenizer.ggml.pre")) v.pre = f_.get_string("tokenizer.ggml.pre");
    if (f_.has("tokenizer.ggml.merges")) v.merges = f_.get_string_array("tokenizer.ggml.merges");
    if (v.model == "gpt2") {
      // llama.cpp's BPE default: BOS only for the llama3 pre-tokenizer, unless the file says.
      const auto pre = text::pre_tokenizer_named(v.pre.empty() ? "default" : v.pre);
      v.add_bos = pre && text::adds_bos_by_default(*pre);
    }
    if (f_.has("tokenizer.ggml.add_bos_token")) v.add_bos = f_.get_bool("tokenizer.ggml.add_bos_token");
    if (f_.has("tokenizer.ggml.add_eos_token")) v.add_eos = f_.get_bool("tokenizer.ggml.add_eos_token");
    if (f_.has("tokenizer.chat_template")) v.chat_template = f_.get_string("tokenizer.chat_template");
  }

  // ---- Infini-attention additions ----

  // One of a string key's values, or the fallback when the file has no such key.
  template <class E>
  E choice(std::string_view k, E fallback, std::initializer_list<std::pair<const char*, E>> values) {
    if (!f_.has(k)) return fallback;
    const std::string v = f_.get_string(k);
    std::string expected;
    for (const auto& [name, value] : values) {
      if (v == name) return value;
      expected += (expected.empty() ? "" : " or ") + std::string(name);
    }
    fail(key(k) + " is '" + printable(v, true, 64) + "' (expected " + expected + ")");
  }

  // The infini.* keys (docs/design.md §1.8). Any of them makes the file an Infini-attention model.
  void read_infini_keys(LlamaConfig& c) {
    static constexpr std::string_view kKeys[] = {
        "infini.segment_length", "infini.memory_update", "infini.first_segment", "infini.memory_rope",
        "infini.memory_head_map", "infini.gate_shape", "infini.gate_sense", "infini.memory_z_init",
        "infini.memory_eps", "infini.memory_eps_mode"};
    InfiniOptions& o = c.infini;
    for (const GgufKeyValue& kv : f_.metadata()) {
      if (!kv.key.starts_with("infini.")) continue;
      if (std::find(std::begin(kKeys), std::end(kKeys), kv.key) != std::end(kKeys))
        c.has_infini_keys = true;
      else
        warn("unknown key '" + printable(kv.key, true, 64) + "' ignored");
    }
    o.segment = integer("infini.segment_length", 1, kMaxSegment, o.segment);
    o.update = choice("infini.memory_update", o.update, {{"linear", UpdateRule::Linear}, {"delta", UpdateRule::Delta}});
    o.first_segment =
        choice("infini.first_segment", o.first_segment, {{"mix", FirstSegment::Mix}, {"local", FirstSegment::Local}});
    o.memory_positions = choice("infini.memory_rope", o.memory_positions,
                                {{"before", MemoryPositions::Unrotated}, {"after", MemoryPositions::Rotated}});
    o.memory_head_map = choice("infini.memory_head_map", o.memory_head_map,
                               {{"group", MemoryHeadMap::Grouped}, {"modulo", MemoryHeadMap::Modulo}});
    o.gate_shape = choice("infini.gate_shape", o.gate_shape,
                          {{"head", GateShape::PerHead}, {"head_value", GateShape::PerHeadValue}, {"layer", GateShape::PerLayer}});
    o.gate_sign = choice("infini.gate_sense", o.gate_sign, {{"memory", GateSign::Memory}, {"local", GateSign::Local}});
    o.memory_z_init = float(real("infini.memory_z_init", o.memory_z_init, false, 0.0, 1e30));
    o.memory_eps = float(real("infini.memory_eps", o.memory_eps, false, 1e-30, 1.0));
    o.memory_eps_mode = choice("infini.memory_eps_mode", o.memory_eps_mode, {{"clamp", EpsMode::Clamp}, {"add", EpsMode::Add}});
  }

  // The layer's RoPE (rope_freqs.weight included) and the gates, once the tensors are read.
  void finish_infini(LlamaWeights& w) {
    LlamaConfig& c = w.config;
    InfiniOptions& o = c.infini;
    o.rope = c.rope;
    o.memory = c.has_infini_keys;
    // Gates come for every layer or for none.
    std::size_t gated = 0;
    for (const LlamaLayerWeights& l : w.layers) gated += l.mem_gate ? 1 : 0;
    for (std::size_t i = 0; i < w.layers.size(); ++i)
      if ((gated > 0 || c.has_infini_keys) && !w.layers[i].mem_gate)
        fail("tensor 'blk." + std::to_string(i) + ".attn_mem_gate' is missing" +
             (c.has_infini_keys ? std::string(" (the file has infini.* keys)")
                                : std::string(" (other layers have one)")));
  }

  // ---- warnings ----

  void report_unused() {
    std::size_t unused = 0;
    for (const TensorView& t : f_.tensors()) {
      if (used_.contains(t.name)) continue;
      if (++unused <= kMaxUnusedListed) {
        std::string why = "is not used by the " + arch_ + " architecture; ignored";
        warn("tensor '" + printable(t.name, true, 64) + "' " + why);
      }
    }
    if (unused > kMaxUnusedListed) warn(std::to_string(unused - kMaxUnusedListed) + " more unused tensors ignored");
  }

  void scan() {
    for (const TensorView& t : f_.tensors()) {
      if (!used_.contains(t.name)) continue;
      NonFiniteCount bad;
      try {
        bad = count_non_finite(t);
      } catch (const Error& e) {  // a block's scale: the tensor is garbage
        fail(e.what());
      }
      if (bad.count > 0)
        warn("tensor '" + t.name + "' has " + std::to_string(bad.count) + " NaN/Inf values (first at element " +
             std::to_string(bad.first) + ")");
    }
  }

  const GgufFile& f_;
  std::vector<std::string>& warnings_;
  std::string arch_ = "llama";
  rope::RopeLayout rope_layout_ = rope::RopeLayout::Interleaved;
  bool tied_output_ = false;  // the architecture's logits use token_embd whatever the file holds
  std::set<std::string> used_;
};

}  // namespace

LlamaWeights load_llama(const GgufFile& file, std::vector<std::string>& warnings) {
  return Loader(file, warnings).load();
}

Vocabulary load_vocabulary(const GgufFile& file) {
  std::vector<std::string> warnings;
  return Loader(file, warnings).vocabulary();
}

LlamaWeights load_llama(const GgufFile& file) {
  std::vector<std::string> ignored;
  return load_llama(file, ignored);
}

}  // namespace infini::model
