#pragma once
// The JSON fields requests carry, checked: anything malformed, of the wrong type or out of range is
// an ApiError(400) naming the field. Unknown fields are ignored, as OpenAI clients send extras.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "serve/session_service.hpp"

namespace infini::serve {

nlohmann::json parse_body(const std::string& body);  // an object, or ApiError(400)

// max_tokens, temperature, top_p, top_k, seed and stop, with OpenAI's defaults (16 tokens,
// temperature 1, top_p 1, no top-k cut, a random seed).
GenerateRequest generate_fields(const nlohmann::json& body, const ServeLimits& limits, int64_t vocab);
bool stream_field(const nlohmann::json& body);
std::optional<uint64_t> version_field(const nlohmann::json& body);
// "text" (a string) or "tokens" (ids): exactly one of them.
std::optional<std::string> text_field(const nlohmann::json& body, std::vector<int32_t>& tokens);
// The completion prompt: a string, or an array of token ids.
std::optional<std::string> prompt_field(const nlohmann::json& body, std::vector<int32_t>& tokens);

}  // namespace infini::serve
