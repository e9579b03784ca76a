#pragma once
// The HTTP face of `infini serve`: OpenAI-style completions, sessions, health and metrics, with
// an optional API key, JSON errors for everything that goes wrong, and server-sent events for
// streamed generation and append progress.
#include <httplib.h>

#include <optional>
#include <string>
#include <vector>

#include "infini/chat_template.hpp"
#include "serve/metrics.hpp"
#include "serve/session_service.hpp"

namespace infini::serve {

struct HttpOptions {
  std::string api_key;     // empty: no key needed
  std::string model_name;  // what /v1/models lists (--alias, else the file's name)
  // Origins whose browsers may call the API (CORS); "*" for any; empty: no cross-origin calls.
  std::vector<std::string> cors_origins;
  size_t max_body_bytes = 16u << 20;
  std::optional<ChatTemplate> chat;  // for /v1/chat/completions
};

void install_routes(httplib::Server& server, SessionService& service, Metrics& metrics, const HttpOptions& options);

}  // namespace infini::serve
