// Chat templates (include/infini/chat_template.hpp) against the text llama.cpp's built-in templates
// produce for the same messages (recorded from llama_chat_apply_template of libllama,
// @node-llama-cpp/linux-x64-vulkan 3.22.1, by name and from template texts), and recognition.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "infini/chat_template.hpp"

namespace infini::test {
namespace {

TEST_CASE("chat templates write what llama.cpp writes for the same messages", "[chat]") {
  // With a system message, spaces around a user message and the reply opened; without a system
  // message, spaces around an assistant message, not opened.
  const std::vector<ChatMessage> with_system = {
      {"system", "You are terse."}, {"user", " Hello there "}, {"assistant", "Hi."}, {"user", "And now?"}};
  const std::vector<ChatMessage> plain = {{"user", "Hello"}, {"assistant", " Hi. "}, {"user", "Bye"}};
  struct Case {
    ChatTemplate t;
    std::string with_system, plain;
  };
  const std::vector<Case> cases = {
      {ChatTemplate::ChatML, "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n Hello there <|im_end|>\n<|im_start|>assistant\nHi.<|im_end|>\n<|im_start|>user\nAnd now?<|im_end|>\n<|im_start|>assistant\n",
       "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n Hi. <|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"},
      {ChatTemplate::Llama3, "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnd now?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
       "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"},
      {ChatTemplate::Gemma, "<start_of_turn>user\nYou are terse.\n\nHello there<end_of_turn>\n<start_of_turn>model\nHi.<end_of_turn>\n<start_of_turn>user\nAnd now?<end_of_turn>\n<start_of_turn>model\n",
       "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi.<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"},
      {ChatTemplate::MistralV1, " [INST] You are terse.\n\n Hello there  [/INST] Hi.</s> [INST] And now? [/INST]",
       " [INST] Hello [/INST]  Hi. </s> [INST] Bye [/INST]"},
      {ChatTemplate::MistralV3, "[INST] You are terse.\n\n Hello there [/INST] Hi.</s>[INST] And now?[/INST]",
       "[INST] Hello[/INST] Hi.</s>[INST] Bye[/INST]"},
      {ChatTemplate::MistralV7, "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST]  Hello there [/INST] Hi.</s>[INST] And now?[/INST]",
       "[INST] Hello[/INST]  Hi. </s>[INST] Bye[/INST]"},
      {ChatTemplate::Llama2, "[INST] You are terse.\n Hello there  [/INST]Hi.</s>[INST] And now? [/INST]",
       "[INST] Hello [/INST] Hi. </s>[INST] Bye [/INST]"},
      {ChatTemplate::Llama2Sys, "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\n Hello there  [/INST]Hi.</s>[INST] And now? [/INST]",
       "[INST] Hello [/INST] Hi. </s>[INST] Bye [/INST]"},
  };
  for (const Case& c : cases) {
    INFO(chat_template_name(c.t));
    CHECK(apply_chat_template(c.t, with_system, true) == c.with_system);
    CHECK(apply_chat_template(c.t, plain, false) == c.plain);
    CHECK(chat_template_named(chat_template_name(c.t)) == c.t);
  }
  CHECK(chat_end_of_turn(ChatTemplate::Llama3) == "<|eot_id|>");
  CHECK(chat_end_of_turn(ChatTemplate::ChatML) == "<|im_end|>");
  CHECK(chat_template_named("vicuna") == std::nullopt);
}

TEST_CASE("chat templates are recognised from tokenizer.chat_template as llama.cpp recognises them", "[chat]") {
  // Template texts carrying each family's marks; llama.cpp picked the same family for each.
  const std::vector<std::pair<std::string, ChatTemplate>> cases = {
      {"{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{% endfor %}",
       ChatTemplate::ChatML},
      {"{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\\n\\n{{ m.content | trim }}<|eot_id|>{% endfor %}",
       ChatTemplate::Llama3},
      {"{% for m in messages %}<start_of_turn>{{ m.role }}\\n{{ m.content }}<end_of_turn>\\n{% endfor %}",
       ChatTemplate::Gemma},
      {"{% if system %}[SYSTEM_PROMPT]{{ system }}[/SYSTEM_PROMPT]{% endif %}{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}",
       ChatTemplate::MistralV7},
      {"{% for m in messages %}{% if m.role == 'user' %}{{ ' [INST] ' + system_message + m.content + ' [/INST]' }}{% endif %}{% endfor %}",
       ChatTemplate::MistralV1},
      {"{% for m in messages %}{% if tools %}[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS]{% endif %}{{ '[INST]' + m.content + '[/INST]' }}{% endfor %}",
       ChatTemplate::MistralV3},
      {"{% if system %}{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}{% endif %}{% for m in messages %}{{ '[INST] ' + m.content + ' [/INST]' }}{% endfor %}",
       ChatTemplate::Llama2Sys},
      {"{% for m in messages %}{{ '[INST] ' + m.content + ' [/INST]' }}{% endfor %}",
       ChatTemplate::Llama2},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    CHECK(detect_chat_template(text) == want);
  }
  CHECK(detect_chat_template("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}") == std::nullopt);
  CHECK(detect_chat_template("") == std::nullopt);
}

}  // namespace
}  // namespace infini::test
