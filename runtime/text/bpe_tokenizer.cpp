#include "text/bpe_tokenizer.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "infini/error.hpp"
#include "infini/printable.hpp"
#include "text/unicode.hpp"

namespace infini::model {
namespace {

// A merge quoted in a message: its control bytes escaped (a file's merges are untrusted) and cut.
constexpr std::size_t kMaxQuotedMerge = 64;

// Bytes of the UTF-8 character led by `lead` (the spelled words are well-formed UTF-8).
size_t char_length(char lead) {
  const auto b = uint8_t(lead);
  return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

// A token's characters mapped back to bytes; a character outside the byte alphabet keeps its
// UTF-8 (a vocabulary that is not byte-level at that token).
std::string unspell(std::string_view spelled) {
  std::string out;
  for (char32_t cp : text::decode_utf8_lenient(spelled)) {
    const int b = text::byte_of_char(cp);
    if (b >= 0)
      out += char(b);
    else
      text::append_utf8(cp, out);
  }
  return out;
}


}  // namespace

BpeTokenizer::BpeTokenizer(const Vocabulary& vocab)
    : table_(vocab, TokenTable::Duplicates::Refuse, [](size_t) { return TokenType::Normal; },
             [](size_t, const std::string& t, TokenType type) {
               switch (type) {
                 case TokenType::Normal:
                 case TokenType::Byte: return unspell(t);
                 case TokenType::UserDefined: return t;
                 default: return std::string();  // control, unknown, unused, undefined: as llama.cpp without `special`
               }
             }),
      bos_(vocab.bos),
      eos_(vocab.eos),
      add_bos_(vocab.add_bos),
      add_eos_(vocab.add_eos) {
  const std::string pre = vocab.pre.empty() ? "default" : vocab.pre;
  const std::optional<text::PreTokenizer> p = text::pre_tokenizer_named(pre);
  if (!p)
    throw Error("vocabulary: tokenizer.ggml.pre '" + pre +
                "' is not a pre-tokenizer infini knows (llama-bpe, llama3, qwen2, gpt-2, default)");
  pre_ = *p;
  ignore_merges_ = text::ignores_merges(pre_);

  ranks_.reserve(vocab.merges.size());
  for (size_t r = 0; r < vocab.merges.size(); ++r) {
    const std::string& m = vocab.merges[r];
    const size_t space = m.find(' ', 1);  // a left part of " " would be spelled, never a space
    if (space == std::string::npos || space + 1 == m.size())
      throw Error("vocabulary: merge " + std::to_string(r) + " '" + printable(m, false, kMaxQuotedMerge) +
                  "' is not 'left right'");
    int32_t ids[2];
    const std::string_view parts[2] = {std::string_view(m).substr(0, space), std::string_view(m).substr(space + 1)};
    for (int i = 0; i < 2; ++i)
      if ((ids[i] = table_.find(parts[i])) < 0)
        throw Error("vocabulary: merge " + std::to_string(r) + " '" + printable(m, false, kMaxQuotedMerge) + "' names '" +
                    printable(parts[i], false, kMaxQuotedMerge) + "', which is not a token");
    ranks_.emplace(pair_key(ids[0], ids[1]), int32_t(r));  // a repeated merge keeps its first rank, as in llama.cpp
  }
}

uint64_t BpeTokenizer::pair_key(int32_t left, int32_t right) { return uint64_t(uint32_t(left)) << 32 | uint32_t(right); }

int32_t BpeTokenizer::rank(int32_t left, int32_t right) const {
  if (left < 0 || right < 0) return -1;
  const auto it = ranks_.find(pair_key(left, right));
  return it == ranks_.end() ? -1 : it->second;
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos) {
    if (bos_ < 0) throw Error("vocabulary has no BOS token to add");
    out.push_back(bos_);
  }
  const std::vector<TextFragment> fragments = table_.partition(text, parse_special);
  std::string spelled, utf8;
  for (const TextFragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      continue;
    }
    const std::vector<char32_t> cps = text::decode_utf8_lenient(text.substr(f.offset, f.length));
    for (const text::WordSpan& w : text::split_words(pre_, cps)) {
      utf8.clear();
      for (size_t i = w.begin; i < w.end; ++i) text::append_utf8(cps[i], utf8);
      spelled.clear();
      for (char c : utf8) text::append_utf8(text::char_of_byte(uint8_t(c)), spelled);
      encode_word(spelled, out);
    }
  }
  if (add_bos && add_eos_ && eos_ >= 0) out.push_back(eos_);
  return out;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (ignore_merges_) {
    if (const int32_t id = table_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  // A doubly linked list of symbols, one per character to begin with, each with its token id
  // (-1 when its text is no token: merges name tokens only, so such a symbol never merges); a
  // queue of candidate merges ordered by rank, then by position. A popped merge whose pair of
  // symbols is no longer that rank's pair is stale and skipped.
  struct Symbol {
    uint32_t begin, length;
    int32_t prev, next, id;
  };
  std::vector<Symbol> symbols;
  for (uint32_t i = 0; i < word.size();) {
    const auto n = uint32_t(std::min(char_length(word[i]), word.size() - i));
    symbols.push_back({i, n, int32_t(symbols.size()) - 1, -1, table_.find(word.substr(i, n))});
    i += n;
  }
  for (size_t i = 0; i + 1 < symbols.size(); ++i) symbols[i].next = int32_t(i + 1);
  struct Candidate {
    int32_t rank, left;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto view = [&](const Symbol& s) { return word.substr(s.begin, s.length); };
  const auto pair_rank = [&](const Symbol& l) { return l.next < 0 ? -1 : rank(l.id, symbols[size_t(l.next)].id); };
  const auto consider = [&](int32_t left) {
    if (left < 0) return;
    if (const int32_t k = pair_rank(symbols[size_t(left)]); k >= 0) queue.push({k, left});
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i) consider(int32_t(i));
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[size_t(c.left)];
    if (l.length == 0 || pair_rank(l) != c.rank) continue;  // stale: ranks are one per pair
    Symbol& r = symbols[size_t(l.next)];
    l.length += r.length;
    l.id = table_.find(view(l));
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[size_t(r.next)].prev = c.left;
    consider(l.prev);
    consider(c.left);
  }
  for (const Symbol& s : symbols) {
    if (s.length == 0) continue;
    if (s.id >= 0) {
      out.push_back(s.id);
      continue;
    }
    const std::string_view t = view(s);
    for (size_t i = 0; i < t.size(); ++i)  // llama.cpp looks up each byte of the spelling
      if (const int32_t id = table_.find(t.substr(i, 1)); id >= 0) out.push_back(id);
  }
}

std::string BpeTokenizer::decode(std::span<const int32_t> tokens) const {
  std::string out;
  for (int32_t t : tokens) out += piece(t);
  return out;
}

}  // namespace infini::model
