// infini make-model: writes a random-weight Llama GGUF of any shape (reference/random_model.hpp),
// for tests, benchmarks and demos that need a model but no download. States the size on stderr
// first, refuses a file the disk (or the memory it is built in) cannot hold, shows progress on
// large files, and prints one line with the file size and the parameter count.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "command.hpp"
#include "memory_options.hpp"
#include "option_checks.hpp"
#include "reference/random_model.hpp"
#include "text_file.hpp"

namespace infini::cli {
namespace {

struct MakeModelArgs {
  std::string out;
  model::RandomLlamaOptions options;
  bool no_infini = false;
  std::string dtype = "f32";
};

// Files larger than this show their progress.
constexpr uint64_t kProgressBytes = uint64_t(256) << 20;

// "331.0 MiB", "1.5 TiB".
std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 6) v /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit ? "%.1f %s" : "%.0f %s", v, units[unit]);
  return text;
}

// The model's size against what holds it: the free space of the output's filesystem, and this
// machine's memory (the file is built in memory before it is written).
void check_room(const std::string& out, uint64_t bytes, const std::string& shape) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(out).parent_path().empty() ? fs::path(".") : fs::path(out).parent_path();
  std::error_code ec;
  const fs::space_info space = fs::space(folder, ec);
  if (!ec && bytes > space.available)
    throw Error(out + ": the model takes " + human_bytes(bytes) + " (" + shape + "), more than the " +
                human_bytes(space.available) + " free on " + folder.string());
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 && bytes / uint64_t(page) > uint64_t(pages))
    throw Error(out + ": the model takes " + human_bytes(bytes) + " (" + shape + "), more than this machine's " +
                human_bytes(uint64_t(pages) * uint64_t(page)) + " of memory, which make-model builds the file in");
}

// --dtype's values: the float types a matrix may be stored in, and every quantization scheme.
std::vector<std::string> dtype_names() {
  std::vector<std::string> names{"f32", "f16", "bf16"};
  for (QuantScheme s : quant_schemes()) names.emplace_back(quant_scheme_name(s));
  return names;
}

int run_make_model(MakeModelArgs& args) {
  args.options.infini = !args.no_infini;
  if (const std::optional<QuantScheme> scheme = quant_scheme_named(args.dtype)) args.options.scheme = scheme;
  else args.options.dtype = *element_type_from_name(args.dtype);  // the option's check admits f32, f16 and bf16 only
  check_output_path(args.out, "--out");
  const model::RandomLlamaOptions& o = args.options;
  // Sized from the shape alone, before the vocabulary or any value is made.
  const model::RandomModelSize size = model::random_llama_size(o);
  const std::string shape = "vocab " + std::to_string(o.vocab) + " x embd " + std::to_string(o.embd) + ", " +
                            std::to_string(o.layers) + " layers, ffn " + std::to_string(o.ffn) + ", " + args.dtype;
  check_room(args.out, size.data_bytes, shape);
  std::fprintf(stderr, "writing %s: %s of weights (%s)\n", args.out.c_str(), human_bytes(size.data_bytes).c_str(),
               shape.c_str());
  int shown = -1;
  const model::RandomModelProgress progress = [&](uint64_t done, uint64_t total) {
    const int percent = int(100 * double(done) / double(total));
    if (percent == shown) return;
    shown = percent;
    std::fprintf(stderr, "\rmaking %s: %d%%", args.out.c_str(), percent);
    std::fflush(stderr);
  };
  const model::RandomModelFile file =
      model::write_random_llama(o, args.out, size.data_bytes > kProgressBytes ? progress : model::RandomModelProgress());
  if (shown >= 0) std::fprintf(stderr, "\n");
  std::printf("%s: %" PRIu64 " bytes, %" PRIu64 " parameters (%s, vocab %" PRId64 ", embd %" PRId64 ", %" PRId64
              " layers, %" PRId64 "/%" PRId64 " heads, ffn %" PRId64 "%s%s)\n",
              args.out.c_str(), file.bytes, file.parameters, args.dtype.c_str(), o.vocab, o.embd,
              o.layers, o.heads, o.heads_kv, o.ffn, o.tied ? ", tied output" : "", o.infini ? ", infini" : "");
  return 0;
}

