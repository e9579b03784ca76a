#pragma once
// /v1/chat/completions' input: OpenAI messages checked and formatted with the model's chat
// template (infini/chat_template.hpp) into prompt tokens, and the token that ends a reply.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "infini/chat_template.hpp"
#include "infini/model.hpp"

namespace infini::serve {

// The template the server formats chats with: `name` when given (infini::Error when it is not a
// known family), else the one the file's tokenizer.chat_template belongs to; nullopt: none.
std::optional<ChatTemplate> server_chat_template(const Model& model, const std::string& name);

struct ChatPrompt {
  std::vector<int32_t> tokens;
  int32_t end_of_turn = -1;  // -1 when the end-of-turn text is not one token of the vocabulary
};

// "messages": a non-empty array of {"role": system|developer|user|assistant, "content": a string or
// an array of text parts}; ApiError(400) naming what is wrong ("developer" becomes "system").
std::vector<ChatMessage> messages_field(const nlohmann::json& body);
ChatPrompt chat_prompt(const Model& model, ChatTemplate t, const std::vector<ChatMessage>& messages);

}  // namespace infini::serve
