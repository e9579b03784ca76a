#include "reference/synthetic_bpe_vocab.hpp"

#include <map>
#include <set>
#include <string_view>

#include "infini/error.hpp"
#include "reference/synthetic_vocab.hpp"
#include "text/unicode.hpp"

namespace infini::model {
namespace {

// What the merges are learned from: written for this purpose, mixing the things pre-tokenizers
// treat differently.
constexpr std::string_view kCorpus =
    "Hello world. Hello again, world! The stream goes on and on: a model reads it segment by segment, and "
    "its memory keeps what the attention has seen. It's the memory that they've kept, and we'll read it "
    "again. Don't stop the stream! I'm sure you'd say the same; we're reading, they'll be writing.\n\n"
    "In 2024 there were 12345 tokens, then 678 more; 3.14159 is not 22/7, and 1,000,000 is a million. "
    "Numbers like 100, 200, 300 and 2025 come back again and again: 100 + 200 = 300.\n"
    "    def read(self, tokens):\n        return self.memory + tokens  # keep it\n"
    "    for token in tokens:\n        if token == self.end:\n            break\n"
    "Café, naïve, résumé and Zürich are words too; so are café and naïveté. "
    "Ελληνικά και ελληνικά, русский текст и русский язык. "
    "日本語の文章と中文的句子。日本語の文章。中文的句子。 한국어 문장, 한국어 문장. "
    "Emoji: 🙂🚀✨ 🙂🚀✨ and symbols: <=> ^~| $100 +5% <=> ^~| $200 +7%...!!! ???\n"
    "the the the stream stream memory memory attention segment segment tokens tokens\r\n"
    "THE STREAM, The Stream, the stream... again and again and again.\t\tTabs\tand  spaces   end.\n"
    "A long context is read in pieces; each piece updates a fixed memory, so the cost of the next "
    "piece does not grow with the length of what came before. That is the point of the memory.";

std::string spell(std::string_view utf8) {
  std::string out;
  for (char c : utf8) text::append_utf8(text::char_of_byte(uint8_t(c)), out);
  return out;
}

std::vector<std::string> characters(const std::string& spelled) {
  std::vector<std::string> out;
  for (char32_t cp : text::decode_utf8_lenient(spelled)) {
    std::string s;
    text::append_utf8(cp, s);
    out.push_back(s);
  }
  return out;
}

}  // namespace

SyntheticBpeVocab synthetic_bpe_vocab(int64_t size, text::PreTokenizer pre) {
  constexpr int64_t kNamed = 4;
  if (size < 256 + kNamed) throw Error("a BPE vocabulary needs at least 260 tokens (256 bytes, 4 control), not " + std::to_string(size));
  SyntheticBpeVocab v;
  std::set<std::string> known;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    text::append_utf8(text::char_of_byte(uint8_t(b)), s);
    v.tokens.push_back(s);
    v.types.push_back(kTokenNormal);
    known.insert(s);
  }
  // Words of the corpus as symbol sequences, with their counts.
  std::map<std::vector<std::string>, int64_t> words;
  const std::vector<char32_t> cps = text::decode_utf8_lenient(kCorpus);
  for (const text::WordSpan& w : text::split_words(pre, cps)) {
    std::string utf8;
    for (size_t i = w.begin; i < w.end; ++i) text::append_utf8(cps[i], utf8);
    ++words[characters(spell(utf8))];
  }
  const int64_t merge_budget = size - 256 - kNamed;
  while (int64_t(v.merges.size()) < merge_budget) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;
    for (const auto& [symbols, count] : words)
      for (size_t i = 0; i + 1 < symbols.size(); ++i) pairs[{symbols[i], symbols[i + 1]}] += count;
    const std::pair<std::string, std::string>* best = nullptr;
    int64_t best_count = 1;  // a pair seen once is not worth a token
    for (const auto& [pair, count] : pairs)
      if (count > best_count) best = &pair, best_count = count;
    if (!best) break;
    const auto [left, right] = *best;
    v.merges.push_back(left + " " + right);
    if (known.insert(left + right).second) {
      v.tokens.push_back(left + right);
      v.types.push_back(kTokenNormal);
    }
    std::map<std::vector<std::string>, int64_t> merged;
    for (const auto& [symbols, count] : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          out.push_back(left + right);
          ++i;
        } else {
          out.push_back(symbols[i]);
        }
      }
      merged[out] += count;
    }
    words.swap(merged);
    if (int64_t(v.tokens.size()) >= size - kNamed) break;
  }
  v.bos = int32_t(v.tokens.size());
  v.eos = v.bos + 1;
  for (const char* name : {"<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"}) {
    v.tokens.push_back(name);
    v.types.push_back(kTokenControl);
  }
  for (int64_t i = 0; int64_t(v.tokens.size()) < size; ++i) {
    v.tokens.push_back("<|reserved_" + std::to_string(i) + "|>");
    v.types.push_back(kTokenControl);
  }
  return v;
}

}  // namespace infini::model
