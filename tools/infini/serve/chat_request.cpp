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

namespace {

// A message's content: a string, or OpenAI's array of parts, of which infini reads text parts
// ({"type": "text", "text": ...}, joined in order); any other part is refused by name.
std::string content_text(const nlohmann::json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    throw bad_request(where + ".content must be a string or an array of text parts", "messages");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const nlohmann::json& part = content[i];
    const std::string at = where + ".content[" + std::to_string(i) + "]";
    const auto type = part.is_object() ? part.find("type") : part.end();
    if (!part.is_object() || type == part.end() || !type->is_string())
      throw bad_request(at + " must be an object with a \"type\"", "messages");
    if (*type != "text")
      throw unsupported("messages", at + " is of type '" + type->get<std::string>() + "'; infini reads text parts only");
    const auto t = part.find("text");
    if (t == part.end() || !t->is_string()) throw bad_request(at + ".text must be a string", "messages");
    text += t->get<std::string>();
  }
  return text;
}

}  // namespace

std::vector<ChatMessage> messages_field(const nlohmann::json& body) {
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty())
    throw bad_request("'messages' must be a non-empty array of {\"role\", \"content\"}", "messages");
  std::vector<ChatMessage> out;
  for (const nlohmann::json& m : *it) {
    const std::string where = "messages[" + std::to_string(out.size()) + "]";
    if (!m.is_object()) throw bad_request(where + " must be an object", "messages");
    const auto role = m.find("role"), content = m.find("content");
    // "developer" is OpenAI's newer name for the system role.
    if (role == m.end() || !role->is_string() ||
        (*role != "system" && *role != "developer" && *role != "user" && *role != "assistant"))
      throw bad_request(where + ".role must be \"system\", \"developer\", \"user\" or \"assistant\"", "messages");
    if (content == m.end() || content->is_null()) throw bad_request(where + ".content is missing", "messages");
    for (const char* field : {"tool_calls", "function_call", "audio"})
      if (m.contains(field) && !m[field].is_null()) throw unsupported("messages", where + " has '" + field + "'");
    const std::string r = role->get<std::string>();
    out.push_back({r == "developer" ? "system" : r, content_text(*content, where)});
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
