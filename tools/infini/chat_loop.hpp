#pragma once
// `infini run --chat`: a conversation on stdin, one user message per line, each reply streamed
// to stdout. The template comes from --chat-template or the file's tokenizer.chat_template.
#include <istream>
#include <string>

#include "infini/session.hpp"
#include "model_options.hpp"

namespace infini::cli {

struct ChatArgs {
  std::string template_name;  // empty: recognise the file's
  std::string system;         // a system message first, when not empty
  int64_t max_reply = 256;    // tokens per reply
  SamplingOptions sampling;
  bool quiet = false;
  bool stop_at_full_context = false;  // --ctx-full stop: a message past the context is refused, a reply ends at it
};

int run_chat(OpenModel& m, const ChatArgs& args, std::istream& in);

}  // namespace infini::cli
