// Byte-level BPE (text/bpe_tokenizer.hpp) and its pre-tokenizers (text/pre_tokenizer.hpp):
// word splits derived by hand from each pre-tokenizer's expression, token ids recorded from
// llama.cpp for the synthetic vocabulary, invariants on random text, hostile vocabularies.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "infini/error.hpp"
#include "text/bpe_tokenizer.hpp"
#include "text/tokenizer.hpp"
#include "reference/synthetic_bpe_vocab.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/unicode.hpp"

namespace infini::test {
namespace {

using Words = std::vector<std::string>;

Words words_of(text::PreTokenizer p, std::string_view s) {
  const std::vector<char32_t> cps = text::decode_utf8_lenient(s);
  Words out;
  for (const text::WordSpan& w : text::split_words(p, cps)) {
    std::string word;
    for (size_t i = w.begin; i < w.end; ++i) text::append_utf8(cps[i], word);
    out.push_back(word);
  }
  return out;
}

model::Vocabulary vocabulary(const std::string& pre, int64_t size = 1000) {
  const model::SyntheticBpeVocab s = model::synthetic_bpe_vocab(size, *text::pre_tokenizer_named(pre));
  model::Vocabulary v;
  v.model = "gpt2";
  v.pre = pre;
  v.tokens = s.tokens;
  v.token_types = s.types;
  v.merges = s.merges;
  v.bos = s.bos;
  v.eos = s.eos;
  return v;
}

TEST_CASE("pre-tokenizers split words as their expressions say", "[tokenizer][bpe]") {
  using text::PreTokenizer;
  // llama3: case-insensitive contractions, an optional non-letter before letters, digits in
  // threes, punctuation runs taking the line breaks after them, the last space of a run left to
  // the next word, line breaks with the spaces before them.
  CHECK(words_of(PreTokenizer::Llama3, "Hello world's 12345\n\n x") ==
        Words{"Hello", " world", "'s", " ", "123", "45", "\n\n", " x"});
  CHECK(words_of(PreTokenizer::Llama3, "WE'LL go!!\n  \nok   end  ") ==
        Words{"WE", "'LL", " go", "!!\n", "  \n", "ok", "  ", " end", "  "});
  CHECK(words_of(PreTokenizer::Llama3, "$x 1a\t-b") == Words{"$x", " ", "1", "a", "\t", "-b"});
  // qwen2: the same with single digits.
  CHECK(words_of(PreTokenizer::Qwen2, "a 2024!") == Words{"a", " ", "2", "0", "2", "4", "!"});
  // gpt2: case-sensitive contractions, an optional space before letters, numbers or others,
  // numbers unbounded, no line-break rule.
  CHECK(words_of(PreTokenizer::Gpt2, "I'M ok's 2024 !!\n\nx") ==
        Words{"I", "'", "M", " ok", "'s", " 2024", " !!", "\n", "\n", "x"});
  // default: punctuation runs first, then gpt2's expression inside what is left, then numbers,
  // then three digits at a time.
  CHECK(words_of(PreTokenizer::Default, "a+b 12345.x") == Words{"a", "+", "b", " ", "123", "45", ".", "x"});
  // Not letters, numbers or spaces: marks and symbols are "other"; U+3000 is a space.
  CHECK(words_of(PreTokenizer::Llama3, "e\u0301\u3000\u3000z") == Words{"e", "\u0301", "\u3000", "\u3000z"});
  CHECK(words_of(PreTokenizer::Llama3, "").empty());
}

struct Vector {
  std::string text;
  bool special;
  std::vector<int32_t> ids;
};

TEST_CASE("BPE ids equal llama.cpp's for every pre-tokenizer", "[tokenizer][bpe]") {
  // Recorded from llama.cpp (libllama of @node-llama-cpp/linux-x64-vulkan 3.22.1, llama_tokenize
  // with add_special off) on files written by `infini make-model --vocab 1000 --tokenizer gpt2
  // --pre NAME`; on a wider set of texts (whitespace runs, CJK, emoji, invalid UTF-8, special
  // tokens) every id agreed when they were recorded.
  const std::vector<std::pair<std::string, std::vector<Vector>>> cases = {
    {"llama-bpe", {
        {"Hello world", false, {358, 469}},
        {"Don't stop! We'll see, THEY'VE gone.", false, {68, 275, 39, 116, 260, 116, 111, 112, 33, 32, 87, 101, 347, 284, 101, 44, 338, 72, 69, 89, 39, 86, 69, 448, 275, 101, 46}},
        {"12345 678 3.14159", false, {49, 50, 51, 52, 53, 32, 54, 55, 56, 32, 51, 46, 49, 52, 49, 53, 57}},
        {"line one\n\n  indented\r\nend  ", false, {108, 265, 101, 451, 101, 10, 10, 32, 449, 100, 285, 101, 100, 13, 10, 370, 256}},
        {"Café naïve 日本語 🙂🚀", false, {67, 364, 462, 32, 428, 389, 32, 439}},
        {"a\x80""b \xFF""", false, {97, 239, 191, 189, 98, 32, 239, 191, 189}},
        {"<|im_start|>user\nhi<|im_end|>", true, {474, 117, 115, 101, 114, 10, 104, 105, 475}},
        {"<=> ^~| $100 +5%...!!", false, {354, 446, 441, 320, 313, 53, 37, 348, 346}},
    }},
    {"qwen2", {
        {"Hello world", false, {351, 462}},
        {"Don't stop! We'll see, THEY'VE gone.", false, {68, 274, 39, 116, 260, 116, 111, 112, 33, 32, 87, 101, 344, 283, 101, 44, 335, 72, 69, 89, 39, 86, 69, 441, 274, 101, 46}},
        {"12345 678 3.14159", false, {49, 50, 51, 52, 53, 32, 54, 55, 56, 32, 51, 46, 49, 52, 49, 53, 57}},
        {"line one\n\n  indented\r\nend  ", false, {108, 264, 101, 444, 101, 10, 10, 32, 442, 100, 284, 101, 100, 13, 10, 363, 256}},
        {"Café naïve 日本語 🙂🚀", false, {67, 357, 455, 32, 421, 382, 32, 432}},
        {"a\x80""b \xFF""", false, {97, 239, 191, 189, 98, 32, 239, 191, 189}},
        {"<|im_start|>user\nhi<|im_end|>", true, {467, 117, 115, 101, 114, 10, 104, 105, 468}},
        {"<=> ^~| $100 +5%...!!", false, {347, 439, 434, 49, 48, 48, 312, 53, 37, 345, 343}},
    }},
    {"gpt-2", {
        {"Hello world", false, {355, 472}},
        {"Don't stop! We'll see, THEY'VE gone.", false, {68, 275, 39, 116, 260, 116, 111, 112, 33, 32, 87, 101, 346, 284, 101, 44, 338, 72, 69, 89, 39, 86, 69, 447, 275, 101, 46}},
        {"12345 678 3.14159", false, {49, 50, 51, 52, 53, 32, 54, 55, 56, 337, 46, 49, 52, 49, 53, 57}},
        {"line one\n\n  indented\r\nend  ", false, {108, 265, 101, 450, 101, 10, 10, 32, 448, 100, 285, 101, 100, 13, 10, 367, 256}},
        {"Café naïve 日本語 🙂🚀", false, {67, 361, 465, 32, 425, 386, 32, 436}},
        {"a\x80""b \xFF""", false, {97, 239, 191, 189, 98, 32, 239, 191, 189}},
        {"<|im_start|>user\nhi<|im_end|>", true, {477, 117, 115, 101, 114, 10, 104, 105, 478}},
        {"<=> ^~| $100 +5%...!!", false, {351, 445, 440, 49, 264, 314, 53, 37, 347, 345}},
    }},
    {"default", {
        {"Hello world", false, {354, 463}},
        {"Don't stop! We'll see, THEY'VE gone.", false, {68, 275, 39, 116, 260, 116, 111, 112, 33, 32, 87, 101, 39, 292, 284, 101, 44, 336, 72, 69, 89, 39, 86, 69, 442, 275, 101, 46}},
        {"12345 678 3.14159", false, {49, 50, 51, 52, 53, 32, 54, 55, 56, 32, 51, 46, 49, 52, 49, 53, 57}},
        {"line one\n\n  indented\r\nend  ", false, {108, 265, 101, 445, 101, 10, 10, 32, 443, 100, 285, 101, 100, 13, 10, 366, 256}},
        {"Café naïve 日本語 🙂🚀", false, {67, 360, 456, 32, 424, 385, 32, 435}},
        {"a\x80""b \xFF""", false, {97, 239, 191, 189, 98, 32, 239, 191, 189}},
        {"<|im_start|>user\nhi<|im_end|>", true, {468, 117, 115, 101, 114, 10, 104, 105, 469}},
        {"<=> ^~| $100 +5%...!!", false, {350, 32, 356, 32, 36, 318, 32, 43, 53, 37, 344, 343}},
    }},
  };
  for (const auto& [pre, vectors] : cases) {
    const model::BpeTokenizer tok(vocabulary(pre));
    for (const Vector& v : vectors) {
      INFO(pre << ": " << v.text);
      CHECK(tok.encode(v.text, false, v.special) == v.ids);
    }
  }
}

TEST_CASE("BPE decodes what it encodes, and invalid UTF-8 as U+FFFD", "[tokenizer][bpe]") {
  const std::string pre = GENERATE("llama-bpe", "qwen2", "gpt-2", "default");
  const model::BpeTokenizer tok(vocabulary(pre));
  // Random strings over a pool of characters from every class the pre-tokenizers tell apart.
  const std::vector<std::string> pool = {"a", "Z", "é", "ß", "日", "語", "🙂", " ", "  ", "\n", "\r\n", "\t", "0",
                                         "7", "٣", "'", "'s", "'LL", ".", "!", "$", "+", "<", "_", "\u0301", "\u3000",
                                         "the", " stream", "memory", "Hello"};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string s;
    const int n = int(rng() % 24);
    for (int i = 0; i < n; ++i) s += pool[rng() % pool.size()];
    INFO(pre << ": '" << s << "'");
    REQUIRE(tok.decode(tok.encode(s, false)) == s);
  }
  // llama.cpp reads a byte that starts no UTF-8 sequence as U+FFFD.
  CHECK(tok.decode(tok.encode("a\xFF" "b", false)) == "a\xEF\xBF\xBD" "b");
  // BOS first when asked; control tokens are text unless special tokens are parsed.
  const std::vector<int32_t> ids = tok.encode("<|im_end|>", true);
  CHECK(ids.front() == tok.bos());
  CHECK(ids.size() > 2);
  CHECK(tok.encode("<|im_end|>", false, true).size() == 1);
  CHECK(tok.decode(tok.encode("<|im_end|>", false, true)).empty());  // control tokens decode to nothing
}

TEST_CASE("hostile BPE vocabularies are refused with one line", "[tokenizer][bpe]") {
  model::Vocabulary v = vocabulary("llama-bpe", 300);
  CHECK_NOTHROW(model::BpeTokenizer(v));
  auto refused = [](const model::Vocabulary& bad, const std::string& what) {
    CHECK_THROWS_WITH(model::make_tokenizer(bad), Catch::Contains(what));
  };
  model::Vocabulary bad = v;
  bad.tokens.clear();
  bad.token_types.clear();
  refused(bad, "no tokens");
  bad = v;
  bad.tokens[300 - 1] = bad.tokens[65];
  refused(bad, "tokens 65 and 299 are both 'A'");
  bad = v;
  bad.merges.push_back("Ġ zzz");
  refused(bad, "names 'zzz', which is not a token");
  bad = v;
  bad.merges.push_back("nospace");
  refused(bad, "is not 'left right'");
  // A merge's control bytes are escaped in the message, which stays one line (found by fuzzing).
  bad = v;
  bad.merges.push_back("\xc4\xa0\xc4\xa0 \n");
  refused(bad, "'\xc4\xa0\xc4\xa0 \\x0a' names '\\x0a', which is not a token");
  bad = v;
  bad.merges.push_back("ab\ncd");
  refused(bad, "'ab\\x0acd' is not 'left right'");
  bad = v;
  bad.bos = 300;
  refused(bad, "bos token id 300 out of range [0, 300)");
  bad = v;
  bad.pre = "tekken";
  refused(bad, "tokenizer.ggml.pre 'tekken' is not a pre-tokenizer infini knows");
  bad = v;
  bad.token_types[3] = 9;
  refused(bad, "token 3 has unknown type 9");
  bad = v;
  bad.model = "bert";
  refused(bad, "tokenizer model 'bert' is not supported");
  CHECK_THROWS_WITH(model::BpeTokenizer(v).piece(300), "token id 300 out of range [0, 300)");
}

}  // namespace
}  // namespace infini::test
