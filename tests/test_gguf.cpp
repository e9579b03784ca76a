// GGUF reader, writer, Llama loader and random model generator: round trips are bit exact, a
// random model loads with the shapes it was made with, and hostile files (made by mutating a
// valid one) are rejected with a one-line message naming the problem.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "util/scalar_bytes.hpp"
#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "formats/gguf_writer.hpp"
#include "model/llama_loader.hpp"
#include "model/weight_scan.hpp"
#include "reference/random_llama.hpp"
#include "reference/synthetic_vocab.hpp"
#include "util/half.hpp"

using namespace infini::model;
using infini::ElementType;
using infini::Error;
using infini::FirstSegment;
using infini::UpdateRule;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::byte>;

// resize + memcpy: GCC 12 at -O3 warns falsely (-Wstringop-overflow) on vector::insert here.
void append(Bytes& b, const void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = b.size();
  b.resize(at + n);
  std::memcpy(b.data() + at, p, n);
}

template <typename T>
void append_value(Bytes& b, T v) {
  append(b, &v, sizeof v);
}

template <typename T>
void poke(Bytes& b, std::size_t at, T v) {
  REQUIRE(at + sizeof v <= b.size());
  std::memcpy(b.data() + at, &v, sizeof v);
}

// Offset of the first occurrence of `s` preceded by its u64 length (a GGUF string) at or after
// `from`, pointing just past the string.
std::size_t after_string(const Bytes& b, std::string_view s, std::size_t from = 0) {
  Bytes pattern;
  append_value<uint64_t>(pattern, s.size());
  append(pattern, s.data(), s.size());
  const auto it = std::search(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), pattern.begin(), pattern.end());
  REQUIRE(it != b.end());
  return static_cast<std::size_t>(it - b.begin()) + pattern.size();
}

std::vector<float> iota_floats(std::size_t n, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + 0.25f * static_cast<float>(i);
  return v;
}

// A small valid file: keys key.aa / key.ab / flag, tensors tensor.a (f32 [4, 2]) and tensor.b (f16 [8]).
GgufWriter small_writer() {
  GgufWriter w;
  w.set_u32("key.aa", 7);
  w.set_string("key.ab", "hello");
  w.set_bool("flag", true);
  w.add_tensor("tensor.a", ElementType::F32, {4, 2}, iota_floats(8, 1.0f));
  w.add_tensor("tensor.b", ElementType::F16, {8}, iota_floats(8, -1.0f));
  return w;
}

