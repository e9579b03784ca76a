#include "infini/model.hpp"

#include <algorithm>

#include "api/context_access.hpp"
#include "formats/gguf_digest.hpp"
#include "model/llama_loader.hpp"
#include "model/llama_weights_check.hpp"
#include "api/model_impl.hpp"

namespace infini {
namespace {

// Cuts a plain file's default context (its context_length) to what half of the device memory
// left after the weights holds, and says so once.
int64_t fitting_context(const Context& context, const model::GgufFile& file, const model::LlamaConfig& c,
                        int64_t wanted, std::vector<std::string>& warnings) {
  uint64_t free = 0;
  for (const vk::Device* d : ContextAccess::devices(context)) free += d->free_device_local_bytes();
  const uint64_t weights = file.bytes().size();
  const uint64_t budget = free > weights ? (free - weights) / 2 : 0;
  const uint64_t per_token = model::context_token_bytes(c);
  const int64_t fits = int64_t(std::min<uint64_t>(budget / std::max<uint64_t>(per_token, 1), uint64_t(wanted)));
  if (fits >= wanted) return wanted;
  const int64_t cut = std::max<int64_t>(fits / 256 * 256, std::min<int64_t>(wanted, 256));
  warnings.push_back(file.name() + ": its context of " + std::to_string(wanted) + " tokens would take " +
                     std::to_string(per_token * uint64_t(wanted) >> 20) + " MiB of device memory, more than half of the " +
                     std::to_string((free - std::min(free, weights)) >> 20) + " MiB left after the weights: it runs with " +
                     std::to_string(cut) + " (set -c/--ctx-size; past the context the stream slides)");
  return cut;
}

// The stream options the file asks for, overridden by the caller's (as `infini run` does).
model::RunnerOptions resolve(const Context& context, const model::GgufFile& file, const model::LlamaConfig& c,
                             const ModelOptions& options, std::vector<std::string>& warnings) {
  const std::string& name = file.name();
  if (options.segment < 0) throw Error(name + ": segment length " + std::to_string(options.segment) + " is negative");
  if (options.context < 0) throw Error(name + ": context " + std::to_string(options.context) + " is negative");
  if (options.max_piece < 1) throw Error(name + ": max_piece must be at least 1");
  if (options.decode_chain > model::LayerStage::kMaxChain)
    throw Error(name + ": decode_chain must be at most " + std::to_string(model::LayerStage::kMaxChain));
  model::RunnerOptions o = model::resolve_runner_options(c, options.memory, options.segment, options.max_piece,
                                                         options.context, options.sinks);
  if (o.infini.sliding) {
    if (o.infini.segment > kMaxSegment / 2)
      throw Error(name + ": context " + std::to_string(o.infini.segment) + " is more than the " +
                  std::to_string(kMaxSegment / 2) + " infini takes");
    if (options.context == 0 && options.segment == 0)
      o.infini.segment = fitting_context(context, file, c, o.infini.segment, warnings);
    if (o.infini.sinks < 0 || o.infini.sinks >= o.infini.segment)
      throw Error(name + ": " + std::to_string(o.infini.sinks) + " sinks do not fit a context of " +
                  std::to_string(o.infini.segment) + " tokens (0 to " + std::to_string(o.infini.segment - 1) + ")");
  }
  o.tune = model::tune_mode_from_environment();
  if (options.max_batch < 1 || options.max_batch > kMostMaxBatch)
    throw Error(name + ": max_batch must be 1.." + std::to_string(kMostMaxBatch) + ", got " +
                std::to_string(options.max_batch));
  o.decode_chain = options.decode_chain;
  o.max_batch = options.max_batch;
  return o;
}

ModelInfo describe(const model::LlamaWeights& w, const model::RunnerOptions& o, const std::string& name) {
  const model::LlamaConfig& c = w.config;
  ModelInfo i;
  i.name = name;
  i.vocab = c.vocab, i.embd = c.embd, i.layers = c.layers, i.heads = c.heads, i.heads_kv = c.heads_kv;
  i.head_dim = c.head_dim, i.ffn = c.ffn, i.context_length = c.context_length;
  i.segment = o.infini.segment;
  i.context = o.infini.sliding ? o.infini.segment : 0;
  i.sinks = o.infini.sliding ? o.infini.sinks : 0;
  i.state_bytes = model::stream_state_bytes(c, o.infini);
  i.weight_bytes = model::device_weight_bytes(w, {0, c.layers});
  i.memory = o.infini.memory;
  i.has_infini_keys = c.has_infini_keys;
  i.bos = w.vocab.bos, i.eos = w.vocab.eos, i.add_bos = w.vocab.add_bos;
  i.chat_template = w.vocab.chat_template;
  return i;
}

// Loads in member order; the weights are checked here so that a bad file fails when it is
// opened, not when the first session uploads it.
model::LlamaWeights load(const model::GgufFile& file, std::vector<std::string>& warnings) {
  model::LlamaWeights w = model::load_llama(file, warnings);
  model::check_llama_weights(w);
  return w;
}

// The file's tokenizer; a vocabulary kind infini does not know leaves the model usable on token
// ids, with a warning.
std::unique_ptr<const model::Tokenizer> tokenizer_for(const model::GgufFile& file, const model::Vocabulary& v,
                                                      std::vector<std::string>& warnings) {
  if (!v.model.empty() && v.model != "llama" && v.model != "gpt2") {
    warnings.push_back(file.name() + ": tokenizer.ggml.model is '" + v.model +
                       "', which infini does not tokenize; the model runs on token ids only");
    return nullptr;
  }
  try {
    return model::make_tokenizer(v);
  } catch (const Error& e) {
    throw Error(file.name() + ": " + e.what());
  }
}

}  // namespace

std::string digest_hex(uint64_t digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, digest >>= 4) s[size_t(i)] = kHex[digest & 15];
  return s;
}

