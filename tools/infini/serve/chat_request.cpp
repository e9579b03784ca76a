#include "serve/chat_request.hpp"

#include "infini/error.hpp"
#include "serve/api_error.hpp"

namespace infini::serve {

std::optional<ChatTemplate> server_chat_template(const Model& model, const std::string& name) {
  if (name.empty()) return detect_chat_template(model.info().chat_template);
  if (const auto t = chat_template_named(name)) return t;
  throw Error("--chat-template '" + name +
              "' is not one of chatml, llama3, gemma, mistral-v1, mistral-v3, mistral-v7, llama2, llama2-sys");
}

std::vector<ChatMessage> messages_field(const nlohmann::json& body) {
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty())
    throw bad_request("'messages' must be a non-empty array of {\"role\", \"content\"}");
  std::vector<ChatMessage> out;
  for (const nlohmann::json& m : *it) {
    const std::string where = "messages[" + std::to_string(out.size()) + "]";
    if (!m.is_object()) throw bad_request(where + " must be an object");
    const auto role = m.find("role"), content = m.find("content");
    if (role == m.end() || !role->is_string() ||
        (*role != "system" && *role != "user" && *role != "assistant"))
      throw bad_request(where + ".role must be \"system\", \"user\" or \"assistant\"");
    if (content == m.end() || !content->is_string()) throw bad_request(where + ".content must be a string");
    out.push_back({role->get<std::string>(), content->get<std::string>()});
  }
  return out;
}

ChatPrompt chat_prompt(const Model& model, ChatTemplate t, const std::vector<ChatMessage>& messages) {
  // The formatted chat is tokenized with control texts as control tokens, so a message that held
  // one ("<|im_end|>", "<|start_header_id|>") could forge turns: such messages are refused.
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& c = messages[i].content;
    if (model.tokenize(c, false, true) != model.tokenize(c, false, false))
      throw bad_request("messages[" + std::to_string(i) +
                        "].content holds the text of a control token of this model; it cannot be sent in a chat");
  }
  ChatPrompt p;
  try {
    // The template's control texts are parsed as special tokens; only the template writes them.
    p.tokens = model.tokenize(apply_chat_template(t, messages, true), model.info().add_bos && model.info().bos >= 0,
                              true);
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
  const std::vector<int32_t> end = model.tokenize(chat_end_of_turn(t), false, true);
  if (end.size() == 1) p.end_of_turn = end[0];
  return p;
}

}  // namespace infini::serve
