#include "serve/request_fields.hpp"

#include <algorithm>
#include <random>

#include "serve/api_error.hpp"

namespace infini::serve {
namespace {

using nlohmann::json;

// Stop strings are searched for after every token: their length bounds that work.
constexpr size_t kMaxStopBytes = 1024;

const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& body, const char* name, double fallback, double lo, double hi, bool open_lo = false) {
  const json* f = field(body, name);
  if (!f) return fallback;
  if (!f->is_number()) throw bad_request(std::string("'") + name + "' must be a number", name);
  const double v = f->get<double>();
  if (!(open_lo ? v > lo : v >= lo) || !(v <= hi))
    throw bad_request(std::string("'") + name + "' is " + f->dump() + "; it must be in " + (open_lo ? "(" : "[") +
                          json(lo).dump() + ", " + json(hi).dump() + "]",
                      name);
  return v;
}

int64_t integer(const json& body, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const json* f = field(body, name);
  if (!f) return fallback;
  if (!f->is_number_integer()) throw bad_request(std::string("'") + name + "' must be an integer", name);
  if (f->is_number_unsigned() ? f->get<uint64_t>() > uint64_t(hi) : (f->get<int64_t>() < lo || f->get<int64_t>() > hi))
    throw bad_request(std::string("'") + name + "' is " + f->dump() + "; it must be in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]",
                      name);
  return f->get<int64_t>();
}

bool boolean(const json& body, const char* name, bool fallback) {
  const json* f = field(body, name);
  if (!f) return fallback;
  if (!f->is_boolean()) throw bad_request(std::string("'") + name + "' must be true or false", name);
  return f->get<bool>();
}

// OpenAI fields whose effect infini cannot give are refused by name unless they ask for nothing.
void refuse_unsupported(const json& body, Endpoint endpoint) {
  const auto empty = [](const json& f) { return f.is_null() || (f.is_array() && f.empty()) || (f.is_object() && f.empty()); };
  for (const char* name : {"tools", "functions", "logit_bias", "audio", "prediction", "web_search_options"})
    if (body.contains(name) && !empty(body[name]))
      throw unsupported(name, std::string(name) == "logit_bias" ? "biasing logits is not implemented"
                                                                : "infini generates plain text only");
  if (const json* f = field(body, "tool_choice"); f && *f != "none" && *f != "auto")
    throw unsupported("tool_choice", "infini has no tool calling");
  if (const json* f = field(body, "function_call"); f && *f != "none" && *f != "auto")
    throw unsupported("function_call", "infini has no function calling");
  if (const json* f = field(body, "response_format"); f && !(f->is_object() && f->value("type", "") == "text"))
    throw unsupported("response_format", "only {\"type\": \"text\"} is produced (no JSON mode or schemas)");
  if (const json* f = field(body, "modalities"); f && *f != json::array({"text"}))
    throw unsupported("modalities", "infini produces text only");
  if (field(body, "reasoning_effort")) throw unsupported("reasoning_effort", "this is not a reasoning model");
  if (endpoint == Endpoint::Completions) {
    if (const json* f = field(body, "suffix"); f && *f != "") throw unsupported("suffix", "infini does not fill in the middle");
    if (const json* f = field(body, "best_of"); f && *f != 1 && *f != body.value("n", json(1)))
      throw unsupported("best_of", "choosing the best of several completions is not implemented; use 'n'");
  }
}

std::vector<int32_t> token_ids(const json& f, const char* name) {
  if (!f.is_array()) throw bad_request(std::string("'") + name + "' must be an array of token ids", name);
  std::vector<int32_t> ids;
  ids.reserve(f.size());
  for (const json& t : f) {
    // Only numbers are echoed: dumping a deeply nested value would recurse as deep as it goes.
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
      throw bad_request(std::string("'") + name + "' holds " + (t.is_number() ? t.dump() : "a " + std::string(t.type_name())) +
                            ", not a token id",
                        name);
    ids.push_back(t.get<int32_t>());
  }
  return ids;
}

}  // namespace

json parse_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw bad_request(std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw bad_request("the request body must be a JSON object");
  return j;
}

