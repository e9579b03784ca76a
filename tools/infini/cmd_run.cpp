// infini run: streams text of any length through a GGUF model (segment by segment, progress on
// stderr), then generates -n tokens and prints them to stdout as they come. Long prefills can
// checkpoint their state every K segments and be resumed from the last checkpoint after a crash.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <unistd.h>

#include "chat_loop.hpp"
#include "command.hpp"
#include "infini/chat_template.hpp"
#include "infini/npy.hpp"
#include "model_options.hpp"
#include "option_checks.hpp"
#include "stopwatch.hpp"
#include "stream_state_input.hpp"
#include "text_file.hpp"

namespace infini::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::string prompt, file;
  bool prompt_given = false;  // -p, even empty
  int generate = 64;
  SamplingOptions sampling;
  bool seed_given = false;  // else a random seed, printed
  bool quiet = false;
  std::string load_state, save_state;
  int64_t checkpoint_every = 0;  // segments between checkpoints during prefill (0: none)
  bool resume = false;           // the input restarts the stream the state was saved from
  std::string logits_out;
  bool chat = false;
  std::string chat_template, system;
  bool stop_at_full_context = false;  // --ctx-full stop: llama.cpp's behaviour without context shift
};

std::string read_input(const RunArgs& args) {
  if (args.prompt_given) return args.prompt;
  if (!args.file.empty()) return read_text_file(args.file);
  // Someone at a terminal who gave no prompt would otherwise wait on a silent program.
  if (isatty(STDIN_FILENO))
    std::fprintf(stderr, "reading the prompt from stdin (end with Ctrl-D; -p TEXT or -f FILE to give it)\n");
  std::ostringstream text;
  text << std::cin.rdbuf();
  return text.str();
}

// Every option checked before any input is read or any model opened: a long prefill must not end
// in a refusal it could have started with.
void check_run_args(RunArgs& args) {
  if (args.prompt_given && !args.file.empty()) throw UsageError("give at most one of -p and -f");
  if (args.checkpoint_every > 0 && args.save_state.empty()) throw UsageError("--checkpoint-every needs --save-state");
  if (args.resume && args.load_state.empty()) throw UsageError("--resume needs --load-state");
  if (!args.save_state.empty()) check_output_path(args.save_state, "--save-state");
  if (!args.logits_out.empty()) check_output_path(args.logits_out, "--logits-out");
  check_model_args(args.model);
  if (!args.chat_template.empty() && !chat_template_named(args.chat_template))
    throw UsageError("--chat-template '" + args.chat_template + "' is not one of chatml, llama3, gemma, mistral-v1, "
                     "mistral-v3, mistral-v7, llama2, llama2-sys");
  if (!args.seed_given) {
    std::random_device random;
    args.sampling.seed = (uint64_t(random()) << 32) ^ random();
  }
}

// `seed N` on stderr where the seed decides the tokens, so that --seed N repeats them.
void show_seed(const RunArgs& args) {
  if (!args.quiet && args.sampling.temperature > 0)
    std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(args.sampling.seed));
}

// Where a resumed run picks up its input: after the tokens the state already holds.
size_t resume_point(const std::string& state_file, int64_t held, size_t input) {
  if (held >= int64_t(input))
    throw Error(state_file + ": the state already holds " + std::to_string(held) + " tokens and the input has " +
                std::to_string(input) + "; nothing is left to resume");
  return size_t(held);
}

int run_chat_mode(const RunArgs& args) {
  if (args.prompt_given || !args.load_state.empty() || !args.save_state.empty() || args.resume ||
      args.checkpoint_every > 0 || !args.logits_out.empty())
    throw UsageError("--chat reads messages from stdin (-f FILE for a file of them) and takes no -p or state options");
  std::istringstream file(args.file.empty() ? std::string() : read_text_file(args.file));
  OpenModel m = open_model(args.model);
  check_ctx_full(args.stop_at_full_context, args.model.model, m.model->info());
  const ChatArgs chat{args.chat_template, args.system,          args.generate,
                      args.sampling,      args.quiet,           args.stop_at_full_context};
  return run_chat(m, chat, args.file.empty() ? std::cin : file);
}

