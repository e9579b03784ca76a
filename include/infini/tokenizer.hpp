#pragma once
// A GGUF file's tokenizer on its own: no weights are checked and no device is opened, so a
// vocabulary-only file works too. SentencePiece ("llama") and byte-level BPE ("gpt2", with the
// pre-tokenizers llama-bpe, qwen2, gpt-2 and default) vocabularies, giving the ids llama.cpp gives.
// infini::Model::tokenize uses the same rules.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infini {

class Tokenizer {
 public:
  // Throws infini::Error (one line naming the file) when it cannot be read or its vocabulary is
  // not one infini tokenizes.
  explicit Tokenizer(const std::filesystem::path& gguf);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // add_bos puts BOS first (and EOS last where the file asks for it); parse_special matches
  // control-token texts such as "<|im_start|>" in the text (leave it off for untrusted text).
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;
  std::string decode(std::span<const int32_t> tokens) const;
  std::string piece(int32_t token) const;  // the bytes of one token; out-of-range ids throw
  bool add_bos() const;                    // whether the file asks for BOS before a prompt
  int32_t bos() const;                     // -1 when absent
  int32_t eos() const;
  size_t size() const;
  std::string kind() const;  // "llama" (SentencePiece) or "gpt2" (byte-level BPE)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infini
