#include "serve/openai_routes.hpp"

#include <chrono>
#include <random>

#include "serve/chat_request.hpp"
#include "serve/http_common.hpp"
#include "serve/logprobs_json.hpp"
#include "serve/request_fields.hpp"
#include "serve/request_log.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

std::string completion_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return prefix + std::to_string(rng());
}

// Usage over every choice of a request; the prompt counted once per prompt.
json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  note_request_tokens(prompt_tokens + completion_tokens);
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json model_json(const std::string& name) {
  return {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "infini"}};
}

// What every response of one request shares: its id, object, time and model.
struct ResponseHead {
  std::string id, object, model;
  int64_t created = unix_time();
  json with(json choices) const {
    return {{"id", id}, {"object", object}, {"created", created}, {"model", model}, {"choices", std::move(choices)}};
  }
};

// A completions request: its prompts (a batch of them) as tokens, with their texts for echo.
struct CompletionPrompts {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::string> texts;
};

CompletionPrompts completion_prompts(SessionService& service, const json& body) {
  CompletionPrompts out;
  for (const Prompt& p : prompt_field(body)) {
    out.tokens.push_back(p.text ? service.tokenize(*p.text, service.model().info().add_bos) : p.tokens);
    out.texts.push_back(p.text ? *p.text : service.model().detokenize(p.tokens));
    service.precheck_tokens(out.tokens.back(), "the prompt");
  }
  return out;
}

void install_completions(httplib::Server& server, SessionService& service, const std::string& model_name) {
  server.Post("/v1/completions", guarded([&service, model_name](const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req.body);
    const GenerateRequest request = generate_fields(body, service.limits(), service.model().info().vocab,
                                                    Endpoint::Completions);
    const CompletionPrompts prompts = completion_prompts(service, body);
    const ResponseHead head{completion_id("cmpl-"), "text_completion", model_name};
    const bool with_logprobs = request.top_logprobs >= 0;
    const auto choice = [&service, with_logprobs](size_t index, const std::string& text, std::span<const TokenReport> reports,
                                                  size_t offset, const json& finish) {
      return json{{"text", text},
                  {"index", index},
                  {"logprobs", with_logprobs ? completion_logprobs(service.model(), reports, offset) : json(nullptr)},
                  {"finish_reason", finish}};
    };
    if (!stream_field(body)) {
      json choices = json::array();
      int64_t prompt_tokens = 0, completion_tokens = 0;
      for (size_t p = 0; p < prompts.tokens.size(); ++p) {
        const std::string echo = request.echo ? prompts.texts[p] : "";
        for (const GenerateResult& r : service.complete(prompts.tokens[p], request, {})) {
          choices.push_back(choice(choices.size(), echo + r.text, r.logprobs, echo.size(), r.finish_reason));
          completion_tokens += int64_t(r.tokens.size());
        }
        prompt_tokens += int64_t(prompts.tokens[p].size());
      }
      json out = head.with(std::move(choices));
      out["usage"] = usage_json(prompt_tokens, completion_tokens);
      send_json(res, out);
      return;
    }
    stream_events(res, [&service, prompts, request, head, choice](const SendEvent& send) {
      const auto chunk = [&](json c) {
        json out = head.with(json::array({std::move(c)}));
        if (request.include_usage) out["usage"] = nullptr;
        return send(out);
      };
      int64_t prompt_tokens = 0, completion_tokens = 0;
      for (size_t p = 0; p < prompts.tokens.size(); ++p) {
        const size_t first = p * size_t(request.n);
        std::vector<size_t> offsets(size_t(request.n), 0);
        if (request.echo)
          for (int i = 0; i < request.n; ++i) {
            if (!chunk(choice(first + size_t(i), prompts.texts[p], {}, 0, nullptr))) return;
            offsets[size_t(i)] = prompts.texts[p].size();
          }
        const std::vector<GenerateResult> results = service.complete(
            prompts.tokens[p], request, [&](int i, const std::string& text, std::span<const TokenReport> reports) {
              const bool sent = chunk(choice(first + size_t(i), text, reports, offsets[size_t(i)], nullptr));
              offsets[size_t(i)] += text.size();
              return sent;
            });
        for (size_t i = 0; i < results.size(); ++i) {
          if (!chunk(choice(first + i, "", {}, offsets[i], results[i].finish_reason))) return;
          completion_tokens += int64_t(results[i].tokens.size());
        }
        prompt_tokens += int64_t(prompts.tokens[p].size());
      }
      json last = head.with(json::array());
      last["usage"] = usage_json(prompt_tokens, completion_tokens);
      if (request.include_usage) send(last);
    });
  }));
}

