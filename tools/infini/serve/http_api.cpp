#include "serve/http_api.hpp"

#include <chrono>
#include <random>

#include "infini/error.hpp"
#include "serve/api_error.hpp"
#include "serve/request_fields.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

// Generated text may hold invalid UTF-8 (a token can end mid-character); JSON gets U+FFFD there.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json error_json(int status, const std::string& type, const std::string& message) {
  return {{"error", {{"message", message}, {"type", type}, {"code", status}}}};
}

void send_json(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_content(dump(j), "application/json");
}

const char* status_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "limit_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

// Runs a handler; every failure becomes a JSON error with its status.
template <typename Handler>
httplib::Server::Handler guarded(Handler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_json(res, error_json(e.status(), e.type(), e.what()), e.status());
    } catch (const Error& e) {
      send_json(res, error_json(500, "server_error", e.what()), 500);
    } catch (const std::exception& e) {
      send_json(res, error_json(500, "server_error", std::string("internal error: ") + e.what()), 500);
    }
  };
}

// A response of server-sent events: `work` gets a function that sends one event (false once the
// client has gone); its errors become an error event. The stream ends with "data: [DONE]".
using SendEvent = std::function<bool(const json&)>;
void stream_events(httplib::Response& res, std::function<void(const SendEvent&)> work) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [work](size_t, httplib::DataSink& sink) {
    const SendEvent send = [&sink](const json& j) {
      const std::string event = "data: " + dump(j) + "\n\n";
      return sink.write(event.data(), event.size());
    };
    try {
      work(send);
    } catch (const ApiError& e) {
      send(error_json(e.status(), e.type(), e.what()));
    } catch (const std::exception& e) {
      send(error_json(500, "server_error", e.what()));
    }
    const std::string done = "data: [DONE]\n\n";
    sink.write(done.data(), done.size());
    sink.done();
    return true;
  });
}

json session_json(const SessionStatus& s) {
  return {{"id", s.id},
          {"object", "session"},
          {"version", s.version},
          {"tokens_seen", s.tokens_seen},
          {"state_bytes", s.state_bytes},
          {"model", digest_hex(s.model_digest)}};
}

std::string completion_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return "cmpl-" + std::to_string(rng());
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The endpoint a path belongs to, for the metrics' labels (session ids left out).
std::string endpoint_of(const httplib::Request& req) {
  const std::string& p = req.path;
  const std::string sessions = "/v1/sessions/";
  if (p.rfind(sessions, 0) == 0) {
    const size_t slash = p.find('/', sessions.size());
    return req.method + " /v1/sessions/{id}" + (slash == std::string::npos ? "" : p.substr(slash));
  }
  if (p == "/health" || p == "/metrics" || p == "/v1/models" || p == "/v1/completions" || p == "/v1/sessions")
    return req.method + " " + p;
  return "other";
}

bool key_matches(const std::string& given, const std::string& key) {
  // The same time for every wrong key of a length, so the key cannot be found byte by byte.
  unsigned diff = unsigned(given.size() ^ key.size());
  for (size_t i = 0; i < given.size(); ++i) diff |= unsigned(given[i] ^ key[i % std::max<size_t>(1, key.size())]);
  return diff == 0;
}

}  // namespace