// The parse must fail with an infini::Error whose one-line message starts with the file name
// and contains `phrase`.
void require_rejected(const Bytes& file, const std::string& phrase) {
  try {
    GgufFile f(file, "T.gguf");
    (void)load_llama(f);
    FAIL("accepted a file that should be rejected for: " << phrase);
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("T.gguf: ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(phrase) != std::string::npos);
  }
}

RandomLlamaOptions tiny_options() {
  RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 32;
  o.layers = 2;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 48;
  o.segment = 16;
  o.seed = 7;
  return o;
}

// A raw GGUF v3 file with no tensors and one key-value pair whose encoded type + value is `kv`.
Bytes raw_file_with_kv(std::string_view key, const Bytes& kv) {
  Bytes b;
  append(b, "GGUF", 4);
  append_value<uint32_t>(b, 3);  // version
  append_value<uint64_t>(b, 0);  // tensors
  append_value<uint64_t>(b, 1);  // key-value pairs
  append_value<uint64_t>(b, key.size());
  append(b, key.data(), key.size());
  append(b, kv.data(), kv.size());
  return b;
}

fs::path scratch_dir(const std::string& leaf) {
  const auto dir = fs::temp_directory_path() / ("infini-test-gguf-" + leaf + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("gguf: metadata of every type and tensors round-trip bit exactly", "[gguf]") {
  for (uint32_t alignment : {32u, 64u, 8u}) {
    GgufWriter w(alignment);
    w.set_u8("t.u8", 200);
    w.set_i8("t.i8", -100);
    w.set_u16("t.u16", 60000);
    w.set_i16("t.i16", -30000);
    w.set_u32("t.u32", 4000000000u);
    w.set_i32("t.i32", -2000000000);
    w.set_u64("t.u64", 1ull << 60);
    w.set_i64("t.i64", -(1ll << 60));
    w.set_f32("t.f32", 0.1f);
    w.set_f64("t.f64", 0.1);
    w.set_bool("t.bool", false);
    w.set_string("t.string", "\xE2\x96\x81hi");
    const std::vector<std::string> strings = {"a", "", "\xE2\x96\x81word", std::string("nul\0byte", 8)};
    const std::vector<float> floats = {1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3e-40f};
    const std::vector<int32_t> ints = {-1, 0, 2147483647};
    w.set_string_array("t.strings", strings);
    w.set_f32_array("t.floats", floats);
    w.set_i32_array("t.ints", ints);
    const std::vector<float> a = iota_floats(24, -3.0f), b = iota_floats(5, 0.5f);
    w.add_tensor("first", ElementType::F32, {2, 3, 4}, a);
    w.add_tensor("second", ElementType::F16, {5}, b);
    w.add_tensor("empty", ElementType::F32, {0, 3}, std::span<const float>{});

    const Bytes bytes = w.to_bytes();
    REQUIRE(bytes.size() == w.file_size());
    const GgufFile f(bytes, "rt.gguf");
    CHECK(f.version() == 3);
    CHECK(f.alignment() == alignment);
    CHECK(f.data_offset() % alignment == 0);
    CHECK(f.get_u32("t.u8") == 200);
    CHECK(f.get_i32("t.i8") == -100);
    CHECK(f.get_u32("t.u16") == 60000);
    CHECK(f.get_i32("t.i16") == -30000);
    CHECK(f.get_u32("t.u32") == 4000000000u);
    CHECK(f.get_i32("t.i32") == -2000000000);
    CHECK(f.get_u64("t.u64") == 1ull << 60);
    CHECK(f.get_i64("t.i64") == -(1ll << 60));
    CHECK(std::bit_cast<uint32_t>(f.get_f32("t.f32")) == std::bit_cast<uint32_t>(0.1f));
    CHECK(std::bit_cast<uint64_t>(f.get_f64("t.f64")) == std::bit_cast<uint64_t>(0.1));
    CHECK(f.get_bool("t.bool") == false);
    CHECK(f.get_string("t.string") == "\xE2\x96\x81hi");
    CHECK(f.get_string_array("t.strings") == strings);
    const std::vector<float> floats_back = f.get_f32_array("t.floats");
    REQUIRE(floats_back.size() == floats.size());
    CHECK(std::memcmp(floats_back.data(), floats.data(), 4 * floats.size()) == 0);
    CHECK(f.get_int_array("t.ints") == std::vector<int64_t>{-1, 0, 2147483647});
    CHECK(f.metadata().front().key == (alignment == 32 ? "t.u8" : "general.alignment"));

    REQUIRE(f.tensors().size() == 3);
    const TensorView& first = f.tensor("first");
    CHECK(first.type == ElementType::F32);
    CHECK(first.shape == std::vector<int64_t>{2, 3, 4});
    REQUIRE(first.data.size() == 24 * 4);
    CHECK(std::memcmp(first.data.data(), a.data(), first.data.size()) == 0);
    const TensorView& second = f.tensor("second");
    CHECK(second.type == ElementType::F16);
    REQUIRE(second.data.size() == 10);
    for (std::size_t i = 0; i < 5; ++i) {
      uint16_t h;
      std::memcpy(&h, second.data.data() + 2 * i, 2);
      CHECK(h == infini::float_to_half(b[i]));
    }
    CHECK(f.tensor("empty").data.empty());
    CHECK(f.find_tensor("missing") == nullptr);
    CHECK(w.to_bytes() == bytes);  // writing is deterministic
  }
}

TEST_CASE("gguf: files written atomically and memory-mapped read back", "[gguf]") {
  const fs::path dir = scratch_dir("file");
  const fs::path path = dir / "model.gguf";
  const GgufWriter w = small_writer();
  const uint64_t size = w.write(path);
  CHECK(size == fs::file_size(path));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"model.gguf"});  // no temp file left behind
  const GgufFile f(path);
  CHECK(f.name() == path.string());
  CHECK(f.get_string("key.ab") == "hello");
  const TensorView& a = f.tensor("tensor.a");
  float v;
  std::memcpy(&v, a.data.data() + 4 * 7, 4);
  CHECK(v == 1.0f + 0.25f * 7);
  // The views stay valid while any copy of the file object (or its storage) lives.
  const GgufFile copy = f;
  CHECK(copy.tensor("tensor.a").data.data() == a.data.data());
  CHECK_THROWS_WITH(GgufFile(dir / "absent.gguf"), Catch::Contains("absent.gguf: cannot open"));
  CHECK_THROWS_WITH(w.write(dir / "no-such-dir" / "x.gguf"), Catch::Contains("cannot create a temporary file"));
  fs::remove_all(dir);
}

TEST_CASE("gguf: typed gets name the key and the type found", "[gguf]") {
  const GgufFile f(small_writer().to_bytes(), "T.gguf");
  CHECK_THROWS_WITH(f.get_string("key.aa"), "T.gguf: key 'key.aa' has type u32, expected string");
  CHECK_THROWS_WITH(f.get_u32("key.ab"), "T.gguf: key 'key.ab' has type string, expected an integer");
  CHECK_THROWS_WITH(f.get_f32("flag"), "T.gguf: key 'flag' has type bool, expected f32 or f64");
  CHECK_THROWS_WITH(f.get_string_array("key.ab"), "T.gguf: key 'key.ab' has type string, expected array of string");
  CHECK_THROWS_WITH(f.get_u32("nope"), "T.gguf: key 'nope' is missing");
  CHECK_THROWS_WITH(f.tensor("nope"), "T.gguf: tensor 'nope' is missing");
  GgufWriter w;
  w.set_i32("neg", -1);
  w.set_u64("big", 1ull << 40);
  const GgufFile g(w.to_bytes(), "T.gguf");
  CHECK_THROWS_WITH(g.get_u32("neg"), "T.gguf: key 'neg' (i32) holds a value out of range for u32");
  CHECK_THROWS_WITH(g.get_u32("big"), "T.gguf: key 'big' (u64) holds a value out of range for u32");
  CHECK(g.get_i64("neg") == -1);
  CHECK(g.get_u64("big") == 1ull << 40);
}

TEST_CASE("gguf: hostile and corrupted files are rejected with the reason", "[gguf]") {
  const Bytes valid = small_writer().to_bytes();
  REQUIRE_NOTHROW(GgufFile(valid, "T.gguf"));
  const std::size_t info_a = after_string(valid, "tensor.a");  // n_dims, ne[2], type, offset follow
  const std::size_t info_b = after_string(valid, "tensor.b");  // n_dims, ne[1], type, offset follow

  struct Case {
    const char* what;
    std::function<void(Bytes&)> mutate;
    const char* phrase;
  };
  const std::vector<Case> cases = {
      {"bad magic", [](Bytes& b) { b[0] = std::byte{'X'}; }, "bad magic 'XGUF': not a GGUF file"},
      {"version 1", [](Bytes& b) { poke<uint32_t>(b, 4, 1); }, "unsupported GGUF version 1"},
      {"version 4", [](Bytes& b) { poke<uint32_t>(b, 4, 4); }, "unsupported GGUF version 4"},
      {"big-endian", [](Bytes& b) { poke<uint32_t>(b, 4, 0x03000000u); }, "big-endian"},
      {"tensor count 2^62", [](Bytes& b) { poke<uint64_t>(b, 8, 1ull << 62); }, "tensor count 4611686018427387904 cannot fit"},
      {"kv count huge", [](Bytes& b) { poke<uint64_t>(b, 16, ~0ull); }, "metadata count 18446744073709551615 cannot fit"},
      {"kv count one too many", [](Bytes& b) { poke<uint64_t>(b, 16, 4); }, "tensor"},
      {"key length 2^60", [](Bytes& b) { poke<uint64_t>(b, 24, 1ull << 60); }, "has length 1152921504606846976, which runs past the end"},
      {"string value length huge", [&](Bytes& b) { poke<uint64_t>(b, after_string(b, "key.ab") + 4, 1ull << 60); }, "runs past the end"},
      {"unknown value type", [&](Bytes& b) { poke<uint32_t>(b, after_string(b, "key.aa"), 13); }, "key 'key.aa' has unknown value type 13"},
      {"bool not 0 or 1", [&](Bytes& b) { b[after_string(b, "flag") + 4] = std::byte{2}; }, "is a bool with value 2"},
      {"duplicate key", [&](Bytes& b) { b[after_string(b, "key.ab") - 1] = std::byte{'a'}; }, "duplicate key 'key.aa'"},
      {"duplicate tensor", [&](Bytes& b) { b[info_b - 1] = std::byte{'a'}; }, "duplicate tensor name 'tensor.a'"},
      {"n_dims 5", [&](Bytes& b) { poke<uint32_t>(b, info_a, 5); }, "tensor 'tensor.a' has 5 dimensions (1 to 4"},
      {"n_dims 0", [&](Bytes& b) { poke<uint32_t>(b, info_a, 0); }, "has 0 dimensions"},
      {"dimension 2^40", [&](Bytes& b) { poke<uint64_t>(b, info_a + 4, 1ull << 40); }, "tensor 'tensor.a' ([1099511627776, 2] f32"},
      {"dimension 2^63", [&](Bytes& b) { poke<uint64_t>(b, info_a + 4, 1ull << 63); }, "has dimension 9223372036854775808, too large"},
      {"element count overflow", [&](Bytes& b) { poke<uint64_t>(b, info_a + 4, 1ull << 32); poke<uint64_t>(b, info_a + 12, 1ull << 32); }, "element count of tensor 'tensor.a' with shape [4294967296, 4294967296] overflows"},
      {"byte size overflow", [&](Bytes& b) { poke<uint64_t>(b, info_a + 4, 1ull << 31); poke<uint64_t>(b, info_a + 12, 1ull << 31); }, "byte size of tensor 'tensor.a'"},
      {"unknown ggml type", [&](Bytes& b) { poke<uint32_t>(b, info_a + 20, 16); }, "tensor 'tensor.a' has ggml type 16, which infini does not read (f32=0, f16=1, q4_0=2, q4_1=3, q5_0=6, q5_1=7, q8_0=8, q2_k=10, q3_k=11, q4_k=12, q5_k=13, q6_k=14, iq4_nl=20, iq4_xs=23, bf16=30)"},
      {"data past EOF", [&](Bytes& b) { poke<uint64_t>(b, info_b + 16, 1ull << 20); }, "tensor 'tensor.b' ([8] f16, 16 bytes at offset 1048576) runs past the end of the file"},
      {"offset near 2^64", [&](Bytes& b) { poke<uint64_t>(b, info_b + 16, ~0ull - 31); }, "runs past the end of the file"},
      {"overlapping tensors", [&](Bytes& b) { poke<uint64_t>(b, info_b + 16, 0); }, "tensors 'tensor.a' and 'tensor.b' overlap"},
      {"misaligned offset", [&](Bytes& b) { poke<uint64_t>(b, info_b + 16, 40); }, "tensor 'tensor.b' data offset 40 is not a multiple of the alignment 32"},
      {"empty file", [](Bytes& b) { b.clear(); }, "empty file"},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      Bytes b = valid;
      c.mutate(b);
      require_rejected(b, c.phrase);
    }
  }
  SECTION("truncated at every offset before the end of the last tensor's data") {
    const GgufFile f(valid, "T.gguf");
    const TensorView& last = f.tensor("tensor.b");
    const auto end = static_cast<std::size_t>(last.data.data() + last.data.size() - f.bytes().data());
    for (std::size_t n = 0; n < end; ++n) {
      INFO("cut at " << n);
      REQUIRE_THROWS_AS(GgufFile(std::span(valid).first(n), "T.gguf"), Error);
    }
    CHECK_NOTHROW(GgufFile(std::span(valid).first(end), "T.gguf"));  // trailing padding is optional
  }
  SECTION("counts that fit the file but exceed the table limits") {
    Bytes b = valid;
    b.resize(b.size() + (33u << 20));  // room for 2^20 + 1 minimal tensor infos
    poke<uint64_t>(b, 8, (1u << 20) + 1);
    require_rejected(b, "tensor count 1048577 exceeds the limit of 1048576");
  }
  SECTION("general.alignment not a power of two") {
    GgufWriter w = small_writer();
    w.set_u32("general.alignment", 48);
    require_rejected(w.to_bytes(), "general.alignment is 48, which is not a power of two");
    w.set_u32("general.alignment", 0);
    require_rejected(w.to_bytes(), "general.alignment is 0");
    w.set_string("general.alignment", "32");
    require_rejected(w.to_bytes(), "key 'general.alignment' has type string, expected an integer");
  }
  SECTION("arrays nested deeper than the limit; array counts beyond the file") {
    // key "n": array of array of ... (depth levels), innermost empty.
    auto nested = [](int depth) {
      Bytes kv;
      auto u32 = [&](uint32_t v) { append_value(kv, v); };
      auto u64 = [&](uint64_t v) { append_value(kv, v); };
      u32(9);                                   // the value is an array
      for (int d = 1; d < depth; ++d) {
        u32(9);                                 // ... of arrays
        u64(1);                                 // with one element
        u32(9);                                 // whose type tag says array
      }
      u32(0);                                   // innermost: array of u8
      u64(0);                                   // empty
      return kv;
    };
    CHECK_NOTHROW(GgufFile(raw_file_with_kv("n", nested(GgufFile::kMaxArrayDepth)), "T.gguf"));
    require_rejected(raw_file_with_kv("n", nested(GgufFile::kMaxArrayDepth + 1)), "nests arrays deeper than 4");
    Bytes huge;
    append_value<uint32_t>(huge, 9);  // array
    append_value<uint32_t>(huge, 8);  // of strings
    append_value<uint64_t>(huge, 1ull << 61);
    require_rejected(raw_file_with_kv("n", huge), "claims 2305843009213693952 elements of string");
  }
}

