#pragma once
// Chat templates: a conversation turned into the text a chat model was trained on. The common
// families are built in, written out by hand rather than interpreted from the file's Jinja
// template, and recognised from tokenizer.chat_template by the marks each family's template
// carries, as llama.cpp recognises them; the text they produce is llama.cpp's for the same
// messages.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace infini {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatTemplate { ChatML, Llama3, Gemma, MistralV1, MistralV3, MistralV7, Llama2, Llama2Sys };

// "chatml", "llama3", "gemma", "mistral-v1", "mistral-v3", "mistral-v7", "llama2", "llama2-sys".
std::string_view chat_template_name(ChatTemplate t) noexcept;
std::optional<ChatTemplate> chat_template_named(std::string_view name) noexcept;
// The family a tokenizer.chat_template text belongs to; nullopt when it is none of them.
std::optional<ChatTemplate> detect_chat_template(std::string_view jinja) noexcept;

// The conversation as text; with add_assistant, the opening of the assistant's reply after it.
std::string apply_chat_template(ChatTemplate t, std::span<const ChatMessage> messages, bool add_assistant);
// The control text that ends a turn ("<|eot_id|>", "<|im_end|>", "<end_of_turn>", "</s>"):
// generation stops at its token.
std::string_view chat_end_of_turn(ChatTemplate t) noexcept;

}  // namespace infini
