// SentencePiece ("spm") tokenizer: segmentations worked out by hand on a tiny vocabulary, byte and
// unknown fallback, user-defined tokens, decode(encode(x)) == x on random bytes, a 1 MB input, bad
// vocabularies and ids, and an O(n^2) reference implementation of the merge rule written
// independently here, compared on random strings.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "infini/error.hpp"
#include "text/spm_tokenizer.hpp"

using infini::Error;
using infini::model::SpmTokenizer;
using infini::model::TokenType;
using infini::model::Vocabulary;
using Ids = std::vector<int32_t>;

namespace {

const std::string kU = "\xE2\x96\x81";  // "▁"

std::string byte_name(int b) {
  static const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

// ids 0..2 <unk> <s> </s>; 3.. the pieces below; with_bytes appends <0x00>..<0xFF>.
struct Built {
  Vocabulary vocab;
  std::map<std::string, int32_t> id;
};

Built build(const std::vector<std::pair<std::string, float>>& pieces, bool with_bytes, bool typed = true) {
  Built b;
  Vocabulary& v = b.vocab;
  v.model = "llama";
  const auto add = [&](const std::string& text, float score, int32_t type) {
    b.id[text] = int32_t(v.tokens.size());
    v.tokens.push_back(text);
    v.scores.push_back(score);
    v.token_types.push_back(type);
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (const auto& [text, score] : pieces) add(text, score, 1);
  if (with_bytes)
    for (int i = 0; i < 256; ++i) add(byte_name(i), 0, 6);
  if (!typed) v.token_types.clear();
  v.unknown = 0;
  v.bos = 1;
  v.eos = 2;
  return b;
}

// Scores make the hand-worked examples below non-trivial: the highest-scoring pair is not always
// the longest token, and "aa" ties with itself.
Built small(bool with_bytes = true) {
  return build({{kU, -10},
                {"a", -1},
                {"b", -1},
                {"c", -1},
                {"ab", -2},
                {"bc", -3},
                {kU + "a", -4},
                {kU + "ab", -1.5f},
                {"aa", -5},
                {"abc", -0.5f},
                {"x", -1},
                {kU + "x", -6}},
               with_bytes);
}

// ---- independent O(n^2) reference --------------------------------------------------------------

// Code point decoding with explicit validity checks (a different formulation from the runtime's
// lead-byte table): returns the length of a valid character at s[i], or 1.
size_t ref_char_length(const std::string& s, size_t i) {
  const auto u = [&](size_t k) { return unsigned(static_cast<unsigned char>(s[i + k])); };
  const unsigned c = u(0);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n <= 1) return 1;
  if (i + n > s.size()) return 1;
  unsigned cp = c & (0x7Fu >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((u(k) & 0xC0) != 0x80) return 1;
    cp = (cp << 6) | (u(k) & 0x3F);
  }
  const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 1;
  return n;
}

Ids reference_encode(const Vocabulary& v, const std::string& text, bool add_bos) {
  Ids out;
  if (add_bos) out.push_back(v.bos);
  if (text.empty()) return out;
  std::map<std::string, int32_t> ids;
  for (size_t i = 0; i < v.tokens.size(); ++i) ids[v.tokens[i]] = int32_t(i);
  std::string s = " " + text, escaped;
  for (char c : s) escaped += c == ' ' ? kU : std::string(1, c);
  std::vector<std::string> sym;
  for (size_t i = 0; i < escaped.size();) {
    const size_t n = ref_char_length(escaped, i);
    sym.push_back(escaped.substr(i, n));
    i += n;
  }
  for (;;) {
    std::optional<size_t> best;
    float best_score = 0;
    for (size_t i = 0; i + 1 < sym.size(); ++i) {
      const auto it = ids.find(sym[i] + sym[i + 1]);
      if (it == ids.end()) continue;
      const float score = v.scores[size_t(it->second)];
      if (!best || score > best_score) best = i, best_score = score;  // strict: leftmost wins ties
    }
    if (!best) break;
    sym[*best] += sym[*best + 1];
    sym.erase(sym.begin() + std::ptrdiff_t(*best + 1));
  }
  for (const std::string& s1 : sym) {
    if (ids.count(s1)) {
      out.push_back(ids[s1]);
      continue;
    }
    bool all = true;
    for (char c : s1) all = all && ids.count(byte_name(static_cast<unsigned char>(c)));
    if (!all) {
      out.push_back(v.unknown);
      continue;
    }
    for (char c : s1) out.push_back(ids[byte_name(static_cast<unsigned char>(c))]);
  }
  return out;
}

// Random bytes biased towards the letters and spaces of the vocabularies, with invalid UTF-8 and
// multi-byte characters mixed in, never containing a literal "▁" (which decodes to a space).
std::string random_text(std::mt19937& rng, size_t max_len) {
  static const std::vector<std::string> parts = {"a", "b", "c", " ", "x", "\xC3\xA9", "\xF0\x9F\x98\x80", "\n",
                                                 "\xC3", "\xA9", "\xFF", "\xE2\x96", "\xED\xA0\x80", "\xC0\xAF"};
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<size_t> pick(0, parts.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string s;
  for (;;) {
    s.clear();
    const size_t n = len(rng);
    while (s.size() < n) {
      if (rng() % 4 == 0)
        s += char(byte(rng));
      else
        s += parts[pick(rng)];
    }
    if (s.find(kU) == std::string::npos) return s;
  }
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("spm: hand-worked segmentations follow scores, ties go leftmost", "[tokenizer]") {
  Built b = small();
  SpmTokenizer tok(b.vocab);
  auto& id = b.id;
  // "▁abc": ab(-2) beats bc(-3) and ▁a(-4); then abc(-0.5) beats ▁ab(-1.5): the best-scoring pair,
  // not the longest match.
  CHECK(tok.encode("abc", false) == Ids{id[kU], id["abc"]});
  // "▁bcab": ab first, "cab" is no token, then bc.
  CHECK(tok.encode("bcab", false) == Ids{id[kU], id["bc"], id["ab"]});
  // "▁aaaa": ▁a(-4) first; "▁aa" is no token; the three-way tie of aa(-5) goes leftmost.
  CHECK(tok.encode("aaaa", false) == Ids{id[kU + "a"], id["aa"], id["a"]});
  // "▁ab▁ab": ab twice (leftmost first), then ▁ab twice; "ab▁" is no token.
  CHECK(tok.encode("ab ab", false) == Ids{id[kU + "ab"], id[kU + "ab"]});
  // A leading space gives two "▁": the first one stays alone.
  CHECK(tok.encode(" x", false) == Ids{id[kU], id[kU + "x"]});
  CHECK(tok.encode("x  x", false) == Ids{id[kU + "x"], id[kU], id[kU + "x"]});

  // Without the dummy prefix, a pure tie between different pairs goes leftmost too.
  Built t = build({{"a", 0}, {"b", 0}, {"c", 0}, {"ab", -1}, {"bc", -1}}, false);
  SpmTokenizer plain(t.vocab, /*add_space_prefix=*/false);
  CHECK(plain.encode("abc", false) == Ids{t.id["ab"], t.id["c"]});
  CHECK(plain.encode("aaa", false) == Ids{t.id["a"], t.id["a"], t.id["a"]});
  CHECK(plain.decode(plain.encode("abc", false)) == "abc");
}

TEST_CASE("spm: characters outside the vocabulary fall back to byte tokens", "[tokenizer]") {
  Built b = small();
  SpmTokenizer tok(b.vocab);
  auto& id = b.id;
  const auto bytes = [&](std::initializer_list<int> v) {
    Ids r;
    for (int x : v) r.push_back(id[byte_name(x)]);
    return r;
  };
  const auto cat = [](Ids a, const Ids& c) {
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  CHECK(tok.encode("\xC3\xA9", false) == cat({id[kU]}, bytes({0xC3, 0xA9})));
  CHECK(tok.encode("\xF0\x9F\x98\x80", false) == cat({id[kU]}, bytes({0xF0, 0x9F, 0x98, 0x80})));
  CHECK(tok.encode("a\nb", false) == cat(cat({id[kU + "a"]}, bytes({0x0A})), {id["b"]}));
  // Invalid UTF-8: a lone lead byte is a symbol of its own and the following letter still merges.
  CHECK(tok.encode("\xC3" "ab", false) == cat(cat({id[kU]}, bytes({0xC3})), {id["ab"]}));
  CHECK(tok.encode("\xFF", false) == cat({id[kU]}, bytes({0xFF})));
  for (const char* s : {"\xC3\xA9", "\xF0\x9F\x98\x80", "a\nb", "\xC3" "ab", "\xFF", "\xED\xA0\x80"})
    CHECK(tok.decode(tok.encode(s, true)) == s);

  // Without byte tokens each unknown character becomes one <unk>; without <unk> encode throws.
  Built nb = small(false);
  SpmTokenizer no_bytes(nb.vocab);
  CHECK(no_bytes.encode("a\xC3\xA9", false) == Ids{nb.id[kU + "a"], 0});
  CHECK(no_bytes.decode(no_bytes.encode("a\xC3\xA9", false)) == "a");  // <unk> decodes to nothing
  nb.vocab.unknown = -1;
  nb.vocab.token_types[0] = 1;
  SpmTokenizer no_unk(nb.vocab);
  CHECK(error_of([&] { no_unk.encode("a\xC3\xA9", false); }) ==
        "vocabulary has no token, byte token or unknown token for byte 0xC3");
  CHECK(no_unk.encode("ab", false) == Ids{nb.id[kU + "ab"]});
}

TEST_CASE("spm: BOS, EOS and the leading space", "[tokenizer]") {
  Built b = small();
  SpmTokenizer tok(b.vocab);
  auto& id = b.id;
  CHECK(tok.bos() == 1);
  CHECK(tok.eos() == 2);
  CHECK(tok.unknown() == 0);
  CHECK(tok.size() == b.vocab.tokens.size());
  CHECK(tok.encode("abc", true) == Ids{1, id[kU], id["abc"]});
  CHECK(tok.encode("", true) == Ids{1});
  CHECK(tok.encode("", false).empty());
  CHECK(tok.decode(Ids{1}).empty());
  CHECK(tok.decode(Ids{}).empty());
  // The dummy-prefix space is stripped from the first piece after an optional BOS, only there.
  CHECK(tok.decode(Ids{1, id[kU + "ab"], id[kU + "ab"], 2}) == "ab ab");
  CHECK(tok.decode(Ids{id[kU + "ab"], id[kU + "ab"]}) == "ab ab");
  CHECK(tok.decode(Ids{id[kU + "ab"], id[kU + "ab"]}, false) == " ab ab");
  CHECK(tok.decode(Ids{id["a"], id[kU + "ab"]}) == "a ab");
  // Control tokens anywhere produce nothing; pieces are unstripped.
  CHECK(tok.decode(Ids{id["a"], 2, 1, id["b"]}) == "ab");
  CHECK(tok.piece(id[kU + "ab"]) == " ab");
  CHECK(tok.piece(1).empty());
  CHECK(tok.piece(id[byte_name(0x0A)]) == "\n");
  CHECK(tok.text(id[kU + "ab"]) == kU + "ab");
  CHECK(tok.type(1) == TokenType::Control);
  CHECK(tok.type(id[byte_name(7)]) == TokenType::Byte);

  // "<s>" in the text is plain text unless parse_special.
  const Ids plain = tok.encode("<s>a", false);
  CHECK(std::find(plain.begin(), plain.end(), 1) == plain.end());
  CHECK(tok.decode(plain) == "<s>a");
  CHECK(tok.encode("<s>a", false, true) == Ids{1, id[kU + "a"]});
}

TEST_CASE("spm: user-defined tokens are matched whole, longest first", "[tokenizer]") {
  Built b = small();
  Vocabulary& v = b.vocab;
  const auto add_user = [&](const std::string& text) {
    b.id[text] = int32_t(v.tokens.size());
    v.tokens.push_back(text);
    v.scores.push_back(-100);
    v.token_types.push_back(4);
  };
  add_user("<u>");
  add_user("bca");
  add_user("ca");
  SpmTokenizer tok(v);
  auto& id = b.id;
  // Each raw fragment after a matched token gets its own dummy prefix, as llama.cpp does.
  CHECK(tok.encode("ab<u>ab", false) == Ids{id[kU + "ab"], id["<u>"], id[kU + "ab"]});
  CHECK(tok.encode("<u>", true) == Ids{1, id["<u>"]});
  // "bca" (longer) is taken before "ca": "a|bca|ca" rather than "ab|ca|ca".
  CHECK(tok.encode("abcaca", false) == Ids{id[kU + "a"], id["bca"], id["ca"]});
  CHECK(tok.piece(id["<u>"]) == "<u>");
  CHECK(tok.decode(tok.encode("ab<u>ab", false)) == "ab<u> ab");  // the added prefix stays visible
}

TEST_CASE("spm: decode(encode(x)) == x on random bytes", "[tokenizer]") {
  Built b = small();
  SpmTokenizer tok(b.vocab);
  std::mt19937 rng(1234);
  for (int i = 0; i < 3000; ++i) {
    const std::string s = random_text(rng, 40);
    const bool bos = i % 2 == 0;
    const Ids ids = tok.encode(s, bos);
    INFO("case " << i << " length " << s.size());
    REQUIRE(tok.decode(ids) == s);
    REQUIRE((!bos || (!ids.empty() && ids[0] == 1)));
  }
}

TEST_CASE("spm: agrees with an O(n^2) reference on random strings", "[tokenizer]") {
  std::mt19937 rng(99);
  for (int round = 0; round < 8; ++round) {
    // Random vocabularies over a small alphabet: every 2- and 3-symbol string is a token with
    // probability 1/2, scores drawn from a handful of values so that ties are common.
    const std::vector<std::string> alphabet = {kU, "a", "b", "c", "x", "\xC3\xA9"};
    std::vector<std::pair<std::string, float>> pieces;
    for (const auto& s1 : alphabet) pieces.push_back({s1, -20});
    std::uniform_int_distribution<int> score(-4, 0);
    for (const auto& s1 : alphabet)
      for (const auto& s2 : alphabet) {
        if (rng() % 2) pieces.push_back({s1 + s2, float(score(rng))});
        for (const auto& s3 : alphabet)
          if (rng() % 2) pieces.push_back({s1 + s2 + s3, float(score(rng))});
      }
    const bool with_bytes = round % 4 != 3;  // some rounds fall back to <unk>
    Built b = build(pieces, with_bytes, /*typed=*/round % 2 == 0);
    SpmTokenizer tok(b.vocab);
    for (int i = 0; i < 500; ++i) {
      const std::string s = random_text(rng, 30);
      const bool bos = i % 3 == 0;
      INFO("round " << round << " case " << i);
      REQUIRE(tok.encode(s, bos) == reference_encode(b.vocab, s, bos));
    }
  }
}

TEST_CASE("spm: megabytes of text", "[tokenizer]") {
  Built b = small();
  SpmTokenizer tok(b.vocab);
  std::mt19937 rng(7);
  std::string text;
  std::string word;
  while (text.size() < (1u << 20)) {
    word.clear();
    for (size_t n = 1 + rng() % 8; n > 0; --n) word += "abcx"[rng() % 4];
    text += word;
    text += rng() % 16 == 0 ? "\n\xC3\xA9 " : " ";
  }
  const Ids ids = tok.encode(text, true);
  CHECK(ids.size() < text.size());
  CHECK(tok.decode(ids) == text);

  // One long run of ties, and one long run with no merge at all.
  const std::string run(1u << 20, 'a');
  const Ids run_ids = tok.encode(run, false);
  REQUIRE(run_ids.size() == (1u << 19) + 1);  // ▁a, then aa ... aa, then a
  CHECK(run_ids.front() == b.id[kU + "a"]);
  CHECK(run_ids.back() == b.id["a"]);
  CHECK(tok.decode(run_ids) == run);
  const std::string nl(1u << 20, '\n');
  CHECK(tok.encode(nl, false).size() == nl.size() + 1);
}

TEST_CASE("spm: bad vocabularies and ids are one-line errors", "[tokenizer]") {
  const auto bad = [](const std::function<void(Vocabulary&)>& edit) {
    Vocabulary v = small().vocab;
    edit(v);
    const std::string message = error_of([&] { SpmTokenizer t(v); });
    CHECK(message.find('\n') == std::string::npos);
    return message;
  };
  CHECK(bad([](Vocabulary& v) { v = Vocabulary{}; }) == "vocabulary: no tokens");
  CHECK(bad([](Vocabulary& v) { v.scores.pop_back(); }) == "vocabulary: 270 scores for 271 tokens");
  CHECK(bad([](Vocabulary& v) { v.token_types.push_back(1); }) == "vocabulary: 272 token types for 271 tokens");
  CHECK(bad([](Vocabulary& v) { v.bos = 271; }) == "vocabulary: bos token id 271 out of range [0, 271)");
  CHECK(bad([](Vocabulary& v) { v.eos = -2; }) == "vocabulary: eos token id -2 out of range [0, 271)");
  CHECK(bad([](Vocabulary& v) { v.unknown = 1000; }) == "vocabulary: unknown token id 1000 out of range [0, 271)");
  CHECK(bad([](Vocabulary& v) { v.token_types[5] = 9; }) == "vocabulary: token 5 has unknown type 9");
  CHECK(bad([](Vocabulary& v) { v.token_types[5] = 6; }) == "vocabulary: byte token 5 is not spelled <0xXX>");
  CHECK(bad([](Vocabulary& v) { v.model = "gpt2"; }) ==
        "vocabulary: tokenizer model 'gpt2' is not supported (only 'llama', SentencePiece)");
  // Empty scores are allowed (all zero), as are absent bos/eos.
  CHECK(bad([](Vocabulary& v) { v.scores.clear(); }) == "(no error)");

  Vocabulary no_bos = small().vocab;
  no_bos.bos = -1;
  SpmTokenizer t(no_bos);
  CHECK(error_of([&] { t.encode("a", true); }) == "vocabulary has no BOS token to add");
  CHECK(t.encode("a", false).size() == 1);

  SpmTokenizer tok(small().vocab);
  CHECK(error_of([&] { tok.decode(Ids{3, 271}); }) == "token id 271 out of range [0, 271)");
  CHECK(error_of([&] { tok.decode(Ids{-1}); }) == "token id -1 out of range [0, 271)");
  CHECK(error_of([&] { tok.piece(9999); }) == "token id 9999 out of range [0, 271)");
}

TEST_CASE("spm: untyped vocabularies infer control, unknown and byte tokens", "[tokenizer]") {
  Built b = build({{kU, -10}, {"a", -1}, {kU + "a", -2}}, true, /*typed=*/false);
  SpmTokenizer tok(b.vocab);
  CHECK(tok.type(0) == TokenType::Unknown);
  CHECK(tok.type(1) == TokenType::Control);
  CHECK(tok.type(b.id[kU + "a"]) == TokenType::Normal);
  CHECK(tok.type(b.id[byte_name(0x41)]) == TokenType::Byte);
  CHECK(tok.decode(tok.encode("a\nA", true)) == "a\nA");
}