TEST_CASE("gguf: a random llama loads with the shapes it was made with", "[gguf]") {
  for (ElementType dtype : {ElementType::F32, ElementType::F16}) {
    for (bool tied : {false, true}) {
      RandomLlamaOptions o = tiny_options();
      o.dtype = dtype;
      o.tied = tied;
      o.update = UpdateRule::Linear;
      o.first_segment = FirstSegment::Local;
      const GgufWriter w = random_llama(o);
      const GgufFile f(w.to_bytes(), "R.gguf");
      std::vector<std::string> warnings;
      const LlamaWeights m = load_llama(f, warnings);
      CHECK(warnings.empty());
      const LlamaConfig& c = m.config;
      CHECK(c.vocab == 300);
      CHECK(c.embd == 32);
      CHECK(c.layers == 2);
      CHECK(c.heads == 4);
      CHECK(c.heads_kv == 2);
      CHECK(c.head_dim == 8);
      CHECK(c.ffn == 48);
      CHECK(c.context_length == 4096);
      CHECK(c.rms_eps == Approx(1e-5));
      CHECK(c.rope.base == 10000.0);
      CHECK(c.rope.rotary_dim == 8);
      CHECK(c.rope.layout == infini::rope::RopeLayout::Interleaved);
      CHECK(c.rope.type == infini::rope::RopeType::Default);
      CHECK(c.has_infini_keys);
      CHECK(c.infini.segment == 16);
      CHECK(c.infini.update == UpdateRule::Linear);
      CHECK(c.infini.first_segment == FirstSegment::Local);
      CHECK(c.infini.memory);

      CHECK(m.vocab.model == "llama");
      REQUIRE(m.vocab.tokens.size() == 300);
      CHECK(m.vocab.tokens[0] == "<unk>");
      CHECK(m.vocab.tokens[3] == "<0x00>");
      CHECK(m.vocab.tokens[258] == "<0xFF>");
      CHECK(m.vocab.tokens[259] == "\xE2\x96\x81");
      CHECK(m.vocab.token_types[1] == kTokenControl);
      CHECK(m.vocab.token_types[100] == kTokenByte);
      CHECK(m.vocab.token_types[299] == kTokenNormal);
      CHECK(m.vocab.scores[260] < m.vocab.scores[259]);
      CHECK(m.vocab.bos == 1);
      CHECK(m.vocab.eos == 2);
      CHECK(m.vocab.unknown == 0);
      CHECK(m.vocab.padding == -1);
      CHECK(m.vocab.add_bos);

      CHECK(m.token_embd.shape == std::vector<int64_t>{32, 300});
      CHECK(m.token_embd.type == dtype);
      CHECK(m.output.shape == std::vector<int64_t>{32, 300});
      CHECK((m.output.data.data() == m.token_embd.data.data()) == tied);
      CHECK(m.output_norm.type == ElementType::F32);
      REQUIRE(m.layers.size() == 2);
      for (const LlamaLayerWeights& l : m.layers) {
        CHECK(l.wq.shape == std::vector<int64_t>{32, 32});
        CHECK(l.wk.shape == std::vector<int64_t>{32, 16});
        CHECK(l.wv.shape == std::vector<int64_t>{32, 16});
        CHECK(l.wo.shape == std::vector<int64_t>{32, 32});
        CHECK(l.ffn_gate.shape == std::vector<int64_t>{32, 48});
        CHECK(l.ffn_down.shape == std::vector<int64_t>{48, 32});
        REQUIRE(l.mem_gate);
        CHECK(l.mem_gate->shape == std::vector<int64_t>{4});
        CHECK(l.wq.data.size() == 32 * 32 * infini::scalar_bytes(dtype));
      }
      // Weights look like an initialised transformer: small matrices, norms near 1.
      const TensorView& wq = m.layers[0].wq;
      double sum2 = 0;
      for (int64_t i = 0; i < wq.elements(); ++i) {
        float x;
        if (dtype == ElementType::F32) {
          std::memcpy(&x, wq.data.data() + 4 * i, 4);
        } else {
          uint16_t h;
          std::memcpy(&h, wq.data.data() + 2 * i, 2);
          x = infini::half_to_float(h);
        }
        sum2 += double(x) * x;
      }
      CHECK(std::sqrt(sum2 / double(wq.elements())) == Approx(0.02).epsilon(0.15));
      float norm0;
      std::memcpy(&norm0, m.output_norm.data.data(), 4);
      CHECK(std::fabs(norm0 - 1.0f) <= 0.05f);
    }
  }
}

