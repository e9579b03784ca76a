// Random Llama GGUF files (see random_llama.hpp). Each tensor draws from its own splitmix64
// stream, seeded from the model seed and the tensor's name.
#include "reference/random_llama.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "infini/error.hpp"
#include "io/atomic_file.hpp"
#include "model/architecture.hpp"
#include "reference/synthetic_bpe_vocab.hpp"
#include "reference/synthetic_vocab.hpp"
#include "text/pre_tokenizer.hpp"

namespace infini::model {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// `count` values uniform in [mean - spread, mean + spread).
std::vector<float> uniform(uint64_t seed, std::string_view name, int64_t count, double mean, double spread) {
  uint64_t state = seed ^ fnv1a(name);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) {
    const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    x = static_cast<float>(mean + spread * (2.0 * u - 1.0));
  }
  return v;
}

void check(bool ok, const std::string& what) {
  if (!ok) throw Error("random llama: " + what);
}

int64_t head_dim_of(const RandomLlamaOptions& o) { return o.head_dim > 0 ? o.head_dim : o.embd / o.heads; }

// Every check the model's options get, made before anything is built: a shape is refused before
// its size is stated or its vocabulary made.
void check_options(const RandomLlamaOptions& o) {
  check(o.vocab >= 3 && o.vocab <= INT32_MAX, "vocab must be at least 3, got " + std::to_string(o.vocab));
  check(o.embd >= 1 && o.layers >= 1 && o.heads >= 1 && o.heads_kv >= 1 && o.ffn >= 1,
        "embd, layers, heads, kv-heads and ffn must be positive");
  check(o.embd <= (1 << 18) && o.layers <= 4096 && o.heads <= 4096 && o.ffn <= (1 << 20),
        "a dimension is beyond the loader's limits");
  check(o.head_dim > 0 || o.embd % o.heads == 0,
        "embd " + std::to_string(o.embd) + " is not a multiple of heads " + std::to_string(o.heads));
  check(o.heads % o.heads_kv == 0,
        "heads " + std::to_string(o.heads) + " is not a multiple of kv-heads " + std::to_string(o.heads_kv));
  check(o.head_dim >= 0 && o.head_dim <= 1024, "head dim must be 0 (embd / heads) to 1024");
  const int64_t head_dim = head_dim_of(o);
  check(head_dim % 2 == 0, "head dim " + std::to_string(head_dim) + " must be even for RoPE");
  check(o.segment >= 1 && o.segment <= (int64_t(1) << 30), "segment must be 1 to 2^30");
  check(o.context_length >= 1, "context length must be positive");
  check(find_architecture(o.arch).has_value(),
        "architecture '" + o.arch + "' is not one of " + architecture_names());
  check(o.tokenizer == "spm" || o.tokenizer == "gpt2", "tokenizer '" + o.tokenizer + "' is not spm or gpt2");
  if (o.tokenizer == "gpt2") {
    check(text::pre_tokenizer_named(o.pre).has_value(), "pre-tokenizer '" + o.pre + "' is not one infini knows");
    check(o.vocab >= 260, "a gpt2 (byte-level BPE) vocabulary needs at least 260 tokens (256 bytes, 4 control), not " +
                              std::to_string(o.vocab));
  }
}

// One tensor of the model: name, type, shape, and the uniform distribution its values come from
// (mean +- spread). The file's tensors, in file order, are exactly the plan's.
struct PlannedTensor {
  std::string name;
  ElementType type;
  std::vector<int64_t> shape;
  double mean, spread;
};

// The infini.* keys of the memory's conventions that differ from the defaults.
void write_memory_conventions(GgufWriter& w, const RandomLlamaOptions& o) {
  if (o.memory_positions == MemoryPositions::Rotated) w.set_string("infini.memory_rope", "after");
  if (o.memory_head_map == MemoryHeadMap::Modulo) w.set_string("infini.memory_head_map", "modulo");
  if (o.gate_shape != GateShape::PerHead)
    w.set_string("infini.gate_shape", o.gate_shape == GateShape::PerLayer ? "layer" : "head_value");
  if (o.gate_sense == GateSign::Local) w.set_string("infini.gate_sense", "local");
  if (o.memory_z_init != 0.0f) w.set_f32("infini.memory_z_init", o.memory_z_init);
  if (o.memory_eps != kMemoryEps) w.set_f32("infini.memory_eps", o.memory_eps);
  if (o.memory_eps_mode == EpsMode::Add) w.set_string("infini.memory_eps_mode", "add");
}

