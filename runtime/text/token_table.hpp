#pragma once
// The token list both tokenizers are built on: each token's text, type and piece (the bytes it
// decodes to), the lookup by text, and the special-token candidates, validated once.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/vocabulary.hpp"
#include "text/special_tokens.hpp"

namespace infini::model {

// llama.cpp's token type ids (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

class TokenTable {
 public:
  enum class Duplicates { LastWins, Refuse };
  // Throws infini::Error (one line): no tokens, more than 2^31 - 1, token types not one per token
  // or outside 0..6, bos/eos/unknown ids outside the tokens, or a text listed twice when
  // `duplicates` is Refuse (LastWins maps it to its last id, as llama.cpp's SentencePiece does).
  // `default_type` gives a token's type when the file has none; `piece_of` its piece.
  TokenTable(const Vocabulary& vocab, Duplicates duplicates, const std::function<TokenType(size_t)>& default_type,
             const std::function<std::string(size_t id, const std::string& text, TokenType type)>& piece_of);

  int32_t find(std::string_view text) const;  // -1 when no token has this text
  void check_id(int32_t token) const;         // throws for ids outside [0, size())
  const std::string& text(int32_t token) const;
  const std::string& piece(int32_t token) const;
  TokenType type(int32_t token) const;
  const std::vector<std::string>& texts() const { return texts_; }
  // `text` split at special tokens (special_tokens.hpp): user-defined ones always, control and
  // unknown ones when `parse_special`.
  std::vector<TextFragment> partition(std::string_view text, bool parse_special) const;
  size_t size() const { return texts_.size(); }

 private:
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> texts_;
  std::vector<TokenType> types_;
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> by_text_;
  std::vector<int32_t> specials_;  // user-defined, control and unknown tokens with text, longest first
};

}  // namespace infini::model
