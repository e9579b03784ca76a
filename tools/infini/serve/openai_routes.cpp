#include "serve/openai_routes.hpp"

#include <chrono>
#include <random>

#include "serve/chat_request.hpp"
#include "serve/http_common.hpp"
#include "serve/request_fields.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

std::string completion_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return prefix + std::to_string(rng());
}

json usage_json(const GenerateResult& r) {
  const int64_t generated = int64_t(r.tokens.size());
  return {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", generated},
          {"total_tokens", r.prompt_tokens + generated}};
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void install_openai_routes(httplib::Server& server, SessionService& service, const std::string& model_name,
                           std::optional<ChatTemplate> chat) {
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
                const std::string id = completion_id("cmpl-");
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
                  out["usage"] = usage_json(r);
                  send_json(res, out);
                  return;
                }
                service.precheck_tokens(prompt, "the prompt");
                stream_events(res, [&service, prompt, request, choice](const SendEvent& send) {
                  const GenerateResult r =
                      service.complete(prompt, request, [&](const std::string& text) { return send(choice(text, nullptr)); });
                  send(choice("", r.finish_reason));
                });
              }));


  server.Post("/v1/chat/completions", guarded([&service, model_name, chat](const httplib::Request& req,
                                                                         httplib::Response& res) {
                if (!chat)
                  throw bad_request(service.model().info().name +
                                    " has no chat template infini knows; start the server with --chat-template NAME");
                const json body = parse_body(req.body);
                const ChatPrompt prompt = chat_prompt(service.model(), *chat, messages_field(body));
                GenerateRequest request = generate_fields(body, service.limits(), service.model().info().vocab);
                if (prompt.end_of_turn >= 0) request.stop_tokens.push_back(prompt.end_of_turn);
                const std::string id = completion_id("chatcmpl-");
                const int64_t created = unix_time();
                auto chunk = [id, created, model_name](const json& delta, const json& finish) {
                  return json{{"id", id},          {"object", "chat.completion.chunk"}, {"created", created},
                              {"model", model_name}, {"choices", json::array({{{"index", 0}, {"delta", delta},
                                                                              {"finish_reason", finish}}})}};
                };
                if (!stream_field(body)) {
                  const GenerateResult r = service.complete(prompt.tokens, request, {});
                  send_json(res, {{"id", id},
                                  {"object", "chat.completion"},
                                  {"created", created},
                                  {"model", model_name},
                                  {"choices", json::array({{{"index", 0},
                                                            {"message", {{"role", "assistant"}, {"content", r.text}}},
                                                            {"finish_reason", r.finish_reason}}})},
                                  {"usage", usage_json(r)}});
                  return;
                }
                service.precheck_tokens(prompt.tokens, "the prompt");
                stream_events(res, [&service, prompt, request, chunk](const SendEvent& send) {
                  if (!send(chunk({{"role", "assistant"}, {"content", ""}}, nullptr))) return;
                  const GenerateResult r = service.complete(prompt.tokens, request, [&](const std::string& text) {
                    return send(chunk({{"content", text}}, nullptr));
                  });
                  send(chunk(json::object(), r.finish_reason));
                });
              }));
}

}  // namespace infini::serve
