// libFuzzer target for the GGUF reader, the Llama loader and the file's tokenizer: any input must
// either parse (and load) into a consistent model whose tokenizer encodes and decodes a text, or
// be rejected with a one-line infini::Error naming the file (the tokenizer's errors: one line).
// Crashes, sanitizer reports, other exceptions (bad_alloc, length_error) and broken invariants
// (a tensor view outside the input, a size that does not match the shape) are findings.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "text/tokenizer.hpp"

namespace {

constexpr std::string_view kName = "fuzz.gguf";

void check_message(std::string_view message) {
  if (!message.starts_with("fuzz.gguf: ") || message.find('\n') != std::string_view::npos) __builtin_trap();
}

void check_tensor(const infini::model::GgufFile& f, const infini::model::TensorView& t) {
  const auto file = f.bytes();
  if (t.data.size() != infini::element_bytes(t.type, uint64_t(t.elements())))
    __builtin_trap();
  if (!t.data.empty() && (t.data.data() < file.data() || t.data.data() + t.data.size() > file.data() + file.size()))
    __builtin_trap();
  if (t.shape.empty() || t.shape.size() > 4) __builtin_trap();
}

// Every typed accessor on every key: each must return or throw a well-formed Error.
void read_all_metadata(const infini::model::GgufFile& f) {
  for (const auto& kv : f.metadata()) {
    const std::string& k = kv.key;
    auto attempt = [&](auto&& get) {
      try {
        (void)get();
      } catch (const infini::Error& e) {
        check_message(e.what());
      }
    };
    attempt([&] { return f.get_u32(k); });
    attempt([&] { return f.get_i64(k); });
    attempt([&] { return f.get_u64(k); });
    attempt([&] { return f.get_f32(k); });
    attempt([&] { return f.get_bool(k); });
    attempt([&] { return f.get_string(k); });
    attempt([&] { return f.get_string_array(k); });
    attempt([&] { return f.get_f32_array(k); });
    attempt([&] { return f.get_int_array(k); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const infini::model::GgufFile f(std::as_bytes(std::span(data, size)), std::string(kName));
    if (f.version() != 2 && f.version() != 3) __builtin_trap();
    if (f.alignment() == 0 || (f.alignment() & (f.alignment() - 1)) != 0) __builtin_trap();
    for (const auto& t : f.tensors()) check_tensor(f, t);
    read_all_metadata(f);
    std::vector<std::string> warnings;
    const infini::model::LlamaWeights w = infini::model::load_llama(f, warnings);
    for (const std::string& warning : warnings) check_message(warning);
    const auto& c = w.config;
    if (static_cast<int64_t>(w.layers.size()) != c.layers) __builtin_trap();
    if (c.heads % c.heads_kv != 0 || c.vocab < 1) __builtin_trap();
    if (w.vocab.tokens.empty() || static_cast<int64_t>(w.vocab.tokens.size()) > c.vocab) __builtin_trap();
    check_tensor(f, w.token_embd);
    check_tensor(f, w.output);
    for (const auto& l : w.layers) {
      check_tensor(f, l.wq);
      check_tensor(f, l.ffn_down);
      if (l.wq.shape[1] != c.heads * c.head_dim) __builtin_trap();
    }
    try {
      const auto tokenizer = infini::model::make_tokenizer(w.vocab);
      // Text with every class the pre-tokenizers tell apart, special-token look-alikes and a
      // byte that is not UTF-8; every id must be a token, and decoding must not fail.
      const std::string_view text = "Hello world's 12345\n\n\t x <s></s><|im_start|> Caf\xC3\xA9 \xE6\x97\xA5 \xFF!";
      for (const bool special : {false, true}) {
        const std::vector<int32_t> ids = tokenizer->encode(text, false, special);
        for (int32_t id : ids)
          if (id < 0 || size_t(id) >= tokenizer->size()) __builtin_trap();
        (void)tokenizer->decode(ids);
      }
    } catch (const infini::Error& e) {
      const std::string_view m = e.what();
      if (m.empty() || m.find('\n') != std::string_view::npos) __builtin_trap();
    }
  } catch (const infini::Error& e) {
    check_message(e.what());
  }
  return 0;
}
