// infini tokenize: the token ids a GGUF file's vocabulary gives a text, without opening a device
// (a vocabulary-only file works too). Prints the ids on one line, or with --json an object with
// the ids, each token's piece and the text the ids decode to (a piece may be part of a
// character: bytes that are not UTF-8 on their own are shown as U+FFFD).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"
#include "infini/error.hpp"
#include "infini/tokenizer.hpp"
#include "text_file.hpp"

namespace infini::cli {
namespace {

struct TokenizeArgs {
  std::string model, file, text;
  bool text_given = false;  // --text, even empty
  bool json = false, no_bos = false, special = false;
};

int run_tokenize(const TokenizeArgs& args) {
  if (args.file.empty() == !args.text_given) throw UsageError("give exactly one of -f FILE and -p/--text TEXT");
  const std::string text = args.text_given ? args.text : read_text_file(args.file);
  const Tokenizer tokenizer(args.model);
  const bool bos = tokenizer.add_bos() && !args.no_bos;
  const std::vector<int32_t> ids = tokenizer.encode(text, bos, args.special);
  if (args.json) {
    nlohmann::json pieces = nlohmann::json::array();
    for (int32_t id : ids) pieces.push_back(tokenizer.piece(id));
    const nlohmann::json out{{"tokenizer", tokenizer.kind()}, {"count", ids.size()},
                             {"ids", ids},                {"pieces", pieces},
                             {"text", tokenizer.decode(ids)}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
  }
  return 0;
}

const RegisterCommand registration{
    "tokenize", "Token ids of a text under a GGUF file's vocabulary (SentencePiece or byte-level BPE)",
    [](CLI::App& app) {
      auto args = std::make_shared<TokenizeArgs>();
      app.add_option("-m,--model", args->model, "GGUF file (a vocabulary-only file is enough)")->required();
      app.add_option("-f,--file", args->file, "Text file to tokenize (bytes as they are)");
      auto* text = app.add_option("-p,--prompt,--text", args->text, "Text to tokenize (empty: BOS alone, or nothing)");
      app.add_flag("--json", args->json, "Print {\"ids\": [...], \"pieces\": [...], \"text\": ...} instead of the ids");
      app.add_flag("--no-bos", args->no_bos, "Do not put BOS first even where the file asks for it");
      app.add_flag("--special", args->special, "Match control-token texts such as <|im_start|> in the text");
      return [args, text] {
        args->text_given = text->count() > 0;
        return run_tokenize(*args);
      };
    }};

}  // namespace
}  // namespace infini::cli
