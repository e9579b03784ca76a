#pragma once
// The special-token partition both tokenizers start with (llama.cpp's tokenizer_st_partition,
// without the lstrip/rstrip attributes GGUF files do not carry): each candidate token's text,
// longest first, splits every remaining raw fragment at all its non-overlapping occurrences,
// left to right.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infini::model {

struct TextFragment {
  size_t offset, length;
  int32_t token;  // the matched special token, or -1 for raw text
};

// `candidates` are token ids ordered longest text first; `allowed` says which of them to match
// in this call (control tokens only when the caller parses special tokens).
std::vector<TextFragment> partition_special(std::string_view text, std::span<const int32_t> candidates,
                                            const std::vector<std::string>& texts,
                                            const std::function<bool(int32_t)>& allowed);

}  // namespace infini::model