std::string_view memory_mode_name(MemoryMode mode) noexcept {
  switch (mode) {
    case MemoryMode::Auto: return "auto";
    case MemoryMode::On: return "on";
    case MemoryMode::Off: return "off";
  }
  return "?";
}

std::optional<MemoryMode> memory_mode_from_name(std::string_view name) noexcept {
  for (MemoryMode m : {MemoryMode::Auto, MemoryMode::On, MemoryMode::Off})
    if (memory_mode_name(m) == name) return m;
  return std::nullopt;
}

Model::Impl::Impl(Context& c, const std::filesystem::path& path, const ModelOptions& options)
    : context(c),
      file(std::make_unique<model::GgufFile>(path)),
      weights(load(*file, warnings)),
      runner(resolve(c, *file, weights.config, options, warnings)),
      info(describe(weights, runner, file->name())),
      tokenizer(tokenizer_for(*file, weights.vocab, warnings)) {
  info.digest = model::gguf_digest(*file);
  // Memory asked for on a file trained without it: say what that means, so an untrained memory
  // is not taken for a trained one.
  if (runner.infini.memory && !weights.layers.empty() && !weights.layers.front().mem_gate)
    warnings.push_back(file->name() +
                       ": memory is on but the file has no trained gates (blk.N.attn_mem_gate): every head mixes "
                       "an untrained memory with its local attention at g = 1/2, so the outputs are not the plain "
                       "model's; use --memory off for the model as trained");
  // Without shares the split is made per session, from the memory free when it uploads.
  if (!options.split.empty())
    layers_per_device = context.layers_per_device(weights.config.layers, options.split);
}

Model::Model(Context& context, const std::filesystem::path& gguf, const ModelOptions& options)
    : impl_(std::make_shared<const Impl>(context, gguf, options)) {}

Model::~Model() = default;
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const ModelInfo& Model::info() const noexcept { return impl_->info; }
const std::vector<std::string>& Model::warnings() const noexcept { return impl_->warnings; }
DecodeBatchStats Model::decode_batches() const { return impl_->batchers.stats(); }

const model::Tokenizer& Model::Impl::tokens() const {
  if (!tokenizer)
    throw Error(file->name() + ": tokenizer.ggml.model '" + weights.vocab.model + "' is not a vocabulary infini tokenizes");
  return *tokenizer;
}

std::vector<int32_t> Model::tokenize(std::string_view text, bool add_bos, bool parse_special) const {
  return impl_->tokens().encode(text, add_bos, parse_special);
}

std::string Model::detokenize(std::span<const int32_t> tokens) const { return impl_->tokens().decode(tokens); }

std::string Model::piece(int32_t token) const { return impl_->tokens().piece(token); }

}  // namespace infini
