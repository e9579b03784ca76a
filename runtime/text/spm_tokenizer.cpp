#include "text/spm_tokenizer.hpp"

#include <algorithm>
#include <limits>
#include <queue>

#include "infini/error.hpp"

namespace infini::model {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
// Merge state uses 32-bit positions: half the memory of size_t on the megabyte texts it sees.
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Length of the well-formed UTF-8 sequence at s[i], or 1 when s[i] does not start one, so that an
// invalid byte becomes a symbol of its own (Unicode Table 3-7).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t lead = b(0);
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 1;
  }
  if (s.size() - i < n) return 1;
  if (b(1) < lo || b(1) > hi) return 1;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 1;
  return n;
}

// "<0xXX>" with two upper- or lower-case hex digits -> the byte, else -1.
int parse_byte_text(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  int value = 0;
  for (char c : t.substr(3, 2)) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

std::string unescape_spaces(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    if (t.substr(i, kSpace.size()) == kSpace) {
      out += ' ';
      i += kSpace.size();
    } else {
      out += t[i++];
    }
  }
  return out;
}


// A text symbol in the merge list: a byte range of the escaped fragment; length 0 once merged away.
struct Symbol {
  uint32_t prev, next, offset, length;
};

// A candidate merge of symbols[left] and the symbol after it, valid while both still have the
// lengths they had when it was queued (merging only ever grows a symbol or empties it).
struct Bigram {
  float score;
  uint32_t left, right, length;
};

// Highest score on top; equal scores: leftmost pair on top.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(const Vocabulary& vocab, bool add_space_prefix)
    : table_(
          vocab, TokenTable::Duplicates::LastWins,
          [&](size_t i) {  // without token types: bos/eos control, unknown, <0xXX> bytes, else normal
            if (int32_t(i) == vocab.bos || int32_t(i) == vocab.eos) return TokenType::Control;
            if (int32_t(i) == vocab.unknown) return TokenType::Unknown;
            return parse_byte_text(vocab.tokens[i]) >= 0 ? TokenType::Byte : TokenType::Normal;
          },
          [](size_t i, const std::string& t, TokenType type) {
            switch (type) {
              case TokenType::Normal: return unescape_spaces(t);
              case TokenType::Byte:
                if (parse_byte_text(t) < 0)
                  throw Error("vocabulary: byte token " + std::to_string(i) + " is not spelled <0xXX>");
                return std::string(1, char(parse_byte_text(t)));
              case TokenType::UserDefined: return t;
              default: return std::string();  // control, unknown, unused, undefined: as llama.cpp without `special`
            }
          }),
      scores_(vocab.scores),
      bos_(vocab.bos),
      eos_(vocab.eos),
      unknown_(vocab.unknown),
      add_bos_(vocab.add_bos),
      add_space_prefix_(add_space_prefix) {
  if (!vocab.model.empty() && vocab.model != "llama")
    throw Error("vocabulary: tokenizer model '" + vocab.model + "' is not supported (only 'llama', SentencePiece)");
  const size_t n = table_.size();
  if (scores_.empty()) scores_.assign(n, 0.0f);
  if (scores_.size() != n)
    throw Error("vocabulary: " + std::to_string(scores_.size()) + " scores for " + std::to_string(n) + " tokens");
  for (const std::string& t : table_.texts()) max_token_bytes_ = std::max(max_token_bytes_, t.size());

  // Byte fallback: "<0xXX>" (llama.cpp spells it upper-case), else the one-byte text itself.
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char name[] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    int32_t id = find(std::string_view(name, sizeof(name)));
    if (id < 0) id = find(std::string_view(std::string(1, char(b))));
    byte_tokens_[size_t(b)] = id;
  }
}