// What the stream keeps, and the fixed device memory that takes at any length.
void describe_stream(const ModelInfo& info) {
  const bool mib = info.state_bytes >= (1u << 20);
  const double size = double(info.state_bytes) / double(mib ? 1 << 20 : 1 << 10);
  const char* unit = mib ? "MiB" : "KiB";
  if (info.context > 0)
    std::fprintf(stderr, "context %lld tokens, then sliding with %lld sinks; stream state %.1f %s at any length\n",
                 static_cast<long long>(info.context), static_cast<long long>(info.sinks), size, unit);
  else
    std::fprintf(stderr, "segments of %lld tokens, memory %s; stream state %.1f %s at any length\n",
                 static_cast<long long>(info.segment), info.memory ? "on" : "off", size, unit);
}

int run_text(RunArgs& args) {
  check_run_args(args);
  if (args.chat) return run_chat_mode(args);
  const std::string text = read_input(args);
  // A restored session continues its stream: the new text follows what it has already read, with
  // no BOS in the middle, unless --resume says the input is that stream again from its start.
  const bool continues = !args.load_state.empty() && !args.resume;
  if (continues && text.empty() && !args.logits_out.empty())
    throw UsageError("--logits-out: the input is empty, so nothing is fed after --load-state and no logits are new");
  OpenModel m = open_model(args.model);
  Session& session = *m.session;
  const std::vector<int32_t> ids = m.model->tokenize(text, m.model->info().add_bos && !continues);
  if (ids.empty() && !continues) throw Error("the input is empty and the vocabulary has no BOS token to start from");
  if (ids.empty() && !args.logits_out.empty())
    throw UsageError("--logits-out: the input has no tokens, so nothing is fed after --load-state");
  const int64_t segment = session.segment();
  const bool sliding = m.model->info().context > 0;
  check_ctx_full(args.stop_at_full_context, args.model.model, m.model->info());
  size_t done = 0;
  if (!args.load_state.empty()) {
    restore_stream_state(session, args.load_state);  // a state file or a served session's record
    if (args.resume) done = resume_point(args.load_state, session.tokens_seen(), ids.size());
  }

  // --ctx-full stop: the stream may not pass the context (no input past it, generation ends at it).
  const int64_t context = m.model->info().context;
  if (args.stop_at_full_context && int64_t(ids.size() - done) + session.tokens_seen() > context)
    throw Error("--ctx-full stop: the input makes a stream of " +
                std::to_string(int64_t(ids.size() - done) + session.tokens_seen()) +
                " tokens, more than the context of " + std::to_string(context));
  if (!args.quiet) describe_stream(m.model->info());
  // Prefill in pieces that end on segment boundaries, so progress can be shown for inputs of any
  // length and a checkpoint there resumes into exactly the same pieces.
  const auto t0 = std::chrono::steady_clock::now();
  const size_t resumed = done;
  int64_t checkpoints = session.tokens_seen() / segment / std::max<int64_t>(args.checkpoint_every, 1);
  // An empty input after --load-state feeds nothing: generation goes on from the state as it is.
  const std::vector<float> logits = ids.empty() ? std::vector<float>() :
      session.feed(std::span<const int32_t>(ids).subspan(done), [&](const FeedProgress& p) {
        const int64_t segments = p.tokens_seen / segment;
        // Never checkpoint the whole input: a run resumed from it would have no logits to continue.
        if (args.checkpoint_every > 0 && p.at_segment_boundary && segments / args.checkpoint_every > checkpoints &&
            p.fed < p.total) {
          session.save(args.save_state);
          checkpoints = segments / args.checkpoint_every;
        }
        if (!args.quiet && sliding)
          std::fprintf(stderr, "\rprefill %zu/%zu tokens, %.1f tokens/s", resumed + size_t(p.fed), ids.size(),
                       double(p.fed) / seconds_since(t0));
        else if (!args.quiet)
          std::fprintf(stderr, "\rprefill %zu/%zu tokens, %lld segments done, %.1f tokens/s", resumed + size_t(p.fed),
                       ids.size(), static_cast<long long>(segments), double(p.fed) / seconds_since(t0));
        return true;
      });
  if (!args.quiet && !ids.empty()) std::fprintf(stderr, "\n");
  // Before any state covering the whole input is saved, so a crash after that save finds these.
  if (!args.logits_out.empty()) {
    const int64_t shape[] = {int64_t(logits.size())};
    write_npy_f32(args.logits_out, logits, shape);
  }

  if (args.generate > 0) show_seed(args);
  int64_t wanted = args.generate;
  if (args.stop_at_full_context) wanted = std::min<int64_t>(wanted, context - session.tokens_seen());
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<int32_t> produced =
      session.generate(wanted, args.sampling, [](int32_t, std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
      });
  std::printf("\n");
  std::fflush(stdout);  // before the notes on stderr
  if (!args.save_state.empty()) session.save(args.save_state);
  if (wanted < args.generate && int64_t(produced.size()) == wanted)
    std::fprintf(stderr, "stopped: the context of %lld tokens is full (--ctx-full stop)\n",
                 static_cast<long long>(context));
  if (!args.quiet)
    std::fprintf(stderr, "generated %zu tokens, %.2f tokens/s; stream length %lld tokens\n", produced.size(),
                 double(produced.size()) / seconds_since(t1), static_cast<long long>(session.tokens_seen()));
  return 0;
}

