#pragma once
// Tokenizer for llama "spm" vocabularies (tokenizer.ggml.model = "llama"), applied the way llama.cpp
// applies them to GGUF files, so that token ids agree with other runtimes on the same file.
//
// encode(text):
//   1. Special-token partition. User-defined tokens (type 4), and with parse_special also control
//      (3) and unknown (2) tokens, are matched as whole strings in the raw text, longest token
//      first (equal lengths: lower id first); each one splits every remaining raw fragment at all
//      its non-overlapping occurrences, left to right. This is llama.cpp's partition without the
//      lstrip/rstrip attributes, which GGUF does not carry for spm vocabularies.
//   2. Each raw fragment that starts the text or follows a matched token gets one " " prepended
//      (SentencePiece's add-dummy-prefix, as llama.cpp does), then every " " becomes "▁" (U+2581).
//   3. The fragment is split into UTF-8 characters; a byte that does not start a well-formed
//      sequence (overlong, surrogate, > U+10FFFF, truncated) is a symbol of its own. (llama.cpp only
//      looks at the lead byte; the two agree on valid UTF-8.)
//   4. The adjacent pair whose concatenation is a vocabulary token of the highest score is merged,
//      ties going to the leftmost pair, until no pair is a token. Any token text counts, whatever
//      its type (as in llama.cpp); a text listed twice maps to its last id.
//   5. A final symbol that is not a token becomes one token per byte: "<0xXX>", else the one-byte
//      text itself. If any byte of the symbol has neither, the symbol becomes one unknown token
//      (SentencePiece's one <unk> per character); with no unknown token either, encode throws.
//
// decode(tokens) concatenates piece() of each token, dropping a leading BOS, and strips one
// leading " " from the first remaining piece: that is the dummy prefix encode added, so
// decode(encode(x)) == x for text without "▁", user-defined tokens or characters the vocabulary
// cannot represent. This follows SentencePiece and llama.cpp's former llama_detokenize_spm; current
// llama_detokenize keeps the space when a BOS leads.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/vocabulary.hpp"
#include "text/token_table.hpp"
#include "text/tokenizer.hpp"

namespace infini::model {


class SpmTokenizer final : public Tokenizer {
 public:
  // Validates the vocabulary: at least one token, scores and token_types empty or one per token,
  // type ids in 0..6, byte tokens spelled "<0xXX>", bos/eos/unknown ids -1 (absent) or in range.
  // Without token_types, bos/eos are control, `unknown` is unknown, "<0xXX>" texts are bytes and
  // everything else is normal. Without scores every score is 0 (merges go leftmost first).
  // add_space_prefix mirrors tokenizer.ggml.add_space_prefix (true for Llama files).
  explicit SpmTokenizer(const Vocabulary& vocab, bool add_space_prefix = true);

  // Token ids for `text` (any bytes). add_bos puts the BOS token first (throws if the vocabulary
  // has none); empty text gives just that. parse_special also matches control/unknown token
  // texts such as "<s>" in the text; leave it off for untrusted text.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const override;

  // Text for `tokens`; any id outside [0, size()) throws. See the header comment for the
  // leading-space rule; strip_leading_space = false keeps the dummy-prefix space.
  std::string decode(std::span<const int32_t> tokens, bool strip_leading_space) const;
  std::string decode(std::span<const int32_t> tokens) const override { return decode(tokens, true); }

  // The bytes one token stands for, with no space stripping (for streaming generated text):
  // normal tokens with "▁" as " ", byte tokens as their byte, user-defined tokens verbatim,
  // control, unknown, unused and undefined tokens as nothing. Out-of-range ids throw.
  const std::string& piece(int32_t token) const override;

  // The token's text as stored in the vocabulary. Out-of-range ids throw.
  const std::string& text(int32_t token) const override;
  TokenType type(int32_t token) const;

  int32_t bos() const override { return bos_; }  // -1 when absent
  int32_t eos() const override { return eos_; }  // -1 when absent
  int32_t unknown() const { return unknown_; }  // -1 when absent
  bool add_bos() const override { return add_bos_; }  // tokenizer.ggml.add_bos_token
  size_t size() const override { return table_.size(); }
  std::string_view kind() const override { return "llama"; }

 private:
  // Heterogeneous lookup so merge candidates are looked up as views into the text, unallocated.
  int32_t find(std::string_view text) const { return table_.find(text); }
  // Steps 3-5 of encode for one escaped fragment, appending to `out`.
  void encode_fragment(std::string_view escaped, std::vector<int32_t>& out) const;
  void emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const;

  TokenTable table_;
  std::vector<float> scores_;
  std::array<int32_t, 256> byte_tokens_{};  // -1 where the vocabulary has no token for the byte
  size_t max_token_bytes_ = 0;             // no merge can produce a longer token
  int32_t bos_ = -1, eos_ = -1, unknown_ = -1;
  bool add_bos_ = true;
  bool add_space_prefix_ = true;
};

}  // namespace infini::model
