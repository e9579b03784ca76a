// libFuzzer target for the GGUF reader and the Llama loader: any input must either parse (and
// load) into a consistent model or be rejected with a one-line infini::Error naming the file.
// Crashes, sanitizer reports, other exceptions (bad_alloc, length_error) and broken invariants
// (a tensor view outside the input, a size that does not match the shape) are findings.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infini/error.hpp"
#include "model/gguf_file.hpp"
#include "model/llama_loader.hpp"

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
  } catch (const infini::Error& e) {
    check_message(e.what());
  }
  return 0;
}
