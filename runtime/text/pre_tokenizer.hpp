#pragma once
// The pre-tokenizers of byte-level BPE vocabularies (tokenizer.ggml.pre): text is split into
// words before merges, by the same expressions llama.cpp uses for each name:
//   llama3 (llama-bpe, llama3, llama-v3): contractions of any case | [^\r\n\p{L}\p{N}]?\p{L}+ |
//       \p{N}{1,3} |  ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//   qwen2 (qwen2, deepseek-r1-qwen): the same with \p{N} one digit at a time
//   gpt2 (gpt-2, phi-2): 's|'t|'re|'ve|'m|'ll|'d |  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+ |
//       \s+(?!\S) | \s+
//   default (default): four passes, each splitting the previous pass's words, text between
//       matches becoming words too: [\p{P}$+<=>^~|]+, then gpt2's expression without its last
//       \s+, then \p{N}+, then [0-9][0-9][0-9]
// Each expression is matched left to right, leftmost alternative first, as a regular-expression
// search would; a word's end is the end of the text for (?!\S).
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace infini::text {

enum class PreTokenizer { Llama3, Qwen2, Gpt2, Default };

// The pre-tokenizer a tokenizer.ggml.pre value names; nullopt for names infini does not know.
std::optional<PreTokenizer> pre_tokenizer_named(std::string_view name);
// Whether llama.cpp ignores merges for whole words that are tokens, and adds BOS by default.
bool ignores_merges(PreTokenizer p);
bool adds_bos_by_default(PreTokenizer p);

// The words of `text` (code points) as [begin, end) offsets, in order, covering all of it.
struct WordSpan {
  size_t begin, end;
};
std::vector<WordSpan> split_words(PreTokenizer p, std::span<const char32_t> text);

}  // namespace infini::text
