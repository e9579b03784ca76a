#include "serve/session_routes.hpp"

#include "serve/http_common.hpp"
#include "serve/logprobs_json.hpp"
#include "serve/request_fields.hpp"
#include "serve/request_log.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

// `context` and `sinks`: a plain model's sliding context (0 for an Infini-attention model, whose
// context is unbounded); `device_state_bytes`: what a session's state takes on the device, at any
// stream length.
json session_json(const SessionStatus& s, const ModelInfo& info) {
  return {{"id", s.id},
          {"object", "session"},
          {"version", s.version},
          {"tokens_seen", s.tokens_seen},
          {"state_bytes", s.state_bytes},
          {"context", info.context},
          {"sinks", info.sinks},
          {"device_state_bytes", info.state_bytes},
          {"model", digest_hex(s.model_digest)}};
}

}  // namespace

void install_session_routes(httplib::Server& server, SessionService& service) {
  server.Post("/v1/sessions", guarded([&service](const httplib::Request&, httplib::Response& res) {
                send_json(res, session_json(service.create(), service.model().info()), 201);
              }));

  server.Get("/v1/sessions", guarded([&service](const httplib::Request&, httplib::Response& res) {
               nlohmann::json data = nlohmann::json::array();
               for (const SessionStatus& s : service.list()) data.push_back(session_json(s, service.model().info()));
               send_json(res, {{"object", "list"}, {"data", std::move(data)}});
             }));

  server.Get(R"(/v1/sessions/([^/]+))", guarded([&service](const httplib::Request& req, httplib::Response& res) {
               send_json(res, session_json(service.status(req.matches[1]), service.model().info()));
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
                  const SessionStatus s = service.append(id, text, tokens, version, {});
                  note_request_tokens(s.fed);
                  send_json(res, session_json(s, service.model().info()));
                  return;
                }
                // What can be refused now gets its status, not an error event in a 200 stream.
                const int64_t seen = service.precheck_session(id, version, false);
                service.precheck_tokens(text ? service.append_tokens(*text, seen) : tokens, "the input", seen);
                stream_events(res, [&service, id, text, tokens, version](const SendEvent& send) {
                  const SessionStatus s = service.append(
                      id, text, tokens, version,
                      [&](const FeedProgress& p) {
                        return send({{"object", "session.progress"},
                                     {"fed", p.fed},
                                     {"total", p.total},
                                     {"tokens_seen", p.tokens_seen}});
                      },
                      [&] { return send(nullptr); });
                  note_request_tokens(s.fed);
                  send(session_json(s, service.model().info()));
                });
              }));

  server.Post(R"(/v1/sessions/([^/]+)/generate)", guarded([&service](const httplib::Request& req, httplib::Response& res) {
                const std::string id = req.matches[1];
                const json body = parse_body(req.body);
                const GenerateRequest request =
                    generate_fields(body, service.limits(), service.model().info().vocab, Endpoint::Session);
                const std::optional<uint64_t> version = version_field(body);
                const bool with_logprobs = request.top_logprobs >= 0;
                auto result_json = [&service, with_logprobs](const GenerateResult& r, const SessionStatus& s) {
                  note_request_tokens(int64_t(r.tokens.size()));
                  json out = session_json(s, service.model().info());
                  out["object"] = "session.generation";
                  out["text"] = r.text;
                  out["tokens"] = r.tokens;
                  out["finish_reason"] = r.finish_reason;
                  if (with_logprobs) out["logprobs"] = chat_logprobs(service.model(), r.logprobs);
                  return out;
                };
                if (!stream_field(body)) {
                  const auto [r, s] = service.generate(id, request, version, {});
                  send_json(res, result_json(r, s));
                  return;
                }
                service.precheck_session(id, version, true);
                stream_events(res, [&service, id, request, version, result_json, with_logprobs](const SendEvent& send) {
                  const auto [r, s] = service.generate(
                      id, request, version,
                      [&](const std::string& text, std::span<const TokenReport> reports) {
                        json event{{"object", "session.text"}, {"text", text}};
                        if (with_logprobs) event["logprobs"] = chat_logprobs(service.model(), reports);
                        return send(event);
                      },
                      [&] { return send(nullptr); });
                  send(result_json(r, s));
                });
              }));
}

}  // namespace infini::serve
