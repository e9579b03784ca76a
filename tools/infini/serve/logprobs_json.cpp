#include "serve/logprobs_json.hpp"

namespace infini::serve {

using nlohmann::json;

namespace {

json bytes_of(const std::string& piece) {
  json out = json::array();
  for (char c : piece) out.push_back(int(static_cast<unsigned char>(c)));
  return out;
}

json token_entry(const Model& model, int32_t token, float logprob) {
  const std::string piece = model.piece(token);
  return {{"token", piece}, {"logprob", logprob}, {"bytes", bytes_of(piece)}};
}

}  // namespace

json chat_logprobs(const Model& model, std::span<const TokenReport> reports) {
  json content = json::array();
  for (const TokenReport& r : reports) {
    json entry = token_entry(model, r.token, r.logprob);
    json top = json::array();
    for (const TokenLogprob& t : r.top) top.push_back(token_entry(model, t.token, t.logprob));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

json completion_logprobs(const Model& model, std::span<const TokenReport> reports, size_t offset) {
  json tokens = json::array(), logprobs = json::array(), top = json::array(), offsets = json::array();
  for (const TokenReport& r : reports) {
    const std::string piece = model.piece(r.token);
    tokens.push_back(piece);
    logprobs.push_back(r.logprob);
    json alternatives = json::object();
    for (const TokenLogprob& t : r.top) alternatives[model.piece(t.token)] = t.logprob;
    top.push_back(std::move(alternatives));
    offsets.push_back(offset);
    offset += piece.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

}  // namespace infini::serve