GenerateRequest generate_fields(const json& body, const ServeLimits& limits, int64_t vocab, Endpoint endpoint) {
  refuse_unsupported(body, endpoint);
  GenerateRequest r;
  // OpenAI's chat takes max_completion_tokens (max_tokens is its older name) and runs to the end
  // of the turn by default; completions default to 16 tokens.
  const int64_t fallback = endpoint == Endpoint::Chat ? limits.max_generate_tokens : std::min<int64_t>(16, limits.max_generate_tokens);
  const int64_t max_tokens = integer(body, "max_tokens", fallback, 0, limits.max_generate_tokens);
  r.max_tokens = integer(body, "max_completion_tokens", max_tokens, 0, limits.max_generate_tokens);
  if (field(body, "max_tokens") && field(body, "max_completion_tokens") && r.max_tokens != max_tokens)
    throw bad_request("'max_tokens' and 'max_completion_tokens' disagree; give one of them", "max_completion_tokens");
  r.sampling.temperature = number(body, "temperature", 1.0, 0.0, 2.0);
  r.sampling.top_p = number(body, "top_p", 1.0, 0.0, 1.0, true);
  r.sampling.top_k = int(integer(body, "top_k", 0, 0, vocab));
  r.sampling.frequency_penalty = number(body, "frequency_penalty", 0.0, -2.0, 2.0);
  r.sampling.presence_penalty = number(body, "presence_penalty", 0.0, -2.0, 2.0);
  if (const json* seed = field(body, "seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0))
      throw bad_request("'seed' must be a non-negative integer", "seed");
    r.sampling.seed = seed->get<uint64_t>();
  } else {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    r.sampling.seed = rng();
  }
  // A session is one stream: it has one continuation.
  r.n = int(integer(body, "n", 1, 1, endpoint == Endpoint::Session ? 1 : kMaxChoices));
  if (endpoint == Endpoint::Completions) {
    // The legacy form: logprobs is the number of alternatives (0: the chosen token's only).
    r.top_logprobs = int(integer(body, "logprobs", -1, 0, 20));
    r.echo = boolean(body, "echo", false);
    if (r.echo && r.top_logprobs >= 0)
      throw unsupported("echo", "with 'logprobs' it needs the prompt's log-probabilities, which infini does not compute");
  } else {
    const bool logprobs = boolean(body, "logprobs", false);
    const int64_t top = integer(body, "top_logprobs", -1, 0, 20);
    if (top >= 0 && !logprobs) throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    r.top_logprobs = logprobs ? int(std::max<int64_t>(top, 0)) : -1;
    if (field(body, "echo")) throw unsupported("echo", "it belongs to /v1/completions");
  }
  if (const json* options = field(body, "stream_options")) {
    if (!options->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    if (!stream_field(body)) throw bad_request("'stream_options' is only allowed with \"stream\": true", "stream_options");
    r.include_usage = boolean(*options, "include_usage", false);
  }
  if (const json* stop = field(body, "stop")) {
    if (stop->is_string()) r.stop.push_back(stop->get<std::string>());
    else if (stop->is_array() && stop->size() <= 4) {
      for (const json& s : *stop) {
        if (!s.is_string()) throw bad_request("'stop' must be a string or an array of at most 4 strings", "stop");
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      throw bad_request("'stop' must be a string or an array of at most 4 strings", "stop");
    }
    for (const std::string& s : r.stop)
      if (s.size() > kMaxStopBytes)
        throw bad_request("a 'stop' string is " + std::to_string(s.size()) + " bytes; at most " +
                              std::to_string(kMaxStopBytes) + " are allowed",
                          "stop");
  }
  return r;
}

bool stream_field(const json& body) {
  const json* f = field(body, "stream");
  if (f && !f->is_boolean()) throw bad_request("'stream' must be true or false", "stream");
  return f && f->get<bool>();
}

std::optional<uint64_t> version_field(const json& body) {
  const json* f = field(body, "version");
  if (!f) return std::nullopt;
  if (!f->is_number_unsigned()) throw bad_request("'version' must be a non-negative integer", "version");
  return f->get<uint64_t>();
}

std::optional<std::string> text_field(const json& body, std::vector<int32_t>& tokens) {
  const json* text = field(body, "text");
  const json* ids = field(body, "tokens");
  if (bool(text) == bool(ids)) throw bad_request("give exactly one of 'text' (a string) and 'tokens' (token ids)", "text");
  if (ids) {
    tokens = token_ids(*ids, "tokens");
    return std::nullopt;
  }
  if (!text->is_string()) throw bad_request("'text' must be a string", "text");
  return text->get<std::string>();
}

std::vector<Prompt> prompt_field(const json& body) {
  const json* prompt = field(body, "prompt");
  if (!prompt) throw bad_request("'prompt' is missing", "prompt");
  const auto one = [](const json& p) -> std::optional<Prompt> {
    if (p.is_string()) return Prompt{p.get<std::string>(), {}};
    if (p.is_array() && !p.empty() && p[0].is_number()) return Prompt{std::nullopt, token_ids(p, "prompt")};
    return std::nullopt;
  };
  if (const auto p = one(*prompt)) return {*p};
  // A batch: an array of strings or of token-id arrays, one choice (or n) per prompt.
  if (prompt->is_array() && !prompt->empty() && prompt->size() <= kMaxPrompts) {
    std::vector<Prompt> out;
    for (const json& p : *prompt) {
      const auto parsed = p.is_array() && p.empty() ? std::nullopt : one(p);
      if (!parsed) break;
      out.push_back(*parsed);
    }
    if (out.size() == prompt->size()) return out;
  }
  throw bad_request("'prompt' must be a string, an array of token ids, or an array of at most " +
                        std::to_string(kMaxPrompts) + " of either",
                    "prompt");
}

}  // namespace infini::serve