const RegisterCommand registration{
    "run", "Stream text of any length through a GGUF model, then generate", [](CLI::App& app) {
      auto args = std::make_shared<RunArgs>();
      add_model_options(app, args->model);
      auto* prompt = app.add_option("-p,--prompt", args->prompt,
                                    "Input text (after --load-state it continues the stream, with no BOS; empty: "
                                    "generate from the state as it is)");
      app.add_option("-f,--file", args->file, "Read the input text from a file (default: stdin)");
      app.add_option("-n,--n-predict", args->generate, "Tokens to generate (stops early at EOS)")
          ->check(integer_range(0, 1 << 24));
      app.add_option("--temp", args->sampling.temperature, "Sampling temperature (0: greedy)")
          ->check(number_range(0, HUGE_VAL))
          ->default_val(0.8);
      app.add_option("--top-k", args->sampling.top_k, "Keep the k most likely tokens (0: all)")
          ->check(integer_range(0, 1 << 30))
          ->default_val(40);
      app.add_option("--top-p", args->sampling.top_p, "Keep the smallest set reaching this probability (1: no cut)")
          ->check(number_range(0, 1, true))
          ->default_val(0.95);
      auto* seed = app.add_option("--seed", args->sampling.seed,
                                  "Sampling seed (default: a random one, printed on stderr as `seed N`; --seed N "
                                  "repeats that run)");
      app.add_flag("--quiet", args->quiet, "No progress on stderr");
      add_ctx_full_option(app, args->stop_at_full_context);
      app.add_option("--load-state", args->load_state,
                     "Continue the stream saved in this state file (or in a session record of infini serve's store)");
      app.add_option("--save-state", args->save_state, "Save the stream state here at the end (atomic write)");
      app.add_option("--checkpoint-every", args->checkpoint_every,
                     "Also save the state to --save-state every K completed segments during prefill")
          ->check(integer_range(int64_t(0), int64_t(1) << 40));
      app.add_flag("--resume", args->resume,
                   "With --load-state: the input is the whole stream the state was saved from (the same text);"
                   " the tokens the state already holds are skipped. To recover from a crash, rerun the same"
                   " command with --load-state STATE --resume");
      app.add_option("--logits-out", args->logits_out,
                     "Write the logits of the last input position as float32 [vocab] .npy (atomic write)");
      app.add_flag("--chat", args->chat,
                   "Chat: one user message per line of stdin (or -f), each reply (up to -n tokens) printed, until "
                   "an empty line");
      app.add_option("--chat-template", args->chat_template,
                     "With --chat: chatml|llama3|gemma|mistral-v1|mistral-v3|mistral-v7|llama2|llama2-sys (default: "
                     "recognised from the file's tokenizer.chat_template)");
      app.add_option("--system", args->system, "With --chat: a system message first");
      return [args, prompt, seed] {
        args->prompt_given = prompt->count() > 0;
        args->seed_given = seed->count() > 0;
        return run_text(*args);
      };
    }};

}  // namespace
}  // namespace infini::cli
