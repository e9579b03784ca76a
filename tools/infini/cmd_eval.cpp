// infini eval: the forward pass of a GGUF model over given token ids (docs/design.md §3);
// writes the logits of the last position ([vocab]) or of every position ([T,vocab]) as .npy.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "infini/npy.hpp"
#include "model_options.hpp"
#include "text_file.hpp"
#include "token_list.hpp"

namespace infini::cli {
namespace {

struct EvalArgs {
  ModelArgs model;
  std::string tokens, tokens_file, logits;
  bool all_logits = false;
};

int run_eval(const EvalArgs& args) {
  if (args.tokens.empty() == args.tokens_file.empty()) throw UsageError("give exactly one of --tokens and --tokens-file");
  check_output_path(args.logits, "--logits");
  check_model_args(args.model);
  const std::vector<int32_t> ids =
      args.tokens.empty() ? read_token_file(args.tokens_file) : parse_token_list(args.tokens, "--tokens");
  OpenModel m = open_model(args.model);
  const std::vector<float> logits = args.all_logits ? m.session->feed_all(ids) : m.session->feed(ids);
  const int64_t vocab = m.model->info().vocab;
  std::vector<int64_t> shape{vocab};
  if (args.all_logits) shape.insert(shape.begin(), int64_t(ids.size()));
  write_npy_f32(args.logits, logits, shape);
  std::string dims;
  for (int64_t d : shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  std::fprintf(stderr, "wrote %s: float32 [%s], the logits of %s after %zu tokens\n", args.logits.c_str(), dims.c_str(),
               args.all_logits ? "every position" : "the last position", ids.size());
  return 0;
}

const RegisterCommand registration{
    "eval", "Forward pass of a GGUF model over token ids; writes logits as .npy", [](CLI::App& app) {
      auto args = std::make_shared<EvalArgs>();
      add_model_options(app, args->model);
      app.add_option("--tokens", args->tokens, "Comma-separated token ids, e.g. 1,2,3");
      app.add_option("--tokens-file", args->tokens_file, "File of token ids separated by commas or white space");
      app.add_option("--logits", args->logits, "Output .npy: [vocab] float32, or [T,vocab] with --all-logits")->required();
      app.add_flag("--all-logits", args->all_logits, "Write the logits of every position");
      return [args] { return run_eval(*args); };
    }};

}  // namespace
}  // namespace infini::cli
