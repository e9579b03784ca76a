#include "text/token_table.hpp"

#include <algorithm>
#include <limits>

#include "infini/error.hpp"

namespace infini::model {
namespace {

void check_special_id(int32_t id, size_t n, const char* what) {
  if (id < -1 || (id >= 0 && size_t(id) >= n))
    throw Error(std::string("vocabulary: ") + what + " token id " + std::to_string(id) + " out of range [0, " +
                std::to_string(n) + ")");
}

}  // namespace

TokenTable::TokenTable(const Vocabulary& vocab, Duplicates duplicates,
                       const std::function<TokenType(size_t)>& default_type,
                       const std::function<std::string(size_t, const std::string&, TokenType)>& piece_of)
    : texts_(vocab.tokens) {
  const size_t n = texts_.size();
  if (n == 0) throw Error("vocabulary: no tokens");
  if (n > size_t(std::numeric_limits<int32_t>::max()))
    throw Error("vocabulary: " + std::to_string(n) + " tokens do not fit 32-bit ids");
  if (!vocab.token_types.empty() && vocab.token_types.size() != n)
    throw Error("vocabulary: " + std::to_string(vocab.token_types.size()) + " token types for " + std::to_string(n) +
                " tokens");
  check_special_id(vocab.bos, n, "bos");
  check_special_id(vocab.eos, n, "eos");
  check_special_id(vocab.unknown, n, "unknown");

  types_.resize(n);
  pieces_.resize(n);
  by_text_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (vocab.token_types.empty()) {
      types_[i] = default_type(i);
    } else {
      const int32_t t = vocab.token_types[i];
      if (t < 0 || t > 6) throw Error("vocabulary: token " + std::to_string(i) + " has unknown type " + std::to_string(t));
      types_[i] = TokenType(t);
    }
    const std::string& t = texts_[i];
    const auto [it, fresh] = by_text_.emplace(t, int32_t(i));
    if (!fresh) {
      if (duplicates == Duplicates::Refuse)
        throw Error("vocabulary: tokens " + std::to_string(it->second) + " and " + std::to_string(i) + " are both '" + t +
                    "'");
      it->second = int32_t(i);
    }
    pieces_[i] = piece_of(i, t, types_[i]);
    const bool special = types_[i] == TokenType::UserDefined || types_[i] == TokenType::Control ||
                         types_[i] == TokenType::Unknown;
    if (special && !t.empty()) specials_.push_back(int32_t(i));
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [&](int32_t a, int32_t b) { return texts_[size_t(a)].size() > texts_[size_t(b)].size(); });
}

std::vector<TextFragment> TokenTable::partition(std::string_view text, bool parse_special) const {
  return partition_special(text, specials_, texts_, [&](int32_t id) {
    return parse_special || types_[size_t(id)] == TokenType::UserDefined;
  });
}

int32_t TokenTable::find(std::string_view text) const {
  const auto it = by_text_.find(text);
  return it == by_text_.end() ? -1 : it->second;
}

void TokenTable::check_id(int32_t token) const {
  if (token < 0 || size_t(token) >= texts_.size())
    throw Error("token id " + std::to_string(token) + " out of range [0, " + std::to_string(texts_.size()) + ")");
}

const std::string& TokenTable::text(int32_t token) const {
  check_id(token);
  return texts_[size_t(token)];
}

const std::string& TokenTable::piece(int32_t token) const {
  check_id(token);
  return pieces_[size_t(token)];
}

TokenType TokenTable::type(int32_t token) const {
  check_id(token);
  return types_[size_t(token)];
}

}  // namespace infini::model