void install_chat(httplib::Server& server, SessionService& service, const std::string& model_name,
                  std::optional<ChatTemplate> chat) {
  server.Post("/v1/chat/completions", guarded([&service, model_name, chat](const httplib::Request& req,
                                                                         httplib::Response& res) {
    if (!chat)
      throw bad_request(service.model().info().name +
                        " has no chat template infini knows; start the server with --chat-template NAME");
    const json body = parse_body(req.body);
    GenerateRequest request = generate_fields(body, service.limits(), service.model().info().vocab, Endpoint::Chat);
    const ChatPrompt prompt = chat_prompt(service.model(), *chat, messages_field(body));
    if (prompt.end_of_turn >= 0) request.stop_tokens.push_back(prompt.end_of_turn);
    const ResponseHead head{completion_id("chatcmpl-"), "chat.completion", model_name};
    const bool with_logprobs = request.top_logprobs >= 0;
    const auto logprobs = [&service, with_logprobs](std::span<const TokenReport> reports) {
      return with_logprobs ? chat_logprobs(service.model(), reports) : json(nullptr);
    };
    if (!stream_field(body)) {
      json choices = json::array();
      int64_t completion_tokens = 0;
      for (const GenerateResult& r : service.complete(prompt.tokens, request, {})) {
        choices.push_back({{"index", choices.size()},
                           {"message", {{"role", "assistant"}, {"content", r.text}, {"refusal", nullptr}}},
                           {"logprobs", logprobs(r.logprobs)},
                           {"finish_reason", r.finish_reason}});
        completion_tokens += int64_t(r.tokens.size());
      }
      json out = head.with(std::move(choices));
      out["usage"] = usage_json(int64_t(prompt.tokens.size()), completion_tokens);
      send_json(res, out);
      return;
    }
    service.precheck_tokens(prompt.tokens, "the prompt");
    ResponseHead chunk_head = head;
    chunk_head.object = "chat.completion.chunk";
    stream_events(res, [&service, prompt, request, chunk_head, logprobs](const SendEvent& send) {
      const auto chunk = [&](int index, const json& delta, const json& lp, const json& finish) {
        json out = chunk_head.with(
            json::array({{{"index", index}, {"delta", delta}, {"logprobs", lp}, {"finish_reason", finish}}}));
        if (request.include_usage) out["usage"] = nullptr;
        return send(out);
      };
      for (int i = 0; i < request.n; ++i)
        if (!chunk(i, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr)) return;
      const std::vector<GenerateResult> results = service.complete(
          prompt.tokens, request, [&](int i, const std::string& text, std::span<const TokenReport> reports) {
            return chunk(i, {{"content", text}}, logprobs(reports), nullptr);
          });
      int64_t completion_tokens = 0;
      for (size_t i = 0; i < results.size(); ++i) {
        if (!chunk(int(i), json::object(), nullptr, results[i].finish_reason)) return;
        completion_tokens += int64_t(results[i].tokens.size());
      }
      json last = chunk_head.with(json::array());
      last["usage"] = usage_json(int64_t(prompt.tokens.size()), completion_tokens);
      if (request.include_usage) send(last);
    });
  }));
}

}  // namespace

void install_openai_routes(httplib::Server& server, SessionService& service, const std::string& model_name,
                           std::optional<ChatTemplate> chat) {
  server.Get("/v1/models", guarded([model_name](const httplib::Request&, httplib::Response& res) {
               send_json(res, {{"object", "list"}, {"data", json::array({model_json(model_name)})}});
             }));
  server.Get(R"(/v1/models/(.+))", guarded([model_name](const httplib::Request& req, httplib::Response& res) {
               if (req.matches[1] != model_name)
                 throw ApiError(404, "invalid_request_error",
                                "the model '" + std::string(req.matches[1]) + "' does not exist; this server runs '" +
                                    model_name + "'",
                                "model", "model_not_found");
               send_json(res, model_json(model_name));
             }));
  install_completions(server, service, model_name);
  install_chat(server, service, model_name, chat);
}

}  // namespace infini::serve
