#pragma once
// Generated tokens' log-probabilities in the two shapes OpenAI clients read: chat's
// {"content": [{"token", "logprob", "bytes", "top_logprobs"}]} and the completions' legacy
// {"tokens", "token_logprobs", "top_logprobs", "text_offset"}.
#include <nlohmann/json.hpp>
#include <span>

#include "infini/model.hpp"
#include "serve/session_service.hpp"

namespace infini::serve {

nlohmann::json chat_logprobs(const Model& model, std::span<const TokenReport> reports);
// `offset`: where the first token's text starts in the choice's text (after an echoed prompt).
nlohmann::json completion_logprobs(const Model& model, std::span<const TokenReport> reports, size_t offset);

}  // namespace infini::serve