const std::string& SpmTokenizer::piece(int32_t token) const { return table_.piece(token); }
const std::string& SpmTokenizer::text(int32_t token) const { return table_.text(token); }
TokenType SpmTokenizer::type(int32_t token) const { return table_.type(token); }

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos) {
    if (bos_ < 0) throw Error("vocabulary has no BOS token to add");
    out.push_back(bos_);
  }

  // Partition: raw fragments (token -1) and matched special tokens, in text order.
  const std::vector<TextFragment> fragments = table_.partition(text, parse_special);

  bool after_special = true;  // the text start counts as following a special token
  std::string escaped;
  for (const TextFragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    escaped.clear();
    escaped.reserve(f.length + f.length / 4 + kSpace.size());
    if (add_space_prefix_ && after_special) escaped += kSpace;
    for (char c : text.substr(f.offset, f.length)) {
      if (c == ' ')
        escaped += kSpace;
      else
        escaped += c;
    }
    encode_fragment(escaped, out);
    after_special = false;
  }
  return out;
}

void SpmTokenizer::encode_fragment(std::string_view s, std::vector<int32_t>& out) const {
  if (s.size() >= kNone)
    throw Error("text of " + std::to_string(s.size()) + " bytes between special tokens is too long (4 GiB max)");
  // A doubly linked list of symbols, one per UTF-8 character to begin with.
  std::vector<Symbol> symbols;
  symbols.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_length(s, i);
    const auto index = uint32_t(symbols.size());
    symbols.push_back({index == 0 ? kNone : index - 1, kNone, uint32_t(i), uint32_t(len)});
    if (index > 0) symbols[index - 1].next = index;
    i += len;
  }

  std::vector<Bigram> storage;
  storage.reserve(symbols.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{}, std::move(storage));
  const auto try_pair = [&](uint32_t left, uint32_t right) {
    if (left == kNone || right == kNone) return;
    const uint32_t length = symbols[left].length + symbols[right].length;
    if (length > max_token_bytes_) return;
    const int32_t id = find(s.substr(symbols[left].offset, length));
    if (id >= 0) queue.push({scores_[size_t(id)], left, right, length});
  };
  for (uint32_t i = 1; i < symbols.size(); ++i) try_pair(i - 1, i);

  while (!queue.empty()) {
    const Bigram top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    // Stale: one side was merged away or has grown since this pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != top.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next != kNone) symbols[right.next].prev = top.left;
    try_pair(left.prev, top.left);
    try_pair(top.left, left.next);
  }

  for (uint32_t i = symbols.empty() ? kNone : 0; i != kNone; i = symbols[i].next)
    emit_symbol(s.substr(symbols[i].offset, symbols[i].length), out);
}

void SpmTokenizer::emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const {
  const int32_t id = find(symbol);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  const bool all_bytes = std::all_of(symbol.begin(), symbol.end(),
                                     [&](char c) { return byte_tokens_[static_cast<uint8_t>(c)] >= 0; });
  if (all_bytes) {
    for (char c : symbol) out.push_back(byte_tokens_[static_cast<uint8_t>(c)]);
    return;
  }
  if (unknown_ < 0) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const auto b = static_cast<uint8_t>(*std::find_if(
        symbol.begin(), symbol.end(), [&](char c) { return byte_tokens_[static_cast<uint8_t>(c)] < 0; }));
    throw Error(std::string("vocabulary has no token, byte token or unknown token for byte 0x") + kHex[b >> 4] +
                kHex[b & 15]);
  }
  out.push_back(unknown_);
}

std::string SpmTokenizer::decode(std::span<const int32_t> tokens, bool strip_leading_space) const {
  for (int32_t t : tokens) table_.check_id(t);
  size_t first = 0;
  if (!tokens.empty() && bos_ >= 0 && tokens[0] == bos_) first = 1;
  std::string out;
  for (size_t i = first; i < tokens.size(); ++i) {
    std::string_view p = table_.piece(tokens[i]);
    // The dummy prefix encode added to the text start (see the header comment).
    if (i == first && strip_leading_space && add_space_prefix_ && !p.empty() && p[0] == ' ') p.remove_prefix(1);
    out += p;
  }
  return out;
}

}  // namespace infini::model
