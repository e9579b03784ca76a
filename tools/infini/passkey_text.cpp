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

// "pass key", or "blue pass key" for a named one.
std::string key_title(const std::string& name) { return name.empty() ? "pass key" : name + " pass key"; }

std::string key_line(const HiddenKey& k) {
  const std::string title = key_title(k.name);
  return "The " + title + " is " + k.key + ". Remember it. " + k.key + " is the " + title + ". ";
}

std::string question(const HiddenKey& k) {
  const std::string title = key_title(k.name);
  return "What is the " + title + "? The " + title + " is";
}

std::vector<int64_t> sentence_starts(std::string_view block) {
  std::vector<int64_t> starts{0};
  for (size_t i = 0; i + 2 < block.size(); ++i)
    if (block.substr(i, 2) == ". ") starts.push_back(int64_t(i) + 2);
  return starts;
}

}  // namespace



const std::vector<std::string>& passkey_key_names() {
  // Words of letters the task's own texts use, so a character-level vocabulary has them all, and
  // of one length, so that the inputs asking for each key are the same text up to the question.
  static const std::vector<std::string> names = {"blue", "gold", "grey", "pink", "rose", "sand", "teal", "mint"};
  return names;
}

int64_t passkey_fixed_chars(const std::vector<HiddenKey>& keys, size_t asked) {
  int64_t chars = int64_t(kIntro.size() + 1 + question(keys.at(asked)).size());
  for (const HiddenKey& k : keys) chars += int64_t(key_line(k).size());
  return chars;
}

int64_t passkey_fixed_chars() { return passkey_fixed_chars({HiddenKey{0.0, "00000", ""}}, 0); }

std::string passkey_text(int64_t filler_chars, const std::vector<HiddenKey>& keys, size_t asked, PasskeyFiller which) {
  const std::string_view kFillerBlock = filler_block(which);
  const int64_t block = int64_t(kFillerBlock.size());
  // Each key's place: the sentence start nearest its depth; stable order for keys in one place.
  std::vector<std::pair<int64_t, size_t>> places;
  for (size_t i = 0; i < keys.size(); ++i) {
    const double target = keys[i].depth * double(filler_chars);
    const int64_t around = int64_t(std::floor(target / double(block)));
    int64_t best = 0;
    for (int64_t b = around - 1; b <= around + 1; ++b)
      for (int64_t st : sentence_starts(kFillerBlock)) {
        const int64_t at = b * block + st;
        if (at >= 0 && at <= filler_chars && std::abs(double(at) - target) < std::abs(double(best) - target)) best = at;
      }
    places.emplace_back(best, i);
  }
  std::stable_sort(places.begin(), places.end());
  std::string text;
  text.reserve(size_t(filler_chars + passkey_fixed_chars(keys, asked)));
  text += kIntro;
  text += ' ';
  auto filler = [&](int64_t from, int64_t to) {  // characters [from, to) of the endless filler stream
    for (int64_t i = from; i < to; ++i) text += kFillerBlock[size_t(i % block)];
  };
  int64_t done = 0;
  for (const auto& [at, i] : places) {
    filler(done, at);
    text += key_line(keys[i]);
    done = at;
  }
  filler(done, filler_chars);
  text += question(keys.at(asked));
  return text;
}

std::string passkey_text(int64_t filler_chars, double depth, const std::string& key, PasskeyFiller which) {
  return passkey_text(filler_chars, {HiddenKey{depth, key, ""}}, 0, which);
}

int64_t passkey_filler_for_tokens(int64_t tokens, int64_t fixed_chars) { return std::max<int64_t>(0, tokens - 2 - fixed_chars); }

int64_t passkey_filler_for_tokens(int64_t tokens) { return passkey_filler_for_tokens(tokens, passkey_fixed_chars()); }

}  // namespace infini::cli