std::vector<PlannedTensor> tensor_plan(const RandomLlamaOptions& o) {
  std::vector<PlannedTensor> plan;
  constexpr double kStd = 0.02;
  const double kUniform = std::sqrt(3.0);  // spread of a uniform distribution with std 1
  const double proj_std = kStd / std::sqrt(2.0 * static_cast<double>(o.layers));
  const int64_t head_dim = head_dim_of(o);
  const Architecture arch = find_architecture(o.arch).value();  // checked by check_options
  const bool tied = o.tied || arch.tied_output;
  auto matrix = [&](const std::string& name, int64_t in, int64_t out, double std_dev) {
    const ElementType type =
        o.scheme ? quant_type_for(*o.scheme, name, uint64_t(in), QuantModel{o.layers, o.heads / o.heads_kv, tied})
                       .value_or(ElementType::F32)
                 : o.dtype;
    plan.push_back({name, type, {in, out}, 0.0, std_dev * kUniform});
  };
  auto f32 = [&](const std::string& name, int64_t width, double mean, double spread) {
    plan.push_back({name, ElementType::F32, {width}, mean, spread});
  };
  auto norm = [&](const std::string& name) { f32(name, o.embd, 1.0, 0.05); };
  const int64_t q = o.heads * head_dim, kv = o.heads_kv * head_dim;
  matrix("token_embd.weight", o.embd, o.vocab, kStd);
  for (int64_t i = 0; i < o.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    norm(b + "attn_norm.weight");
    matrix(b + "attn_q.weight", o.embd, q, kStd);
    matrix(b + "attn_k.weight", o.embd, kv, kStd);
    matrix(b + "attn_v.weight", o.embd, kv, kStd);
    if (arch.qkv_bias)
      for (const auto& [name, width] : {std::pair{"attn_q.bias", q}, std::pair{"attn_k.bias", kv}, std::pair{"attn_v.bias", kv}})
        f32(b + name, width, 0.0, 0.5);
    if (arch.qk_norm)
      for (const char* name : {"attn_q_norm.weight", "attn_k_norm.weight"}) f32(b + name, head_dim, 1.0, 0.3);
    matrix(b + "attn_output.weight", q, o.embd, proj_std);
    if (o.infini) {  // beta logits: gates between about 0.27 and 0.73
      if (o.gate_shape == GateShape::PerHeadValue)
        plan.push_back({b + "attn_mem_gate", ElementType::F32, {head_dim, o.heads}, 0.0, 1.0});
      else
        f32(b + "attn_mem_gate", o.gate_shape == GateShape::PerLayer ? 1 : o.heads, 0.0, 1.0);
    }
    norm(b + "ffn_norm.weight");
    matrix(b + "ffn_gate.weight", o.embd, o.ffn, kStd);
    matrix(b + "ffn_up.weight", o.embd, o.ffn, kStd);
    matrix(b + "ffn_down.weight", o.ffn, o.embd, proj_std);
  }
  norm("output_norm.weight");
  if (!tied) matrix("output.weight", o.embd, o.vocab, kStd);
  return plan;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

uint64_t values_of(const PlannedTensor& t) {
  uint64_t count = 1;
  for (int64_t d : t.shape)
    if (__builtin_mul_overflow(count, uint64_t(d), &count)) return UINT64_MAX;
  return count;
}

// Bytes of a planned tensor's data in the file, padded to the alignment (UINT64_MAX on overflow).
uint64_t file_bytes(const PlannedTensor& t) {
  const std::optional<uint64_t> bytes = element_bytes(t.type, values_of(t));
  if (!bytes || *bytes > UINT64_MAX - gguf::kDefaultAlignment) return UINT64_MAX;
  return (*bytes + gguf::kDefaultAlignment - 1) / gguf::kDefaultAlignment * gguf::kDefaultAlignment;
}

void add_planned(GgufWriter& w, const RandomLlamaOptions& o, const PlannedTensor& t) {
  w.add_tensor(t.name, t.type, t.shape, uniform(o.seed, t.name, int64_t(values_of(t)), t.mean, t.spread));
}

// The model's metadata and vocabulary, without tensors.
GgufWriter random_llama_header(const RandomLlamaOptions& o) {
  check_options(o);
  const int64_t head_dim = head_dim_of(o);
  GgufWriter w;
  w.set_string("general.architecture", o.arch);
  const auto key = [&](const std::string& name) { return o.arch + "." + name; };
  w.set_string("general.name", "infini random llama");
  // llama.cpp's file types: 0 all f32, 1 mostly f16, 2 mostly Q4_0, 7 mostly Q8_0, 32 mostly bf16.
  const uint32_t file_type = o.scheme ? quant_scheme_file_type(*o.scheme)
                             : o.dtype == ElementType::F16  ? 1u
                             : o.dtype == ElementType::BF16 ? 32u
                             : o.dtype == ElementType::Q4_0 ? 2u
                             : o.dtype == ElementType::Q8_0 ? 7u
                                                            : 0u;
  w.set_u32("general.file_type", file_type);
  w.set_u32(key("context_length"), static_cast<uint32_t>(std::min<int64_t>(o.context_length, UINT32_MAX)));
  w.set_u32(key("embedding_length"), static_cast<uint32_t>(o.embd));
  w.set_u32(key("block_count"), static_cast<uint32_t>(o.layers));
  w.set_u32(key("feed_forward_length"), static_cast<uint32_t>(o.ffn));
  w.set_u32(key("attention.head_count"), static_cast<uint32_t>(o.heads));
  w.set_u32(key("attention.head_count_kv"), static_cast<uint32_t>(o.heads_kv));
  w.set_f32(key("attention.layer_norm_rms_epsilon"), o.rms_eps);
  w.set_f32(key("rope.freq_base"), static_cast<float>(o.rope_base));
  w.set_u32(key("rope.dimension_count"), static_cast<uint32_t>(head_dim));
  if (o.head_dim > 0) {  // heads * head_dim need not be embd (Qwen3's shapes)
    w.set_u32(key("attention.key_length"), static_cast<uint32_t>(head_dim));
    w.set_u32(key("attention.value_length"), static_cast<uint32_t>(head_dim));
  }
  if (o.infini) {
    w.set_u32("infini.segment_length", static_cast<uint32_t>(o.segment));
    w.set_string("infini.memory_update", o.update == UpdateRule::Linear ? "linear" : "delta");
    w.set_string("infini.first_segment", o.first_segment == FirstSegment::Local ? "local" : "mix");
    write_memory_conventions(w, o);
  }

  if (o.tokenizer == "gpt2") {
    const std::optional<text::PreTokenizer> pre = text::pre_tokenizer_named(o.pre);
    check(pre.has_value(), "pre-tokenizer '" + o.pre + "' is not one infini knows");
    const SyntheticBpeVocab vocab = synthetic_bpe_vocab(o.vocab, *pre);
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", o.pre);
    w.set_string_array("tokenizer.ggml.tokens", vocab.tokens);
    w.set_i32_array("tokenizer.ggml.token_type", vocab.types);
    w.set_string_array("tokenizer.ggml.merges", vocab.merges);
    w.set_u32("tokenizer.ggml.bos_token_id", uint32_t(vocab.bos));
    w.set_u32("tokenizer.ggml.eos_token_id", uint32_t(vocab.eos));
    w.set_bool("tokenizer.ggml.add_bos_token", text::adds_bos_by_default(*pre));
  } else {
    check(o.tokenizer == "spm", "tokenizer '" + o.tokenizer + "' is not spm or gpt2");
    const SyntheticVocab vocab = synthetic_spm_vocab(o.vocab);
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_string_array("tokenizer.ggml.tokens", vocab.tokens);
    w.set_f32_array("tokenizer.ggml.scores", vocab.scores);
    w.set_i32_array("tokenizer.ggml.token_type", vocab.types);
    w.set_u32("tokenizer.ggml.unknown_token_id", 0);
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_u32("tokenizer.ggml.eos_token_id", 2);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
  }
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  if (!o.chat_template.empty()) w.set_string("tokenizer.chat_template", o.chat_template);
  return w;
}

}  // namespace

