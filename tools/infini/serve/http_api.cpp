#include "serve/http_api.hpp"

#include <algorithm>
#include <optional>

#include "serve/http_common.hpp"
#include "serve/openai_routes.hpp"
#include "serve/request_log.hpp"
#include "serve/session_routes.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

// The routes and the methods each takes: for the metrics' labels (a fixed set, so no request can
// add labels), 405 with Allow for a known path asked with another method, and CORS preflights.
struct Route {
  const char* label;  // "/v1/sessions/{id}/append"
  const char* methods;
};

std::optional<Route> route_of(const std::string& p) {
  static const Route kFixed[] = {{"/health", "GET"},
                                 {"/metrics", "GET"},
                                 {"/v1/models", "GET"},
                                 {"/v1/completions", "POST"},
                                 {"/v1/chat/completions", "POST"},
                                 {"/v1/sessions", "GET, POST"}};
  for (const Route& r : kFixed)
    if (p == r.label) return r;
  const auto below = [&p](const std::string& prefix) {
    return p.rfind(prefix, 0) == 0 && p.size() > prefix.size() ? std::optional(p.substr(prefix.size())) : std::nullopt;
  };
  if (const auto rest = below("/v1/models/")) return Route{"/v1/models/{id}", "GET"};
  if (const auto rest = below("/v1/sessions/")) {
    const size_t slash = rest->find('/');
    if (slash == std::string::npos) return Route{"/v1/sessions/{id}", "GET, DELETE"};
    if (rest->substr(slash) == "/append") return Route{"/v1/sessions/{id}/append", "POST"};
    if (rest->substr(slash) == "/generate") return Route{"/v1/sessions/{id}/generate", "POST"};
  }
  return std::nullopt;
}

bool takes(const Route& r, const std::string& method) {
  const std::string methods = r.methods;
  for (size_t at = 0; at < methods.size();) {
    const size_t end = std::min(methods.find(", ", at), methods.size());
    if (methods.compare(at, end - at, method) == 0) return true;
    at = end + 2;
  }
  return false;
}

std::string endpoint_of(const httplib::Request& req) {
  const std::optional<Route> r = route_of(req.path);
  if (!r || !takes(*r, req.method)) return "other";
  return req.method + " " + r->label;
}

// The origin a CORS response names, or empty when the request's origin is not allowed.
std::string allowed_origin(const httplib::Request& req, const std::vector<std::string>& origins) {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty()) return "";
  for (const std::string& o : origins)
    if (o == "*" || o == origin) return o == "*" ? "*" : origin;
  return "";
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
    const std::optional<Route> route = route_of(req.path);
    if (res.status == 404 && route && !takes(*route, req.method)) {
      res.status = 405;
      res.set_header("Allow", route->methods);
    }
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
    write_request_log(req, res);
  });
  // Before routing: the request's log starts, CORS headers, preflights answered (browsers send
  // them without a key), then the API key.
  const std::string key = options.api_key;
  const std::vector<std::string> origins = options.cors_origins;
  server.set_pre_routing_handler([key, origins](const httplib::Request& req, httplib::Response& res) {
    begin_request_log();
    const std::string origin = allowed_origin(req, origins);
    if (!origin.empty()) {
      res.set_header("Access-Control-Allow-Origin", origin);
      if (origin != "*") res.set_header("Vary", "Origin");
    }
    if (req.method == "OPTIONS") {
      const std::optional<Route> route = route_of(req.path);
      if (!route) return httplib::Server::HandlerResponse::Unhandled;  // 404
      res.status = 204;
      res.set_header("Allow", std::string(route->methods) + ", OPTIONS");
      if (!origin.empty()) {
        res.set_header("Access-Control-Allow-Methods", std::string(route->methods) + ", OPTIONS");
        const std::string asked = req.get_header_value("Access-Control-Request-Headers");
        res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
        res.set_header("Access-Control-Max-Age", "600");
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    if (key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (auth.rfind(bearer, 0) == 0 && key_matches(auth.substr(bearer.size()), key))
      return httplib::Server::HandlerResponse::Unhandled;
    send_json(res, error_json(401, "authentication_error",
                              auth.empty() ? "missing API key (send 'Authorization: Bearer KEY')" : "wrong API key"),
              401);
    return httplib::Server::HandlerResponse::Handled;
  });

  // Health needs no key, so where one is set it tells no more than the model's id and digest
  // (not its file, nor where the sessions are stored).
  const bool open = options.api_key.empty();
  const std::string model_name = options.model_name;
  server.Get("/health", guarded([&service, open, model_name](const httplib::Request&, httplib::Response& res) {
               nlohmann::json out{{"status", "ok"},
                                  {"model", model_name},
                                  {"digest", digest_hex(service.model().info().digest)},
                                  {"workers", service.workers()}};
               if (open) {
                 out["file"] = service.model().info().name;
                 out["store"] = service.store().describe();
               }
               send_json(res, out);
             }));

  server.Get("/metrics", guarded([&service, &metrics](const httplib::Request&, httplib::Response& res) {
               std::vector<Gauge> gauges = {
                   {"infini_queue_depth", "Requests waiting or running.", double(service.in_flight())},
                   {"infini_sessions", "Sessions in the store.", double(service.store().count())},
                   {"infini_device_memory_bytes", "Device memory infini holds on all workers.",
                    double(service.device_memory_bytes())},
                   {"infini_workers", "Sessions the server runs at once (--parallel per device entry).",
                    double(service.workers())}};
               // Sessions generating at once on a device decode in batched steps (one token each).
               const DecodeBatchStats b = service.decode_batches();
               gauges.push_back({"infini_decode_generating", "Sessions generating now.", double(b.generating)});
               gauges.push_back({"infini_decode_batch_waiting", "Sessions waiting for the next batched step.",
                                 double(b.waiting)});
               gauges.push_back({"infini_decode_batch_steps", "Batched decode steps run.", double(b.steps)});
               gauges.push_back({"infini_decode_batch_tokens", "Tokens decoded in batched steps.", double(b.tokens)});
               gauges.push_back({"infini_decode_batch_size_mean", "Mean sessions per batched step.",
                                 b.steps ? double(b.tokens) / double(b.steps) : 0.0});
               gauges.push_back({"infini_decode_batch_size_last", "Sessions in the last batched step.", double(b.last)});
               gauges.push_back({"infini_decode_batch_step_seconds_last", "Wall time of the last batched step.",
                                 b.last_seconds});
               gauges.push_back({"infini_decode_batch_step_seconds_mean", "Mean wall time of a batched step.",
                                 b.steps ? b.seconds / double(b.steps) : 0.0});
               res.set_content(metrics.render(gauges), "text/plain; version=0.0.4");
             }));

  install_openai_routes(server, service, options.model_name, options.chat);
  install_session_routes(server, service);
}

}  // namespace infini::serve
