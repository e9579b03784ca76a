#pragma once
// Tokenizer for byte-level BPE vocabularies (tokenizer.ggml.model = "gpt2": Llama 3, Qwen, GPT-2
// and their kind), applied as llama.cpp applies them to GGUF files so that token ids agree.
//
// encode(text):
//   1. Special-token partition (special_tokens.hpp): user-defined tokens always, control and
//      unknown tokens only with parse_special.
//   2. Each raw fragment is read as code points (text/unicode.hpp: a byte that does not start a
//      well-formed sequence becomes U+FFFD, as llama.cpp reads it) and split into words by the
//      pre-tokenizer tokenizer.ggml.pre names (text/pre_tokenizer.hpp).
//   3. A word's UTF-8 bytes are spelled in GPT-2's byte alphabet. Where the pre-tokenizer ignores
//      merges (llama3) a word that is itself a token is that token. Otherwise the word starts as
//      one symbol per character and the adjacent pair of lowest merge rank is merged (ties: the
//      leftmost) until no pair has a rank.
//   4. A final symbol that is not a token becomes the tokens of its single characters, skipping
//      any that are not tokens (llama.cpp does the same).
// decode(tokens) concatenates the pieces: a normal token's characters mapped back to bytes, a
// user-defined token's text, nothing for control tokens.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/vocabulary.hpp"
#include "text/token_table.hpp"
#include "text/tokenizer.hpp"
#include "text/pre_tokenizer.hpp"

namespace infini::model {

class BpeTokenizer final : public Tokenizer {
 public:
  // Validates the vocabulary and throws infini::Error with one line: no tokens, a text listed
  // twice, token types outside 0..6, a merge that is not "left right" or names a text that is no
  // token, bos/eos out of range, or a pre-tokenizer infini does not know.
  explicit BpeTokenizer(const Vocabulary& vocab);

  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const override;
  std::string decode(std::span<const int32_t> tokens) const override;
  const std::string& piece(int32_t token) const override { return table_.piece(token); }
  const std::string& text(int32_t token) const override { return table_.text(token); }
  int32_t bos() const override { return bos_; }
  int32_t eos() const override { return eos_; }
  bool add_bos() const override { return add_bos_; }
  size_t size() const override { return table_.size(); }
  std::string_view kind() const override { return "gpt2"; }

 private:
  static uint64_t pair_key(int32_t left, int32_t right);
  int32_t rank(int32_t left, int32_t right) const;  // of the merge of these tokens, or -1
  void encode_word(std::string_view spelled, std::vector<int32_t>& out) const;

  TokenTable table_;
  std::unordered_map<uint64_t, int32_t> ranks_;  // (left id, right id) -> rank
  text::PreTokenizer pre_;
  bool ignore_merges_ = false;
  int32_t bos_ = -1, eos_ = -1;
  bool add_bos_ = false, add_eos_ = false;
};

}  // namespace infini::model
