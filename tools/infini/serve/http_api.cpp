#include "serve/http_api.hpp"

#include "serve/http_common.hpp"
#include "serve/openai_routes.hpp"
#include "serve/session_routes.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

// The endpoint a request belongs to, for the metrics' labels: one of a fixed set (session ids and
// unknown paths left out), so no request can add labels or break the format.
std::string endpoint_of(const httplib::Request& req) {
  static const char* const kKnown[] = {"/health", "/metrics", "/v1/models", "/v1/completions", "/v1/chat/completions",
                                       "/v1/sessions"};
  static const char* const kMethods[] = {"GET", "POST", "DELETE"};
  const std::string& p = req.path;
  const char* method = "other";
  for (const char* m : kMethods)
    if (req.method == m) method = m;
  const std::string sessions = "/v1/sessions/";
  if (p.rfind(sessions, 0) == 0) {
    const size_t slash = p.find('/', sessions.size());
    const std::string rest = slash == std::string::npos ? "" : p.substr(slash);
    if (rest.empty() || rest == "/append" || rest == "/generate")
      return std::string(method) + " /v1/sessions/{id}" + rest;
    return "other";
  }
  for (const char* k : kKnown)
    if (p == k) return std::string(method) + " " + k;
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

  install_openai_routes(server, service, options.model_name, options.chat);
  install_session_routes(server, service);
}

}  // namespace infini::serve
