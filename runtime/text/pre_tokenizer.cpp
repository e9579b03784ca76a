#include "text/pre_tokenizer.hpp"

#include <array>
#include <functional>

#include "text/unicode.hpp"

namespace infini::text {
namespace {

// One word of the text being matched: positions past its end read as kEnd, which is no class.
struct Cursor {
  std::span<const char32_t> word;
  static constexpr char32_t kEnd = 0xFFFFFFFF;
  char32_t at(size_t i) const { return i < word.size() ? word[i] : kEnd; }
  bool letter(size_t i) const { return i < word.size() && is_letter(word[i]); }
  bool number(size_t i) const { return i < word.size() && is_number(word[i]); }
  bool space(size_t i) const { return i < word.size() && is_whitespace(word[i]); }
  // [^\s\p{L}\p{N}]
  bool other(size_t i) const { return i < word.size() && !space(i) && !letter(i) && !number(i); }
};

char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd at i: the match length, or 0.
size_t contraction(const Cursor& c, size_t i, bool any_case) {
  if (c.at(i) != '\'') return 0;
  const auto low = [&](size_t k) { return any_case ? ascii_lower(c.at(k)) : c.at(k); };
  const char32_t a = low(i + 1), b = low(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S) then \s+ (when `plain_run`) at i: the match length, or 0.
size_t whitespace_run(const Cursor& c, size_t i, bool plain_run) {
  size_t n = 0;
  while (c.space(i + n)) ++n;
  if (n == 0) return 0;
  if (i + n >= c.word.size()) return n;  // (?!\S) holds at the end
  if (n > 1) return n - 1;               // leave the last space to the next word
  return plain_run ? n : 0;
}

// The llama3 / qwen2 expression at i (max_digits 3 or 1). Every position matches something.
size_t match_llama3(const Cursor& c, size_t i, size_t max_digits) {
  if (size_t n = contraction(c, i, true)) return n;
  const char32_t first = c.at(i);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.letter(i) || (first != '\r' && first != '\n' && !c.number(i) && c.letter(i + 1))) {
    size_t n = 1;
    while (c.letter(i + n)) ++n;
    return n;
  }
  // \p{N}{1,max_digits}
  if (c.number(i)) {
    size_t n = 1;
    while (n < max_digits && c.number(i + n)) ++n;
    return n;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t o = first == ' ' ? 1 : 0;
  if (c.other(i + o)) {
    size_t n = o + 1;
    while (c.other(i + n)) ++n;
    while (c.at(i + n) == '\r' || c.at(i + n) == '\n') ++n;
    return n;
  }
  // \s*[\r\n]+ : up to the last line break of the whitespace run
  size_t run = 0, last_break = 0;
  while (c.space(i + run)) {
    if (c.at(i + run) == '\r' || c.at(i + run) == '\n') last_break = run + 1;
    ++run;
  }
  if (last_break > 0) return last_break;
  if (size_t n = whitespace_run(c, i, true)) return n;
  return 1;  // unreachable for text: every code point is a letter, number, other or space
}

// GPT-2's expression at i; without the final \s+ when `plain_run` is false (default's pass 2).
size_t match_gpt2(const Cursor& c, size_t i, bool plain_run) {
  if (size_t n = contraction(c, i, false)) return n;
  const size_t o = c.at(i) == ' ' ? 1 : 0;
  for (const auto& in_class : std::array<std::function<bool(size_t)>, 3>{
           [&](size_t k) { return c.letter(k); }, [&](size_t k) { return c.number(k); },
           [&](size_t k) { return c.other(k); }}) {
    if (!in_class(i + o)) continue;
    size_t n = o + 1;
    while (in_class(i + n)) ++n;
    return n;
  }
  return whitespace_run(c, i, plain_run);
}

// [\p{P}$+<=>^~|]+
size_t match_punctuation(const Cursor& c, size_t i) {
  const auto in = [&](size_t k) {
    const char32_t ch = c.at(k);
    return (k < c.word.size() && is_punctuation(ch)) || ch == '$' || ch == '+' || ch == '<' || ch == '=' ||
           ch == '>' || ch == '^' || ch == '~' || ch == '|';
  };
  size_t n = 0;
  while (in(i + n)) ++n;
  return n;
}

size_t match_numbers(const Cursor& c, size_t i) {
  size_t n = 0;
  while (c.number(i + n)) ++n;
  return n;
}

size_t match_three_digits(const Cursor& c, size_t i) {
  for (size_t k = 0; k < 3; ++k)
    if (c.at(i + k) < '0' || c.at(i + k) > '9') return 0;
  return 3;
}

using Matcher = std::function<size_t(const Cursor&, size_t)>;

// Splits every word of `words` by `match` as a regular-expression search does: at each position
// a match (length > 0) becomes a word, text between matches becomes a word of its own.
std::vector<WordSpan> split_pass(std::span<const char32_t> text, const std::vector<WordSpan>& words,
                                 const Matcher& match) {
  std::vector<WordSpan> out;
  out.reserve(words.size() * 2);
  for (const WordSpan& w : words) {
    const Cursor c{text.subspan(w.begin, w.end - w.begin)};
    size_t gap = 0;
    for (size_t i = 0; i < c.word.size();) {
      const size_t n = match(c, i);
      if (n == 0) {
        ++i;
        continue;
      }
      if (i > gap) out.push_back({w.begin + gap, w.begin + i});
      out.push_back({w.begin + i, w.begin + i + n});
      i += n;
      gap = i;
    }
    if (gap < c.word.size()) out.push_back({w.begin + gap, w.end});
  }
  return out;
}

}  // namespace

std::optional<PreTokenizer> pre_tokenizer_named(std::string_view name) {
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return PreTokenizer::Llama3;
  if (name == "qwen2" || name == "deepseek-r1-qwen") return PreTokenizer::Qwen2;
  if (name == "gpt-2" || name == "phi-2") return PreTokenizer::Gpt2;
  if (name == "default") return PreTokenizer::Default;
  return std::nullopt;
}

bool ignores_merges(PreTokenizer p) { return p == PreTokenizer::Llama3; }
bool adds_bos_by_default(PreTokenizer p) { return p == PreTokenizer::Llama3; }

std::vector<WordSpan> split_words(PreTokenizer p, std::span<const char32_t> text) {
  std::vector<WordSpan> words;
  if (text.empty()) return words;
  words.push_back({0, text.size()});
  switch (p) {
    case PreTokenizer::Llama3: return split_pass(text, words, [](const Cursor& c, size_t i) { return match_llama3(c, i, 3); });
    case PreTokenizer::Qwen2: return split_pass(text, words, [](const Cursor& c, size_t i) { return match_llama3(c, i, 1); });
    case PreTokenizer::Gpt2: return split_pass(text, words, [](const Cursor& c, size_t i) { return match_gpt2(c, i, true); });
    case PreTokenizer::Default:
      words = split_pass(text, words, match_punctuation);
      words = split_pass(text, words, [](const Cursor& c, size_t i) { return match_gpt2(c, i, false); });
      words = split_pass(text, words, match_numbers);
      return split_pass(text, words, match_three_digits);
  }
  return words;
}

}  // namespace infini::text
