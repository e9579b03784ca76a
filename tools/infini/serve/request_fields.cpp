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
  if (!f->is_number()) throw bad_request(std::string("'") + name + "' must be a number");
  const double v = f->get<double>();
  if (!(open_lo ? v > lo : v >= lo) || !(v <= hi))
    throw bad_request(std::string("'") + name + "' is " + f->dump() + "; it must be in " + (open_lo ? "(" : "[") +
                      json(lo).dump() + ", " + json(hi).dump() + "]");
  return v;
}

int64_t integer(const json& body, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const json* f = field(body, name);
  if (!f) return fallback;
  if (!f->is_number_integer()) throw bad_request(std::string("'") + name + "' must be an integer");
  if (f->is_number_unsigned() ? f->get<uint64_t>() > uint64_t(hi) : (f->get<int64_t>() < lo || f->get<int64_t>() > hi))
    throw bad_request(std::string("'") + name + "' is " + f->dump() + "; it must be in [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return f->get<int64_t>();
}

std::vector<int32_t> token_ids(const json& f, const char* name) {
  if (!f.is_array()) throw bad_request(std::string("'") + name + "' must be an array of token ids");
  std::vector<int32_t> ids;
  ids.reserve(f.size());
  for (const json& t : f) {
    // Only numbers are echoed: dumping a deeply nested value would recurse as deep as it goes.
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
      throw bad_request(std::string("'") + name + "' holds " + (t.is_number() ? t.dump() : "a " + std::string(t.type_name())) +
                        ", not a token id");
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

GenerateRequest generate_fields(const json& body, const ServeLimits& limits, int64_t vocab) {
  GenerateRequest r;
  r.max_tokens = integer(body, "max_tokens", std::min<int64_t>(16, limits.max_generate_tokens), 0,
                         limits.max_generate_tokens);
  r.sampling.temperature = number(body, "temperature", 1.0, 0.0, 2.0);
  r.sampling.top_p = number(body, "top_p", 1.0, 0.0, 1.0, true);
  r.sampling.top_k = int(integer(body, "top_k", 0, 0, vocab));
  if (const json* seed = field(body, "seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0))
      throw bad_request("'seed' must be a non-negative integer");
    r.sampling.seed = seed->get<uint64_t>();
  } else {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    r.sampling.seed = rng();
  }
  if (integer(body, "n", 1, 1, 1) != 1) throw bad_request("'n' must be 1");
  if (const json* stop = field(body, "stop")) {
    if (stop->is_string()) r.stop.push_back(stop->get<std::string>());
    else if (stop->is_array() && stop->size() <= 4) {
      for (const json& s : *stop) {
        if (!s.is_string()) throw bad_request("'stop' must be a string or an array of at most 4 strings");
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      throw bad_request("'stop' must be a string or an array of at most 4 strings");
    }
    for (const std::string& s : r.stop)
      if (s.size() > kMaxStopBytes)
        throw bad_request("a 'stop' string is " + std::to_string(s.size()) + " bytes; at most " +
                          std::to_string(kMaxStopBytes) + " are allowed");
  }
  return r;
}

bool stream_field(const json& body) {
  const json* f = field(body, "stream");
  if (f && !f->is_boolean()) throw bad_request("'stream' must be true or false");
  return f && f->get<bool>();
}

std::optional<uint64_t> version_field(const json& body) {
  const json* f = field(body, "version");
  if (!f) return std::nullopt;
  if (!f->is_number_unsigned()) throw bad_request("'version' must be a non-negative integer");
  return f->get<uint64_t>();
}

std::optional<std::string> text_field(const json& body, std::vector<int32_t>& tokens) {
  const json* text = field(body, "text");
  const json* ids = field(body, "tokens");
  if (bool(text) == bool(ids)) throw bad_request("give exactly one of 'text' (a string) and 'tokens' (token ids)");
  if (ids) {
    tokens = token_ids(*ids, "tokens");
    return std::nullopt;
  }
  if (!text->is_string()) throw bad_request("'text' must be a string");
  return text->get<std::string>();
}

std::optional<std::string> prompt_field(const json& body, std::vector<int32_t>& tokens) {
  const json* prompt = field(body, "prompt");
  if (!prompt) throw bad_request("'prompt' is missing");
  if (prompt->is_string()) return prompt->get<std::string>();
  if (prompt->is_array() && (prompt->empty() || (*prompt)[0].is_number())) {
    tokens = token_ids(*prompt, "prompt");
    return std::nullopt;
  }
  throw bad_request("'prompt' must be a string or an array of token ids (one prompt per request)");
}

}  // namespace infini::serve