TEST_CASE("gguf: random models are deterministic; a plain llama has no infini keys", "[gguf]") {
  RandomLlamaOptions o = tiny_options();
  CHECK(random_llama(o).to_bytes() == random_llama(o).to_bytes());
  RandomLlamaOptions other = o;
  other.seed = 8;
  CHECK(random_llama(other).to_bytes() != random_llama(o).to_bytes());
  o.infini = false;
  const GgufWriter w = random_llama(o);
  const GgufFile f(w.to_bytes(), "R.gguf");
  const LlamaWeights m = load_llama(f);
  CHECK_FALSE(m.config.has_infini_keys);
  CHECK_FALSE(m.config.infini.memory);
  CHECK_FALSE(m.layers[0].mem_gate);
  CHECK(w.parameter_count() == 2ull * 300 * 32 + 32 + 2 * (2 * 32 + 32 * 32 * 2 + 32 * 16 * 2 + 3 * 32 * 48));
  CHECK_THROWS_WITH(random_llama(RandomLlamaOptions{.vocab = 2}), Catch::Contains("vocab must be at least 3"));
  RandomLlamaOptions bad = tiny_options();
  bad.heads_kv = 3;
  CHECK_THROWS_WITH(random_llama(bad), Catch::Contains("not a multiple of kv-heads"));
}

