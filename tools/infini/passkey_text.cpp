#include "passkey_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace infini::cli {
namespace {

constexpr std::string_view kIntro =
    "There is an important info hidden inside a lot of irrelevant text. "
    "Find it and memorize them. I will quiz you about the important information there.";
constexpr std::string_view kGrassBlock =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
// Only characters the task's own texts use, so a character-level vocabulary (the demo model's)
// spends one token on each, as on the other filler.
constexpr std::string_view kRiversBlock =
    "Rivers run down to the sea. Wind moves over the hills at night. Fresh bread is baked before "
    "dawn. Ships rest in the harbour. In winter the birds fly south. ";

std::string_view filler_block(PasskeyFiller f) { return f == PasskeyFiller::Rivers ? kRiversBlock : kGrassBlock; }
constexpr std::string_view kQuestion = "What is the pass key? The pass key is";

std::string key_line(const std::string& key) {
  return "The pass key is " + key + ". Remember it. " + key + " is the pass key. ";
}

std::vector<int64_t> sentence_starts(std::string_view block) {
  std::vector<int64_t> starts{0};
  for (size_t i = 0; i + 2 < block.size(); ++i)
    if (block.substr(i, 2) == ". ") starts.push_back(int64_t(i) + 2);
  return starts;
}

}  // namespace



int64_t passkey_fixed_chars() {
  return int64_t(kIntro.size() + 1 + key_line("00000").size() + kQuestion.size());
}

std::string passkey_text(int64_t filler_chars, double depth, const std::string& key, PasskeyFiller which) {
  const std::string_view kFillerBlock = filler_block(which);
  const int64_t block = int64_t(kFillerBlock.size());
  const double target = depth * double(filler_chars);
  const int64_t around = int64_t(std::floor(target / double(block)));
  int64_t best = 0;
  for (int64_t b = around - 1; b <= around + 1; ++b)
    for (int64_t s : sentence_starts(kFillerBlock)) {
      const int64_t at = b * block + s;
      if (at >= 0 && at <= filler_chars && std::abs(double(at) - target) < std::abs(double(best) - target)) best = at;
    }
  std::string text;
  text.reserve(size_t(filler_chars + passkey_fixed_chars()) + key.size() * 2);
  text += kIntro;
  text += ' ';
  auto filler = [&](int64_t from, int64_t to) {  // characters [from, to) of the endless filler stream
    for (int64_t i = from; i < to; ++i) text += kFillerBlock[size_t(i % block)];
  };
  filler(0, best);
  text += key_line(key);
  filler(best, filler_chars);
  text += kQuestion;
  return text;
}

int64_t passkey_filler_for_tokens(int64_t tokens) { return std::max<int64_t>(0, tokens - 2 - passkey_fixed_chars()); }

}  // namespace infini::cli
