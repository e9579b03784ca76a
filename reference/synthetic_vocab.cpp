// The synthetic vocabulary (see synthetic_vocab.hpp). Pieces are generated in a fixed order, so a
// given size always yields the same vocabulary, and a larger one extends a smaller one.
#include "reference/synthetic_vocab.hpp"

#include <cstdio>
#include <set>

#include "infini/error.hpp"

namespace infini::model {

namespace {

constexpr const char* kBoundary = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK, "▁"

constexpr const char* kWords[] = {
    "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are", "with",
    "as", "I", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "not", "word",
    "but", "what", "some", "we", "can", "out", "other", "were", "all", "there", "when", "up", "use", "your",
    "how", "said", "an", "each", "she", "which", "do", "their", "time", "if", "will", "way", "about", "many",
    "then", "them", "write", "would", "like", "so", "these", "her", "long", "make", "thing", "see", "him",
    "two", "has", "look", "more", "day", "could", "go", "come", "did", "number", "sound", "no", "most",
    "people", "my", "over", "know", "water", "than", "call", "first", "who", "may", "down", "side", "been",
    "now", "find", "memory", "attention", "segment", "key", "pass", "infinite", "context", "stream",
};

// Letter strings of length `len` in order a, b, ..., z, aa, ab, ...: index -> string.
std::string letters(uint64_t index, int len) {
  std::string s(static_cast<std::size_t>(len), 'a');
  for (int i = len - 1; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = static_cast<char>('a' + index % 26);
    index /= 26;
  }
  return s;
}

class PieceSource {
 public:
  // The next unused piece.
  std::string next() {
    for (;;) {
      std::string p = candidate();
      if (seen_.insert(p).second) return p;
    }
  }

 private:
  std::string candidate() {
    const uint64_t n = step_++;
    if (n == 0) return kBoundary;
    const uint64_t words = std::size(kWords);
    if (n <= words) return std::string(kBoundary) + kWords[n - 1];
    // Then, per length L = 1, 2, ...: every letter string bare and with the boundary prefix.
    uint64_t k = n - 1 - words;
    for (int len = 1;; ++len) {
      uint64_t count = 1;
      for (int i = 0; i < len; ++i) count *= 26;
      if (k < 2 * count) return k < count ? letters(k, len) : std::string(kBoundary) + letters(k - count, len);
      k -= 2 * count;
    }
  }

  uint64_t step_ = 0;
  std::set<std::string> seen_;
};

}  // namespace

SyntheticVocab synthetic_spm_vocab(int64_t size) {
  if (size < 3) throw Error("synthetic vocabulary: size " + std::to_string(size) + " is below 3 (<unk>, <s>, </s>)");
  SyntheticVocab v;
  const auto n = static_cast<std::size_t>(size);
  v.tokens.reserve(n);
  auto add = [&](std::string token, float score, int32_t type) {
    if (v.tokens.size() >= n) return;
    v.tokens.push_back(std::move(token));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0.0f, kTokenUnknown);
  add("<s>", 0.0f, kTokenControl);
  add("</s>", 0.0f, kTokenControl);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0.0f, kTokenByte);
  }
  PieceSource pieces;
  for (float score = -1.0f; v.tokens.size() < n; score -= 1.0f) add(pieces.next(), score, kTokenNormal);
  return v;
}

}  // namespace infini::model