TEST_CASE("gguf: llama files that contradict themselves are rejected with the reason", "[gguf]") {
  struct Case {
    const char* what;
    std::function<void(GgufWriter&)> mutate;
    const char* phrase;
  };
  const std::vector<Case> cases = {
      {"shape contradicts hyperparameters", [](GgufWriter& w) { w.set_u32("llama.feed_forward_length", 40); },
       "tensor 'blk.0.ffn_gate.weight' has shape [32, 48] but the hyperparameters need [32, 40] (n_embd, n_ff)"},
      {"kv heads change the shape", [](GgufWriter& w) { w.set_u32("llama.attention.head_count_kv", 1); },
       "tensor 'blk.0.attn_k.weight' has shape [32, 16] but the hyperparameters need [32, 8]"},
      {"missing tensor", [](GgufWriter& w) { w.remove_tensor("blk.1.ffn_up.weight"); }, "tensor 'blk.1.ffn_up.weight' is missing"},
      {"missing embedding", [](GgufWriter& w) { w.remove_tensor("token_embd.weight"); }, "tensor 'token_embd.weight' is missing"},
      {"wrong key type", [](GgufWriter& w) { w.set_string("llama.block_count", "two"); },
       "key 'llama.block_count' has type string, expected an integer"},
      {"missing key", [](GgufWriter& w) { w.remove("llama.embedding_length"); }, "key 'llama.embedding_length' is missing"},
      {"zero layers", [](GgufWriter& w) { w.set_u32("llama.block_count", 0); }, "key 'llama.block_count' is 0 (must be 1 to 4096)"},
      {"huge embedding", [](GgufWriter& w) { w.set_u64("llama.embedding_length", 1ull << 40); }, "key 'llama.embedding_length' is 1099511627776"},
      {"heads vs kv heads", [](GgufWriter& w) { w.set_u32("llama.attention.head_count_kv", 3); }, "is not a multiple of head_count_kv 3"},
      {"architecture", [](GgufWriter& w) { w.set_string("general.architecture", "gpt2"); }, "architecture 'gpt2' is not supported (llama, qwen2, qwen3, gemma)"},
      {"qwen2 keys missing", [](GgufWriter& w) { w.set_string("general.architecture", "qwen2"); }, "key 'qwen2.embedding_length' is missing"},
      {"bias f16", [](GgufWriter& w) { w.add_tensor("blk.0.attn_k.bias", ElementType::F16, {16}, std::vector<float>(16, 0.0f)); },
       "tensor 'blk.0.attn_k.bias' must be f32, got f16"},
      {"bias shape", [](GgufWriter& w) { w.add_tensor("blk.1.attn_q.bias", ElementType::F32, {16}, std::vector<float>(16, 0.0f)); },
       "tensor 'blk.1.attn_q.bias' has shape [16] but the hyperparameters need [32]"},
      {"one q/k norm", [](GgufWriter& w) { w.add_tensor("blk.1.attn_q_norm.weight", ElementType::F32, {8}, std::vector<float>(8, 1.0f)); },
       "layer 1 has only one of attn_q_norm.weight and attn_k_norm.weight"},
      {"odd rope dims", [](GgufWriter& w) { w.set_u32("llama.rope.dimension_count", 7); }, "llama.rope.dimension_count 7 is odd"},
      {"rope scaling type", [](GgufWriter& w) { w.set_string("llama.rope.scaling.type", "longrope"); }, "unsupported llama.rope.scaling.type 'longrope'"},
      {"memory update", [](GgufWriter& w) { w.set_string("infini.memory_update", "fast"); }, "key 'infini.memory_update' is 'fast' (expected linear or delta)"},
      {"first segment", [](GgufWriter& w) { w.set_string("infini.first_segment", "both"); }, "(expected mix or local)"},
      {"segment 0", [](GgufWriter& w) { w.set_u64("infini.segment_length", 0); }, "key 'infini.segment_length' is 0"},
      {"segment past the layer's limit", [](GgufWriter& w) { w.set_u64("infini.segment_length", (1u << 24) + 1); },
       "key 'infini.segment_length' is 16777217 (must be 1 to 16777216)"},
      {"gate missing", [](GgufWriter& w) { w.remove_tensor("blk.1.attn_mem_gate"); }, "tensor 'blk.1.attn_mem_gate' is missing (the file has infini.* keys)"},
      {"gate f16", [](GgufWriter& w) { w.remove_tensor("blk.0.attn_mem_gate"); w.add_tensor("blk.0.attn_mem_gate", ElementType::F16, {4}, std::vector<float>(4, 0.0f)); },
       "tensor 'blk.0.attn_mem_gate' must be f32, got f16"},
      {"gate shape", [](GgufWriter& w) { w.remove_tensor("blk.0.attn_mem_gate"); w.add_tensor("blk.0.attn_mem_gate", ElementType::F32, {2}, std::vector<float>(2, 0.0f)); },
       "tensor 'blk.0.attn_mem_gate' has shape [2] but the hyperparameters need [4] (n_head)"},
      {"more tokens than rows", [](GgufWriter& w) { const SyntheticVocab v = synthetic_spm_vocab(301); w.set_string_array("tokenizer.ggml.tokens", v.tokens); },
       "the tokenizer has 301 tokens but token_embd.weight has only 300 rows"},
      {"scores count", [](GgufWriter& w) { w.set_f32_array("tokenizer.ggml.scores", std::vector<float>(5, 0.0f)); }, "has 5 entries for 300 tokens"},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      GgufWriter w = random_llama(tiny_options());
      c.mutate(w);
      require_rejected(w.to_bytes(), c.phrase);
    }
  }
}

