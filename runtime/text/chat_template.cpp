#include "infini/chat_template.hpp"

#include <utility>

namespace infini {
namespace {

constexpr std::pair<ChatTemplate, std::string_view> kNames[] = {
    {ChatTemplate::ChatML, "chatml"},         {ChatTemplate::Llama3, "llama3"},
    {ChatTemplate::Gemma, "gemma"},           {ChatTemplate::MistralV1, "mistral-v1"},
    {ChatTemplate::MistralV3, "mistral-v3"},  {ChatTemplate::MistralV7, "mistral-v7"},
    {ChatTemplate::Llama2, "llama2"},         {ChatTemplate::Llama2Sys, "llama2-sys"},
};

std::string trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  size_t a = 0, b = s.size();
  while (a < b && space(s[a])) ++a;
  while (b > a && space(s[b - 1])) --b;
  return std::string(s.substr(a, b - a));
}

// <|im_start|>role\ncontent<|im_end|>\n per message.
std::string chatml(std::span<const ChatMessage> messages, bool add_assistant) {
  std::string out;
  for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_assistant) out += "<|im_start|>assistant\n";
  return out;
}

// <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>, contents trimmed.
std::string llama3(std::span<const ChatMessage> messages, bool add_assistant) {
  std::string out;
  for (const ChatMessage& m : messages)
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
  if (add_assistant) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// Roles user and model; system text goes at the start of the next user turn.
std::string gemma(std::span<const ChatMessage> messages, bool add_assistant) {
  std::string out, system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n";
    if (!system.empty() && role != "model") {
      out += system + "\n\n";
      system.clear();
    }
    out += trim(m.content) + "<end_of_turn>\n";
  }
  if (add_assistant) out += "<start_of_turn>model\n";
  return out;
}

// Mistral's v1 and v3: a turn opens with [INST] (v1 with a space before it and before [/INST]),
// system text and user text follow inside it, the assistant's reply closes it with </s> (v3
// trims the reply).
std::string mistral_v1_v3(std::span<const ChatMessage> messages, bool v1) {
  const std::string lead = v1 ? " " : "";
  std::string out;
  bool in_turn = false;
  for (const ChatMessage& m : messages) {
    if (!in_turn) {
      out += lead + "[INST] ";
      in_turn = true;
    }
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += m.content + lead + "[/INST]";
    } else {
      out += " " + (v1 ? m.content : trim(m.content)) + "</s>";
      in_turn = false;
    }
  }
  return out;
}

std::string mistral_v7(std::span<const ChatMessage> messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    if (m.role == "system")
      out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
    else if (m.role == "user")
      out += "[INST] " + m.content + "[/INST]";
    else
      out += " " + m.content + "</s>";
  }
  return out;
}

// Llama 2: [INST] user [/INST]assistant</s>; the system text leads the first turn, inside
// <<SYS>> marks where the template has them.
std::string llama2(std::span<const ChatMessage> messages, bool system_marks) {
  std::string out = "[INST] ";
  bool in_turn = true;
  for (const ChatMessage& m : messages) {
    if (!in_turn) {
      out += "[INST] ";
      in_turn = true;
    }
    if (m.role == "system") {
      out += system_marks ? "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n" : m.content + "\n";
    } else if (m.role == "user") {
      out += m.content + " [/INST]";
    } else {
      out += m.content + "</s>";
      in_turn = false;
    }
  }
  return out;
}

}  // namespace

std::string_view chat_template_name(ChatTemplate t) noexcept {
  for (const auto& [k, name] : kNames)
    if (k == t) return name;
  return "?";
}

std::optional<ChatTemplate> chat_template_named(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

std::optional<ChatTemplate> detect_chat_template(std::string_view t) noexcept {
  const auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("<|im_start|>")) return ChatTemplate::ChatML;
  if (has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) return ChatTemplate::MistralV7;
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]"))
      return has(" [INST]") ? ChatTemplate::MistralV1 : ChatTemplate::MistralV3;
    return has("<<SYS>>") ? ChatTemplate::Llama2Sys : ChatTemplate::Llama2;
  }
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatTemplate::Llama3;
  if (has("<start_of_turn>")) return ChatTemplate::Gemma;
  return std::nullopt;
}

std::string apply_chat_template(ChatTemplate t, std::span<const ChatMessage> messages, bool add_assistant) {
  switch (t) {
    case ChatTemplate::ChatML: return chatml(messages, add_assistant);
    case ChatTemplate::Llama3: return llama3(messages, add_assistant);
    case ChatTemplate::Gemma: return gemma(messages, add_assistant);
    // The [INST] families open the reply by closing the user's turn: nothing to add.
    case ChatTemplate::MistralV1: return mistral_v1_v3(messages, true);
    case ChatTemplate::MistralV3: return mistral_v1_v3(messages, false);
    case ChatTemplate::MistralV7: return mistral_v7(messages);
    case ChatTemplate::Llama2: return llama2(messages, false);
    case ChatTemplate::Llama2Sys: return llama2(messages, true);
  }
  return {};
}

std::string_view chat_end_of_turn(ChatTemplate t) noexcept {
  switch (t) {
    case ChatTemplate::ChatML: return "<|im_end|>";
    case ChatTemplate::Llama3: return "<|eot_id|>";
    case ChatTemplate::Gemma: return "<end_of_turn>";
    default: return "</s>";
  }
}

}  // namespace infini
