#include "chat_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "infini/chat_template.hpp"
#include "infini/error.hpp"

namespace infini::cli {
namespace {

ChatTemplate template_for(const Model& model, const std::string& name) {
  if (!name.empty()) {
    if (const auto t = chat_template_named(name)) return *t;
    throw Error("--chat-template '" + name + "' is not one of chatml, llama3, gemma, mistral-v1, mistral-v3, " +
                "mistral-v7, llama2, llama2-sys");
  }
  if (const auto t = detect_chat_template(model.info().chat_template)) return *t;
  throw Error(model.info().name + ": " +
              (model.info().chat_template.empty() ? std::string("the file has no tokenizer.chat_template")
                                                  : std::string("its tokenizer.chat_template is not a family infini knows")) +
              "; pass --chat-template chatml|llama3|gemma|mistral-v1|mistral-v3|mistral-v7|llama2|llama2-sys");
}

}  // namespace

int run_chat(OpenModel& m, const ChatArgs& args, std::istream& in) {
  const Model& model = *m.model;
  Session& session = *m.session;
  const ChatTemplate t = template_for(model, args.template_name);
  // The token that ends a reply, when the end-of-turn text is one token of this vocabulary.
  const std::vector<int32_t> end_ids = model.tokenize(chat_end_of_turn(t), false, true);
  const int32_t end_of_turn = end_ids.size() == 1 ? end_ids[0] : -1;
  if (!args.quiet)
    std::fprintf(stderr, "chat template %s; one message per line, an empty line or end of input ends\n",
                 std::string(chat_template_name(t)).c_str());
  if (!args.quiet && args.sampling.temperature > 0)
    std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(args.sampling.seed));

  std::vector<ChatMessage> messages;
  if (!args.system.empty()) messages.push_back({"system", args.system});
  // The conversation as the session has read it. Each turn feeds only what the template adds
  // after it; when a template rewrites earlier text (a trimmed reply), the session starts over.
  std::string fed;
  std::string line;
  const int64_t context = model.info().context;
  int64_t turn = 1;
  while (std::getline(in, line) && !line.empty()) {
    messages.push_back({"user", line});
    const std::string text = apply_chat_template(t, messages, true);
    if (!text.starts_with(fed)) {
      session.reset();
      fed.clear();
    }
    const bool start = fed.empty() && session.tokens_seen() == 0;
    const std::vector<int32_t> ids =
        model.tokenize(std::string_view(text).substr(fed.size()), start && model.info().add_bos, true);
    if (args.stop_at_full_context && session.tokens_seen() + int64_t(ids.size()) > context)
      throw Error("--ctx-full stop: message " + std::to_string(turn) + " makes a stream of " +
                  std::to_string(session.tokens_seen() + int64_t(ids.size())) + " tokens, more than the context of " +
                  std::to_string(context));
    session.feed(ids);
    fed = text;
    std::string reply;
    bool ended = false;
    const int64_t room = args.stop_at_full_context ? context - session.tokens_seen() : args.max_reply;
    const int64_t wanted = std::min(args.max_reply, room);
    const std::vector<int32_t> produced = session.generate(wanted, args.sampling, [&](int32_t token, std::string_view piece) {
      if (token == end_of_turn) {
        ended = true;  // fed to the session, as the template's end of the reply
        return false;
      }
      reply += piece;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    });
    std::printf("\n");
    std::fflush(stdout);
    messages.push_back({"assistant", reply});
    fed += reply;
    if (ended) fed += chat_end_of_turn(t);
    if (!ended && wanted < args.max_reply && int64_t(produced.size()) == wanted) {
      std::fprintf(stderr, "stopped: the context of %lld tokens is full (--ctx-full stop)\n",
                   static_cast<long long>(context));
      break;
    }
    ++turn;
  }
  if (!args.quiet)
    std::fprintf(stderr, "%zu messages, stream length %lld tokens\n", messages.size(),
                 static_cast<long long>(session.tokens_seen()));
  return 0;
}

}  // namespace infini::cli
