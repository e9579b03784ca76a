#pragma once
// The JSON fields requests carry, checked: anything malformed, of the wrong type or out of range is
// an ApiError(400) naming the field. OpenAI fields infini cannot honour (tools, logit_bias, JSON
// response formats, ...) are refused by name; fields with no effect on the output (user,
// metadata, model) and unknown ones are ignored, as OpenAI clients send extras.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "serve/session_service.hpp"

namespace infini::serve {

nlohmann::json parse_body(const std::string& body);  // an object, or ApiError(400)

enum class Endpoint { Completions, Chat, Session };

constexpr int kMaxChoices = 16;   // n
constexpr size_t kMaxPrompts = 64;  // prompts in one completions request

// max_tokens (or max_completion_tokens), temperature, top_p, top_k, the penalties, seed, stop, n,
// logprobs, echo and stream_options, with OpenAI's defaults (16 tokens for completions and
// sessions, the server's --max-tokens for chat; temperature 1, top_p 1, no top-k cut, a random
// seed).
GenerateRequest generate_fields(const nlohmann::json& body, const ServeLimits& limits, int64_t vocab,
                                Endpoint endpoint);
bool stream_field(const nlohmann::json& body);
std::optional<uint64_t> version_field(const nlohmann::json& body);
// "text" (a string) or "tokens" (ids): exactly one of them.
std::optional<std::string> text_field(const nlohmann::json& body, std::vector<int32_t>& tokens);
// One completion prompt: text, or token ids as they are.
struct Prompt {
  std::optional<std::string> text;
  std::vector<int32_t> tokens;
};
// The completions "prompt": a string, an array of token ids, or an array of either (a batch).
std::vector<Prompt> prompt_field(const nlohmann::json& body);

}  // namespace infini::serve
