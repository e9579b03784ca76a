// infini make-model: writes a random-weight Llama GGUF of any shape (reference/random_model.hpp),
// for tests, benchmarks and demos that need a model but no download. Prints one line with the
// file size and the parameter count.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "command.hpp"
#include "reference/random_model.hpp"

namespace infini::cli {
namespace {

struct MakeModelArgs {
  std::string out;
  model::RandomLlamaOptions options;
  bool no_infini = false;
  std::string dtype = "f32";
};

int run_make_model(MakeModelArgs& args) {
  args.options.infini = !args.no_infini;
  if (const std::optional<QuantScheme> scheme = quant_scheme_named(args.dtype)) args.options.scheme = scheme;
  else args.options.dtype = *element_type_from_name(args.dtype);  // the option's check admits f32 and f16 only
  const model::RandomModelFile file = model::write_random_llama(args.options, args.out);
  const model::RandomLlamaOptions& o = args.options;
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
                     "Matrix storage: f32|f16, or a quantization scheme q8_0|q4_0|q4_k_m|q5_k_m|q6_k (see infini quantize; "
                     "norms and gates stay f32; default f32)")
          ->check(CLI::IsMember({"f32", "f16", "q8_0", "q4_0", "q4_k_m", "q5_k_m", "q6_k"}));
      app.add_option("--seed", o.seed, "PRNG seed (same seed, same file)")->capture_default_str();
      app.add_option("--arch", o.arch,
                     "general.architecture: llama, qwen2 (Q/K/V biases, NEOX RoPE) or qwen3 (per-head Q/K norms, NEOX RoPE)")
          ->check(CLI::IsMember({"llama", "qwen2", "qwen3"}))
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
      const std::map<std::string, UpdateRule> updates{{"linear", UpdateRule::Linear}, {"delta", UpdateRule::Delta}};
      app.add_option("--update", o.update, "infini.memory_update: linear|delta (default delta)")
          ->transform(CLI::CheckedTransformer(updates));
      const std::map<std::string, FirstSegment> firsts{{"mix", FirstSegment::Mix}, {"local", FirstSegment::Local}};
      app.add_option("--first-segment", o.first_segment, "infini.first_segment: mix|local (default mix)")
          ->transform(CLI::CheckedTransformer(firsts));
      app.add_flag("--no-infini", args->no_infini, "A plain Llama file: no infini.* keys, no attn_mem_gate tensors");
      return [args] { return run_make_model(*args); };
    }};

}  // namespace
}  // namespace infini::cli