TEST_CASE("gguf: non-finite weights, odd token ids and unused tensors are warnings", "[gguf]") {
  for (ElementType dtype : {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    RandomLlamaOptions o = tiny_options();
    o.dtype = dtype;
    GgufWriter w = random_llama(o);
    w.set_u32("tokenizer.ggml.padding_token_id", 0xffffffffu);
    w.add_tensor("blk.0.attn_output.bias", ElementType::F32, {4}, std::vector<float>(4, 1.0f));
    Bytes bytes = w.to_bytes();
    {
      const GgufFile clean(bytes, "N.gguf");
      const TensorView& q = clean.tensor("blk.1.attn_q.weight");
      const auto at = static_cast<std::size_t>(q.data.data() - clean.bytes().data());
      if (dtype == ElementType::F32) {
        poke<float>(bytes, at + 4 * 5, std::numeric_limits<float>::quiet_NaN());
        poke<float>(bytes, at + 4 * 9, -std::numeric_limits<float>::infinity());
      } else {
        const bool bf16 = dtype == ElementType::BF16;  // NaN and -inf in each 16-bit type
        poke<uint16_t>(bytes, at + 2 * 5, bf16 ? 0x7fc0 : 0x7e00);
        poke<uint16_t>(bytes, at + 2 * 9, bf16 ? 0xff80 : 0xfc00);
      }
    }
    const GgufFile f(bytes, "N.gguf");
    std::vector<std::string> warnings;
    const LlamaWeights m = load_llama(f, warnings);
    CHECK(m.vocab.padding == -1);
    const std::vector<std::string> expected = {
        "N.gguf: key 'tokenizer.ggml.padding_token_id' is 4294967295, outside the 300 tokens; ignored",
        "N.gguf: tensor 'blk.0.attn_output.bias' is not used by the llama architecture; ignored",
        "N.gguf: tensor 'blk.1.attn_q.weight' has 2 NaN/Inf values (first at element 5)",
    };
    CHECK(warnings == expected);
  }
}

TEST_CASE("gguf: Q8_0 models load; NaN scales and rows of partial blocks are refused", "[gguf][quant]") {
  RandomLlamaOptions o = tiny_options();
  o.ffn = 64;  // rows of 32 and 64 values: whole blocks
  o.dtype = ElementType::Q8_0;
  Bytes bytes = random_llama(o).to_bytes();
  std::size_t at = 0;
  {
    const GgufFile clean(bytes, "Q.gguf");
    const TensorView& q = clean.tensor("blk.1.attn_q.weight");
    CHECK(q.type == ElementType::Q8_0);
    CHECK(q.data.size() == 32 * 32 / 32 * 34);
    CHECK_NOTHROW(load_llama(clean));
    at = static_cast<std::size_t>(q.data.data() - clean.bytes().data());
  }
  for (const uint16_t scale : {uint16_t(0x7e00), uint16_t(0xfc00)}) {  // NaN, -inf
    Bytes bad = bytes;
    poke<uint16_t>(bad, at + 3 * 34, scale);
    const GgufFile f(bad, "Q.gguf");
    CHECK_THROWS_WITH(load_llama(f), "Q.gguf: tensor 'blk.1.attn_q.weight': the scale of q8_0 block 3 is NaN or infinite");
  }
  // A Q8_0 tensor whose rows are 48 values: the header is rewritten after writing 64.
  GgufWriter w;
  w.add_tensor("odd", ElementType::Q8_0, {64, 3}, std::vector<float>(192, 0.5f));
  Bytes odd = w.to_bytes();
  poke<uint64_t>(odd, after_string(odd, "odd") + 4, 48);
  require_rejected(odd, "tensor 'odd' has rows of 48 values, not a multiple of the q8_0 block of 32");
}

// Every block type of the element table: each f16 scale a block has (d; the min m or dmin of
// Q4_1, Q5_1, Q4_K, Q5_K; Q6_K keeps d at byte 208) made infinite is refused with the tensor and
// block named, and rows of one and a half blocks are refused.
TEST_CASE("gguf: block-format tensors whose scales are not finite, or whose rows are partial blocks, are refused",
          "[gguf][quant]") {
  for (const infini::ElementTraits& e : infini::kElementTypes) {
    if (e.block_elements == 1) continue;
    INFO(e.name);
    const ElementType type = e.type;
    const int64_t row = 2 * e.block_elements;
    GgufWriter w;
    w.add_tensor("k", type, {row, 2}, std::vector<float>(size_t(2 * row), 0.25f));
    const Bytes bytes = w.to_bytes();
    std::size_t at = 0;
    {
      const GgufFile clean(bytes, "K.gguf");
      CHECK(clean.tensor("k").data.size() == 4 * e.block_bytes);
      CHECK(count_non_finite(clean.tensor("k")).count == 0);
      at = static_cast<std::size_t>(clean.tensor("k").data.data() - clean.bytes().data());
    }
    const bool second_scale = type == ElementType::Q4_1 || type == ElementType::Q5_1 || type == ElementType::Q4_K ||
                              type == ElementType::Q5_K;
    // Where ggml keeps the f16 scales: Q6_K's d and Q3_K's at the block's end, Q2_K's d and dmin too.
    const std::vector<std::size_t> fields = type == ElementType::Q6_K   ? std::vector<std::size_t>{208}
                                            : type == ElementType::Q3_K ? std::vector<std::size_t>{108}
                                            : type == ElementType::Q2_K ? std::vector<std::size_t>{80, 82}
                                            : second_scale              ? std::vector<std::size_t>{0, 2}
                                                                        : std::vector<std::size_t>{0};
    const std::size_t block = at + 2 * e.block_bytes;
    for (const std::size_t field : fields) {
      Bytes bad = bytes;
      poke<uint16_t>(bad, block + field, 0x7c00);  // +inf
      const GgufFile f(bad, "K.gguf");
      CHECK_THROWS_WITH(count_non_finite(f.tensor("k")),
                        "tensor 'k': the scale of " + std::string(e.name) + " block 2 is NaN or infinite");
    }
    Bytes odd = bytes;
    const uint64_t partial = e.block_elements * 3 / 2;
    poke<uint64_t>(odd, after_string(odd, "k") + 4, partial);
    require_rejected(odd, "tensor 'k' has rows of " + std::to_string(partial) + " values, not a multiple of the " +
                              std::string(e.name) + " block of " + std::to_string(e.block_elements));
  }
}

TEST_CASE("gguf: rope_freqs.weight divides the RoPE frequencies; a bad one is refused", "[gguf]") {
  auto with_freqs = [](ElementType type, std::vector<int64_t> shape, std::vector<float> values) {
    GgufWriter w = random_llama(tiny_options());  // head dim 8: 4 frequencies
    w.add_tensor("rope_freqs.weight", type, shape, values);
    return w.to_bytes();
  };
  const Bytes good = with_freqs(ElementType::F32, {4}, {1.0f, 1.5f, 4.0f, 8.0f});
  const GgufFile f(good, "R.gguf");
  std::vector<std::string> warnings;
  const LlamaWeights m = load_llama(f, warnings);
  CHECK(warnings.empty());
  CHECK(m.config.rope.frequency_divisors == std::vector<double>{1.0, 1.5, 4.0, 8.0});
  CHECK(m.config.infini.rope.frequency_divisors == m.config.rope.frequency_divisors);
  require_rejected(with_freqs(ElementType::F32, {3}, {1, 1, 1}), "tensor 'rope_freqs.weight' has shape [3]");
  require_rejected(with_freqs(ElementType::F16, {4}, {1, 1, 1, 1}), "tensor 'rope_freqs.weight' must be f32, got f16");
  require_rejected(with_freqs(ElementType::F32, {4}, {1, 1, -2, 1}),
                   "tensor 'rope_freqs.weight': rope: frequency divisor 2 is -2, not finite and > 0");
}

TEST_CASE("gguf: the synthetic vocabulary is unique and grows by extension", "[gguf]") {
  const SyntheticVocab big = synthetic_spm_vocab(32000);
  REQUIRE(big.tokens.size() == 32000);
  std::vector<std::string> sorted = big.tokens;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  const SyntheticVocab small = synthetic_spm_vocab(10);
  CHECK(std::equal(small.tokens.begin(), small.tokens.end(), big.tokens.begin()));
  CHECK(big.tokens[260] == "\xE2\x96\x81the");
  for (std::size_t i = 260; i < big.scores.size(); ++i) REQUIRE(big.scores[i] < big.scores[i - 1]);
}