const RegisterCommand registration{
    "make-model", "Write a random-weight Llama GGUF of any shape (synthetic SentencePiece vocabulary)",
    [](CLI::App& app) {
      auto args = std::make_shared<MakeModelArgs>();
      model::RandomLlamaOptions& o = args->options;
      app.add_option("--out", args->out, "Output .gguf file (written atomically)")->required();
      app.add_option("--vocab", o.vocab, "Vocabulary size (>= 3; 259 covers the byte tokens)")->capture_default_str();
      app.add_option("--embd", o.embd, "Embedding width")->capture_default_str();
      app.add_option("--layers", o.layers, "Transformer blocks")->capture_default_str();
      app.add_option("--heads", o.heads, "Query heads (divides --embd)")->capture_default_str();
      app.add_option("--kv-heads", o.heads_kv, "Key/value heads (divides --heads)")->capture_default_str();
      app.add_option("--ffn", o.ffn, "Feed-forward width")->capture_default_str();
      app.add_option("--head-dim", o.head_dim, "Head dim when heads * head dim is not --embd (0: embd / heads), as in Qwen3")
          ->capture_default_str();
      app.add_option("--context", o.context_length, "llama.context_length (informational)")->capture_default_str();
      app.add_option("--dtype", args->dtype,
                     "Matrix storage: f32|f16|bf16, or a quantization scheme q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl|iq4_xs|q4_k_m|q5_k_m|q6_k (see infini quantize; "
                     "norms and gates stay f32; default f32)")
          ->check(CLI::IsMember(dtype_names()));
      app.add_option("--seed", o.seed, "PRNG seed (same seed, same file)")->capture_default_str();
      app.add_option("--arch", o.arch,
                     "general.architecture (its tensors and RoPE layout: docs/design.md, \"Adding an architecture\")")
          ->check(CLI::IsMember(model::random_model_architectures()))
          ->capture_default_str();
      app.add_option("--tokenizer", o.tokenizer,
                     "Vocabulary: spm (SentencePiece, synthetic pieces) or gpt2 (byte-level BPE with merges learned "
                     "from a built-in text; --vocab >= 260)")
          ->check(CLI::IsMember({"spm", "gpt2"}))
          ->capture_default_str();
      app.add_option("--chat-template", o.chat_template, "tokenizer.chat_template text to write (a Jinja template)");
      app.add_option("--pre", o.pre, "tokenizer.ggml.pre of a gpt2 vocabulary: llama-bpe|qwen2|gpt-2|default")
          ->check(CLI::IsMember({"llama-bpe", "llama3", "qwen2", "gpt-2", "default"}))
          ->capture_default_str();
      app.add_flag("--tied", o.tied, "No output.weight: the output projection reuses token_embd");
      app.add_option("--segment", o.segment, "infini.segment_length")->capture_default_str();
      add_choice_option(app, "--update", o.update, {{"linear", UpdateRule::Linear}, {"delta", UpdateRule::Delta}},
                        "infini.memory_update (default delta)");
      add_choice_option(app, "--first-segment", o.first_segment, {{"mix", FirstSegment::Mix}, {"local", FirstSegment::Local}},
                        "infini.first_segment (default mix)");
      // The memory's conventions: infini.memory_rope, .memory_head_map, .gate_shape, .gate_sense, ...
      add_memory_convention_options(app, {o.memory_positions, o.memory_head_map, o.gate_shape, o.memory_z_init,
                                          o.memory_eps, o.memory_eps_mode});
      add_choice_option(app, "--gate-sense", o.gate_sense, {{"memory", GateSign::Memory}, {"local", GateSign::Local}},
                        "infini.gate_sense: what sigmoid(beta) weights (default memory)");
      app.add_flag("--no-infini", args->no_infini, "A plain Llama file: no infini.* keys, no attn_mem_gate tensors");
      return [args] { return run_make_model(*args); };
    }};

}  // namespace
}  // namespace infini::cli