void install_routes(httplib::Server& server, SessionService& service, Metrics& metrics, const HttpOptions& options) {
  server.set_payload_max_length(options.max_body_bytes);
  const size_t max_body = options.max_body_bytes;
  server.set_error_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = "HTTP " + std::to_string(res.status);
    if (res.status == 404) message = "no such endpoint: " + req.method + " " + req.path;
    if (res.status == 413) message = "the request body is larger than " + std::to_string(max_body) + " bytes";
    if (res.status == 405) message = req.method + " is not allowed on " + req.path;
    if (res.status == 400) message = "bad HTTP request (a POST needs a body, or Content-Length: 0)";
    send_json(res, error_json(res.status, status_type(res.status), message), res.status);
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string message = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    send_json(res, error_json(500, "server_error", message), 500);
  });
  server.set_logger([&metrics](const httplib::Request& req, const httplib::Response& res) {
    metrics.request(endpoint_of(req), res.status);
  });
  if (!options.api_key.empty()) {
    const std::string key = options.api_key;
    server.set_pre_routing_handler([key](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
      const std::string auth = req.get_header_value("Authorization");
      const std::string bearer = "Bearer ";
      if (auth.rfind(bearer, 0) == 0 && key_matches(auth.substr(bearer.size()), key))
        return httplib::Server::HandlerResponse::Unhandled;
      send_json(res, error_json(401, "authentication_error",
                                auth.empty() ? "missing API key (send 'Authorization: Bearer KEY')" : "wrong API key"),
                401);
      return httplib::Server::HandlerResponse::Handled;
    });
  }

  server.Get("/health", guarded([&service](const httplib::Request&, httplib::Response& res) {
               send_json(res, {{"status", "ok"},
                               {"model", service.model().info().name},
                               {"digest", digest_hex(service.model().info().digest)},
                               {"workers", service.workers()},
                               {"store", service.store().describe()}});
             }));

  server.Get("/metrics", guarded([&service, &metrics](const httplib::Request&, httplib::Response& res) {
               const std::vector<Gauge> gauges = {
                   {"infini_queue_depth", "Requests waiting or running.", double(service.in_flight())},
                   {"infini_sessions", "Sessions in the store.", double(service.store().count())},
                   {"infini_device_memory_bytes", "Device memory infini holds on all workers.",
                    double(service.device_memory_bytes())},
                   {"infini_workers", "Sessions the server runs at once (one per device entry).",
                    double(service.workers())}};
               res.set_content(metrics.render(gauges), "text/plain; version=0.0.4");
             }));

  const std::string model_name = options.model_name;
  server.Get("/v1/models", guarded([model_name](const httplib::Request&, httplib::Response& res) {
               send_json(res, {{"object", "list"},
                               {"data", json::array({{{"id", model_name}, {"object", "model"}, {"created", 0},
                                                      {"owned_by", "infini"}}})}});
             }));

  server.Post("/v1/completions", guarded([&service, model_name](const httplib::Request& req, httplib::Response& res) {
                const json body = parse_body(req.body);
                std::vector<int32_t> prompt;
                if (const auto text = prompt_field(body, prompt))
                  prompt = service.tokenize(*text, service.model().info().add_bos);
                const GenerateRequest request = generate_fields(body, service.limits(), service.model().info().vocab);
                const std::string id = completion_id();
                const int64_t created = unix_time();
                auto choice = [id, created, model_name](const std::string& text, const json& finish) {
                  return json{{"id", id},          {"object", "text_completion"}, {"created", created},
                              {"model", model_name}, {"choices", json::array({{{"text", text}, {"index", 0},
                                                                              {"logprobs", nullptr},
                                                                              {"finish_reason", finish}}})}};
                };
                if (!stream_field(body)) {
                  const GenerateResult r = service.complete(prompt, request, {});
                  json out = choice(r.text, r.finish_reason);
                  const int64_t generated = int64_t(r.tokens.size());
                  out["usage"] = {{"prompt_tokens", r.prompt_tokens},
                                  {"completion_tokens", generated},
                                  {"total_tokens", r.prompt_tokens + generated}};
                  send_json(res, out);
                  return;
                }
                stream_events(res, [&service, prompt, request, choice](const SendEvent& send) {
                  const GenerateResult r =
                      service.complete(prompt, request, [&](const std::string& text) { return send(choice(text, nullptr)); });
                  send(choice("", r.finish_reason));
                });
              }));

  server.Post("/v1/sessions", guarded([&service](const httplib::Request&, httplib::Response& res) {
                send_json(res, session_json(service.create()), 201);
              }));

  server.Get(R"(/v1/sessions/([^/]+))", guarded([&service](const httplib::Request& req, httplib::Response& res) {
               send_json(res, session_json(service.status(req.matches[1])));
             }));

  server.Delete(R"(/v1/sessions/([^/]+))", guarded([&service](const httplib::Request& req, httplib::Response& res) {
                  service.remove(req.matches[1]);
                  send_json(res, {{"id", req.matches[1]}, {"object", "session"}, {"deleted", true}});
                }));

  server.Post(R"(/v1/sessions/([^/]+)/append)", guarded([&service](const httplib::Request& req, httplib::Response& res) {
                const std::string id = req.matches[1];
                const json body = parse_body(req.body);
                std::vector<int32_t> tokens;
                const std::optional<std::string> text = text_field(body, tokens);
                const std::optional<uint64_t> version = version_field(body);
                if (!stream_field(body)) {
                  send_json(res, session_json(service.append(id, text, tokens, version, {})));
                  return;
                }
                service.status(id);  // an unknown session is a 404, not an event in a 200 stream
                stream_events(res, [&service, id, text, tokens, version](const SendEvent& send) {
                  const SessionStatus s = service.append(id, text, tokens, version, [&](const FeedProgress& p) {
                    return send({{"object", "session.progress"},
                                 {"fed", p.fed},
                                 {"total", p.total},
                                 {"tokens_seen", p.tokens_seen}});
                  });
                  send(session_json(s));
                });
              }));

  server.Post(R"(/v1/sessions/([^/]+)/generate)", guarded([&service](const httplib::Request& req, httplib::Response& res) {
                const std::string id = req.matches[1];
                const json body = parse_body(req.body);
                const GenerateRequest request = generate_fields(body, service.limits(), service.model().info().vocab);
                const std::optional<uint64_t> version = version_field(body);
                auto result_json = [](const GenerateResult& r, const SessionStatus& s) {
                  json out = session_json(s);
                  out["object"] = "session.generation";
                  out["text"] = r.text;
                  out["tokens"] = r.tokens;
                  out["finish_reason"] = r.finish_reason;
                  return out;
                };
                if (!stream_field(body)) {
                  const auto [r, s] = service.generate(id, request, version, {});
                  send_json(res, result_json(r, s));
                  return;
                }
                service.status(id);
                stream_events(res, [&service, id, request, version, result_json](const SendEvent& send) {
                  const auto [r, s] = service.generate(id, request, version, [&](const std::string& text) {
                    return send({{"object", "session.text"}, {"text", text}});
                  });
                  send(result_json(r, s));
                });
              }));
}

}  // namespace infini::serve
