// infini run: streams text of any length through a GGUF model (segment by segment, progress on
// stderr), then generates -n tokens and prints them to stdout as they come.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "command.hpp"
#include "model/sampler.hpp"
#include "model/spm_tokenizer.hpp"
#include "model_options.hpp"
#include "stream/session_state.hpp"

namespace infini::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::string prompt, file;
  int generate = 64;
  model::SamplerOptions sampling;
  bool quiet = false;
  std::string load_state, save_state;
};

std::string read_input(const RunArgs& args) {
  if (!args.prompt.empty() && !args.file.empty()) throw Error("give at most one of -p and -f");
  if (!args.prompt.empty()) return args.prompt;
  std::ostringstream text;
  if (!args.file.empty()) {
    std::ifstream in(args.file, std::ios::binary);
    if (!in) throw Error(args.file + ": cannot open");
    text << in.rdbuf();
  } else {
    text << std::cin.rdbuf();
  }
  return text.str();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_text(const RunArgs& args) {
  const std::string text = read_input(args);
  OpenModel m = open_model(args.model);
  const model::SpmTokenizer tokenizer(m.weights.vocab);
  const std::vector<int32_t> ids = tokenizer.encode(text, tokenizer.add_bos());
  if (ids.empty()) throw Error("the input is empty and the vocabulary has no BOS token to start from");
  model::Sampler sampler(args.sampling);
  model::LlamaRunner& runner = *m.runner;
  const int64_t segment = runner.options().infini.segment;
  // A restored session continues its stream: the new text follows what it has already read.
  if (!args.load_state.empty()) runner.restore_state(stream::read_session_state(args.load_state));

  // Prefill one segment at a time so progress can be shown for inputs of any length.
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> logits;
  for (size_t done = 0; done < ids.size();) {
    const size_t piece = std::min(ids.size() - done, size_t(segment - runner.tokens_seen() % segment));
    logits = runner.forward(std::span<const int32_t>(ids).subspan(done, piece), false);
    done += piece;
    if (!args.quiet)
      std::fprintf(stderr, "\rprefill %zu/%zu tokens, %lld segments done, %.1f tokens/s", done, ids.size(),
                   static_cast<long long>(runner.tokens_seen() / segment), double(done) / seconds_since(t0));
  }
  if (!args.quiet) std::fprintf(stderr, "\n");

  const auto t1 = std::chrono::steady_clock::now();
  int produced = 0;
  for (; produced < args.generate; ++produced) {
    const int32_t next = sampler.sample(logits);
    if (next == tokenizer.eos()) break;
    const std::string& piece = tokenizer.piece(next);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    logits = runner.forward(std::span<const int32_t>(&next, 1), false);
  }
  std::printf("\n");
  if (!args.save_state.empty()) stream::write_session_state(args.save_state, runner.save_state());
  if (!args.quiet)
    std::fprintf(stderr, "generated %d tokens, %.2f tokens/s; stream length %lld tokens\n", produced,
                 produced / seconds_since(t1), static_cast<long long>(runner.tokens_seen()));
  return 0;
}

const RegisterCommand registration{
    "run", "Stream text of any length through a GGUF model, then generate", [](CLI::App& app) {
      auto args = std::make_shared<RunArgs>();
      add_model_options(app, args->model);
      app.add_option("-p,--prompt", args->prompt, "Input text");
      app.add_option("-f,--file", args->file, "Read the input text from a file (default: stdin)");
      app.add_option("-n,--n-predict", args->generate, "Tokens to generate (stops early at EOS)")
          ->check(CLI::Range(0, 1 << 24));
      app.add_option("--temp", args->sampling.temperature, "Sampling temperature (0: greedy)")->default_val(0.8);
      app.add_option("--top-k", args->sampling.top_k, "Keep the k most likely tokens (0: all)")->default_val(40);
      app.add_option("--top-p", args->sampling.top_p, "Keep the smallest set reaching this probability")
          ->default_val(0.95);
      app.add_option("--seed", args->sampling.seed, "Sampling seed")->default_val(0);
      app.add_flag("--quiet", args->quiet, "No progress on stderr");
      app.add_option("--load-state", args->load_state, "Continue the stream saved in this state file");
      app.add_option("--save-state", args->save_state, "Save the stream state here at the end (atomic write)");
      return [args] { return run_text(*args); };
    }};

}  // namespace
}  // namespace infini::cli
