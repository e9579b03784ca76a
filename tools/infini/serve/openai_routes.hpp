#pragma once
// The OpenAI-compatible endpoints of `infini serve`: /v1/models, /v1/completions and
// /v1/chat/completions, one-shot requests on a fresh stream (nothing is stored).
#include <httplib.h>

#include <optional>
#include <string>

#include "infini/chat_template.hpp"
#include "serve/session_service.hpp"

namespace infini::serve {

// `chat`: the template chats are formatted with; without one /v1/chat/completions answers 400.
void install_openai_routes(httplib::Server& server, SessionService& service, const std::string& model_name,
                           std::optional<ChatTemplate> chat);

}  // namespace infini::serve
