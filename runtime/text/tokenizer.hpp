#pragma once
// What the runtime needs of a tokenizer, whichever kind the GGUF file's vocabulary is:
// SentencePiece ("llama", spm_tokenizer.hpp) or byte-level BPE ("gpt2", bpe_tokenizer.hpp).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/vocabulary.hpp"

namespace infini::model {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Token ids for `text` (any bytes). add_bos puts the BOS token first (throws if the vocabulary
  // has none). parse_special also matches control-token texts such as "<s>" in the text; leave
  // it off for untrusted text.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const = 0;
  virtual std::string decode(std::span<const int32_t> tokens) const = 0;
  // The bytes one token stands for (for streaming generated text); control tokens give nothing.
  // Out-of-range ids throw.
  virtual const std::string& piece(int32_t token) const = 0;
  virtual const std::string& text(int32_t token) const = 0;  // as stored in the vocabulary
  virtual int32_t bos() const = 0;                            // -1 when absent
  virtual int32_t eos() const = 0;
  virtual bool add_bos() const = 0;  // whether the file asks for BOS before a prompt
  virtual size_t size() const = 0;
  virtual std::string_view kind() const = 0;  // tokenizer.ggml.model: "llama" or "gpt2"
};

// The tokenizer for the vocabulary's tokenizer.ggml.model; throws infini::Error (one line) for
// a model or pre-tokenizer infini does not know, or a vocabulary that is not well formed.
std::unique_ptr<const Tokenizer> make_tokenizer(const Vocabulary& vocab);

}  // namespace infini::model
