#pragma once
// A byte-level BPE vocabulary ("gpt2" tokenizer model) for random test models, trained here on a
// short built-in text so that its merges are realistic (words, digits, punctuation runs,
// accented letters, CJK, emoji):
//   0..255 the byte alphabet (each byte's character in GPT-2's spelling, byte order, normal),
//   then one token per learned merge (most frequent adjacent pair first, ties by text),
//   then control tokens "<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>",
//   and "<|reserved_N|>" control tokens up to the requested size.
// Smaller sizes keep fewer merges; the four named control tokens are always there.
#include <cstdint>
#include <string>
#include <vector>

#include "text/pre_tokenizer.hpp"

namespace infini::model {

struct SyntheticBpeVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;  // "left right", by rank
  int32_t bos = -1, eos = -1;
};

// Throws infini::Error if size < 260 (the byte alphabet and the named control tokens).
SyntheticBpeVocab synthetic_bpe_vocab(int64_t size, text::PreTokenizer pre);

}  // namespace infini::model
