#pragma once
// A model's vocabulary as its GGUF file gives it (tokenizer.ggml.*): what the tokenizers read.
#include <cstdint>
#include <string>
#include <vector>

namespace infini::model {

struct Vocabulary {
  std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (BPE)
  std::string pre;                   // tokenizer.ggml.pre, the BPE pre-tokenizer ("default" if absent)
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens
  std::vector<float> scores;         // tokenizer.ggml.scores (empty if absent)
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type (empty if absent)
  std::vector<std::string> merges;   // tokenizer.ggml.merges, "left right" by rank (BPE)
  int32_t bos = -1, eos = -1, unknown = -1, padding = -1;
  bool add_bos = true;               // tokenizer.ggml.add_bos_token (BPE default: the pre-tokenizer's)
  bool add_eos = false;              // tokenizer.ggml.add_eos_token
  std::string chat_template;         // tokenizer.chat_template (empty if absent)
};

}  // namespace infini::model