GgufWriter random_llama(const RandomLlamaOptions& o) {
  GgufWriter w = random_llama_header(o);
  for (const PlannedTensor& t : tensor_plan(o)) add_planned(w, o, t);
  return w;
}

std::vector<std::string> random_model_architectures() {
  std::vector<std::string> out;
  for (const Architecture& a : kArchitectures) out.emplace_back(a.name);
  return out;
}

RandomModelSize random_llama_size(const RandomLlamaOptions& options) {
  check_options(options);
  RandomModelSize size;
  for (const PlannedTensor& t : tensor_plan(options)) {
    size.data_bytes = saturating_add(size.data_bytes, file_bytes(t));
    size.parameters = saturating_add(size.parameters, values_of(t));
  }
  return size;
}

RandomModelFile write_random_llama(const RandomLlamaOptions& options, const std::filesystem::path& path,
                                   const RandomModelProgress& progress) {
  if (!progress) {
    const GgufWriter writer = random_llama(options);
    const uint64_t bytes = writer.write(path);
    return {bytes, writer.parameter_count()};
  }
  // The same file, with progress over making the tensors and then writing them.
  const uint64_t data = random_llama_size(options).data_bytes, total = 2 * data;
  uint64_t done = 0;
  GgufWriter writer = random_llama_header(options);
  for (const PlannedTensor& t : tensor_plan(options)) {
    add_planned(writer, options, t);
    progress(done += file_bytes(t), total);
  }
  const uint64_t header = writer.file_size() - data;
  io::AtomicFile file(path);
  writer.emit([&](std::span<const std::byte> piece) {
    file.write(piece);
    if (file.written() > header) progress(data + std::min<uint64_t>(file.written() - header, data), total);
  });
  file.commit();
  return {file.written(), writer.parameter_count()};
}

}  // namespace infini::model
