#pragma once
// A SentencePiece-style ("llama" tokenizer model) vocabulary for random test models: the token
// list, scores and types llama.cpp's spm tokenizer expects, with no trained data behind it.
//   0 "<unk>" (type 2 unknown), 1 "<s>", 2 "</s>" (type 3 control),
//   3..258 "<0x00>".."<0xFF>" (type 6 byte fallback),
//   then pieces (type 1 normal) with descending scores: "▁" (U+2581, SentencePiece's word
//   boundary), "▁" + common English words, letters, "▁" + letters, then letter strings of
//   growing length with and without "▁", until the requested size.
// Smaller sizes (>= 3) keep a prefix of that list, which suits tiny fuzzing seeds.
#include <cstdint>
#include <string>
#include <vector>

namespace infini::model {

struct SyntheticVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};

inline constexpr int32_t kTokenNormal = 1, kTokenUnknown = 2, kTokenControl = 3, kTokenByte = 6;

SyntheticVocab synthetic_spm_vocab(int64_t size);  // throws infini::Error if size < 3

}  // namespace infini::model
