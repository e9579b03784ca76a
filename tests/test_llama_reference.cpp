// The float64 Llama forward pass with Infini-attention (LlamaReference) against an independently
// written plain Llama (plain_llama_logits), and the stream invariants of docs/design.md §1.6 at
// model level: prefill == decode == any chunking, first-segment conventions, reset, bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <span>
#include <vector>

#include "infini/error.hpp"
#include "reference/llama_reference.hpp"
#include "reference/plain_llama.hpp"
#include "support/tiny_llama.hpp"
#include "util/nmse.hpp"

using infini::FirstSegment;
using infini::GateSign;
using infini::InfiniOptions;
using infini::UpdateRule;
using infini::model::LlamaReference;
using infini::model::plain_llama_logits;
using infini::ElementType;
using infini::rope::RopeLayout;
using infini::testing::TinyLlama;
using infini::testing::TinyLlamaSpec;

namespace {

using Vec = std::vector<double>;

const std::vector<int32_t> kTokens = {3, 17, 42, 0, 49, 8, 8, 21, 33, 5, 12, 40, 7};  // T = 13

double err(const Vec& got, const Vec& want) { return infini::nmse(std::span<const double>(got), std::span<const double>(want)); }

// Rows [begin, begin + n) of logits [T][vocab].
Vec rows(const Vec& logits, int64_t begin, int64_t n, int64_t vocab) {
  return Vec(logits.begin() + begin * vocab, logits.begin() + (begin + n) * vocab);
}

InfiniOptions options(int64_t segment, bool memory, FirstSegment first = FirstSegment::Mix,
                      UpdateRule update = UpdateRule::Delta, GateSign sign = GateSign::Memory) {
  InfiniOptions o;
  o.segment = segment;
  o.memory = memory;
  o.first_segment = first;
  o.update = update;
  o.gate_sign = sign;
  return o;  // o.rope stays the default (neox): LlamaReference must take the model's instead
}

std::vector<TinyLlamaSpec> model_specs() {
  std::vector<TinyLlamaSpec> specs;
  TinyLlamaSpec gqa;  // 4 query heads on 2 KV heads, f32, untied, interleaved (GGUF), whole head rotated
  specs.push_back(gqa);
  TinyLlamaSpec mha;
  mha.heads_kv = 4;
  mha.layers = 3;
  mha.type = ElementType::F16;
  mha.tied = true;
  mha.layout = RopeLayout::Neox;
  mha.seed = 2;
  specs.push_back(mha);
  TinyLlamaSpec partial;  // half the head rotated
  partial.type = ElementType::F16;
  partial.rotary_dim = 4;
  partial.seed = 3;
  specs.push_back(partial);
  TinyLlamaSpec no_gate;
  no_gate.layout = RopeLayout::Neox;
  no_gate.rotary_dim = 6;
  no_gate.mem_gate = false;
  no_gate.tied = true;
  no_gate.seed = 4;
  specs.push_back(no_gate);
  return specs;
}

Vec decode_all(LlamaReference& model, const std::vector<int32_t>& tokens) {
  Vec out;
  for (const int32_t t : tokens) {
    const Vec row = model.decode_token(t);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

Vec prefill_chunks(LlamaReference& model, const std::vector<int32_t>& tokens, const std::vector<size_t>& sizes) {
  Vec out;
  size_t at = 0;
  for (const size_t n : sizes) {
    const Vec part = model.prefill(std::span<const int32_t>(tokens).subspan(at, n));
    out.insert(out.end(), part.begin(), part.end());
    at += n;
  }
  REQUIRE(at == tokens.size());
  return out;
}

}  // namespace

TEST_CASE("llama reference: RMSNorm and SwiGLU by hand on a one-layer model", "[llama_reference]") {
  TinyLlamaSpec s;
  s.vocab = 3;
  s.embd = 2;
  s.layers = 1;
  s.heads = s.heads_kv = 1;
  s.head_dim = 2;
  s.ffn = 2;
  TinyLlama m(s);
  auto& w = m.weights;
  auto& l = w.layers[0];
  // W_O = 0 removes attention from the residual stream; the rest is small enough to do by hand.
  // f16 and f32 tensors mixed on purpose: each view is widened by its own type.
  w.token_embd = m.tensor("token_embd.weight", {2, 3}, {3, 4, 1, -2, 0.5, 0}, ElementType::F16);
  l.wo = m.tensor("blk.0.attn_output.weight", {2, 2}, {0, 0, 0, 0}, ElementType::F32);
  l.ffn_norm = m.tensor("blk.0.ffn_norm.weight", {2}, {1, 2}, ElementType::F32);
  l.ffn_gate = m.tensor("blk.0.ffn_gate.weight", {2, 2}, {1, 0, 0, 1}, ElementType::F16);  // identity
  l.ffn_up = m.tensor("blk.0.ffn_up.weight", {2, 2}, {2, 0, 0, 1}, ElementType::F16);      // diag(2, 1)
  l.ffn_down = m.tensor("blk.0.ffn_down.weight", {2, 2}, {0, 1, 1, 0}, ElementType::F32);  // swap
  w.output_norm = m.tensor("output_norm.weight", {2}, {1, 0.5}, ElementType::F32);
  w.output = m.tensor("output.weight", {2, 3}, {1, 0, 0, 1, 1, 1}, ElementType::F32);  // rows e0, e1, e0+e1

  const double eps = s.rms_eps;
  auto expected = [&](double x0, double x1) {
    const double r = std::sqrt((x0 * x0 + x1 * x1) / 2 + eps);
    const double n0 = x0 / r * 1, n1 = x1 / r * 2;       // RMSNorm * ffn_norm
    auto silu = [](double a) { return a / (1 + std::exp(-a)); };
    const double f0 = silu(n0) * 2 * n0, f1 = silu(n1) * n1;  // silu(gate) * up
    const double y0 = x0 + f1, y1 = x1 + f0;                  // down swaps, residual add
    const double r2 = std::sqrt((y0 * y0 + y1 * y1) / 2 + eps);
    const double o0 = y0 / r2 * 1, o1 = y1 / r2 * 0.5;
    return Vec{o0, o1, o0 + o1};
  };
  Vec want;
  for (const Vec& e : {expected(3, 4), expected(1, -2), expected(0.5, 0)}) want.insert(want.end(), e.begin(), e.end());

  const std::vector<int32_t> tokens = {0, 1, 2};
  LlamaReference ref(w, options(8, true));
  const Vec got = ref.prefill(tokens);
  REQUIRE(got.size() == 9);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-13));
  const Vec plain = plain_llama_logits(w, tokens);
  for (size_t i = 0; i < plain.size(); ++i) CHECK(plain[i] == Approx(want[i]).epsilon(1e-13));
}

TEST_CASE("llama reference: one segment without memory is the plain Llama", "[llama_reference]") {
  for (const TinyLlamaSpec& s : model_specs()) {
    INFO("heads " << s.heads << "/" << s.heads_kv << " f16 " << (s.type == ElementType::F16) << " tied " << s.tied
                  << " rotary " << s.rotary_dim << " seed " << s.seed);
    TinyLlama m(s);
    const Vec plain = plain_llama_logits(m.weights, kTokens);
    REQUIRE(plain.size() == kTokens.size() * 50);
    for (const int64_t segment : {int64_t{13}, int64_t{64}}) {
      LlamaReference off(m.weights, options(segment, false));
      CHECK(err(off.prefill(kTokens), plain) <= 1e-24);
      // Memory on changes nothing inside the first segment when it outputs A_dot there.
      LlamaReference local(m.weights, options(segment, true, FirstSegment::Local));
      CHECK(err(local.prefill(kTokens), plain) <= 1e-24);
      LlamaReference decode(m.weights, options(segment, false));
      CHECK(err(decode_all(decode, kTokens), plain) <= 1e-24);
    }
  }
}

TEST_CASE("plain llama: interleaved GGUF rows equal neox with the converter's Q/K permutation", "[llama_reference]") {
  for (const int rotary : {0, 4}) {
    INFO("rotary dim " << rotary);
    TinyLlamaSpec hf;
    hf.layout = RopeLayout::Neox;
    hf.rotary_dim = rotary;
    TinyLlamaSpec gguf = hf;
    gguf.layout = RopeLayout::Interleaved;
    gguf.permute_qk = true;
    TinyLlama a(hf), b(gguf);
    const Vec want = plain_llama_logits(a.weights, kTokens);
    CHECK(err(plain_llama_logits(b.weights, kTokens), want) <= 1e-24);
    LlamaReference ref(b.weights, options(16, false));
    CHECK(err(ref.prefill(kTokens), want) <= 1e-24);
    // Without the permutation the layouts are different models: the check above can fail.
    TinyLlamaSpec unpermuted = gguf;
    unpermuted.permute_qk = false;
    TinyLlama c(unpermuted);
    CHECK(err(plain_llama_logits(c.weights, kTokens), want) > 1e-8);
  }
}

TEST_CASE("llama reference: short segments without memory only see their own segment", "[llama_reference]") {
  TinyLlama m(TinyLlamaSpec{});
  const Vec plain = plain_llama_logits(m.weights, kTokens);
  LlamaReference ref(m.weights, options(4, false));
  const Vec got = ref.prefill(kTokens);
  CHECK(err(rows(got, 0, 4, 50), rows(plain, 0, 4, 50)) <= 1e-24);
  CHECK(err(rows(got, 4, 9, 50), rows(plain, 4, 9, 50)) > 1e-8);
  // Each segment alone is a fresh plain Llama on its tokens (positions restart, no memory).
  const std::vector<int32_t> second(kTokens.begin() + 4, kTokens.begin() + 8);
  CHECK(err(rows(got, 4, 4, 50), plain_llama_logits(m.weights, second)) <= 1e-24);
}

TEST_CASE("llama reference: prefill, token-by-token decode and chunked prefill agree", "[llama_reference]") {
  const std::vector<std::vector<size_t>> chunkings = {{3, 1, 5, 4}, {2, 7, 4}, {4, 4, 4, 1}, {1, 12}, {13}};
  for (const TinyLlamaSpec& s : model_specs())
    for (const UpdateRule update : {UpdateRule::Delta, UpdateRule::Linear})
      for (const FirstSegment first : {FirstSegment::Mix, FirstSegment::Local})
        for (const GateSign sign : {GateSign::Memory, GateSign::Local}) {
          INFO("seed " << s.seed << " delta " << (update == UpdateRule::Delta) << " local first "
                       << (first == FirstSegment::Local) << " gate local " << (sign == GateSign::Local));
          TinyLlama m(s);
          const InfiniOptions o = options(4, true, first, update, sign);
          LlamaReference whole(m.weights, o);
          const Vec want = whole.prefill(kTokens);
          REQUIRE(want.size() == kTokens.size() * 50);
          CHECK(whole.tokens_seen() == 13);
          LlamaReference decode(m.weights, o);
          CHECK(err(decode_all(decode, kTokens), want) <= 1e-24);
          for (const auto& sizes : chunkings) {
            LlamaReference chunked(m.weights, o);
            CHECK(err(prefill_chunks(chunked, kTokens, sizes), want) <= 1e-24);
          }
          // Prefill and decode mixed: a prefix prefilled, the rest decoded.
          LlamaReference mixed(m.weights, o);
          Vec got = mixed.prefill(std::span<const int32_t>(kTokens).first(6));
          const Vec rest = decode_all(mixed, std::vector<int32_t>(kTokens.begin() + 6, kTokens.end()));
          got.insert(got.end(), rest.begin(), rest.end());
          CHECK(err(got, want) <= 1e-24);
        }
}

TEST_CASE("llama reference: memory changes the output after the first segment only", "[llama_reference]") {
  TinyLlama m(TinyLlamaSpec{});
  LlamaReference off(m.weights, options(4, false));
  const Vec without = off.prefill(kTokens);
  SECTION("first segment local: identical first segment, different afterwards") {
    LlamaReference on(m.weights, options(4, true, FirstSegment::Local));
    const Vec with = on.prefill(kTokens);
    CHECK(rows(with, 0, 4, 50) == rows(without, 0, 4, 50));  // bit for bit: A = A_dot there
    CHECK(err(rows(with, 4, 9, 50), rows(without, 4, 9, 50)) > 1e-6);
  }
  SECTION("first segment mix: the gate scales A_dot from the start") {
    LlamaReference on(m.weights, options(4, true, FirstSegment::Mix));
    CHECK(err(rows(on.prefill(kTokens), 0, 4, 50), rows(without, 0, 4, 50)) > 1e-6);
  }
  SECTION("a gate closed on memory (beta = -1e4) is memory off") {
    for (auto& l : m.weights.layers)
      l.mem_gate = m.tensor(l.mem_gate->name, {4}, Vec(4, -1e4), ElementType::F32);
    LlamaReference on(m.weights, options(4, true, FirstSegment::Mix));
    CHECK(on.prefill(kTokens) == without);
    // The opposite gate sign then reads memory only: after the first segment that differs.
    LlamaReference flipped(m.weights, options(4, true, FirstSegment::Local, UpdateRule::Delta, GateSign::Local));
    CHECK(err(rows(flipped.prefill(kTokens), 4, 9, 50), rows(without, 4, 9, 50)) > 1e-6);
  }
}

TEST_CASE("llama reference: reset starts a fresh stream", "[llama_reference]") {
  TinyLlamaSpec s;
  s.type = ElementType::F16;
  TinyLlama m(s);
  const InfiniOptions o = options(4, true);
  LlamaReference fresh(m.weights, o);
  const Vec want = fresh.prefill(kTokens);
  LlamaReference used(m.weights, o);
  used.prefill(std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  used.decode_token(9);  // leaves an open segment and a written memory behind
  used.reset();
  CHECK(used.tokens_seen() == 0);
  CHECK(used.prefill(kTokens) == want);
}

TEST_CASE("llama reference: bad token ids throw and leave the stream as it was", "[llama_reference]") {
  TinyLlama m(TinyLlamaSpec{});
  const InfiniOptions o = options(4, true);
  LlamaReference ref(m.weights, o);
  const std::vector<int32_t> first(kTokens.begin(), kTokens.begin() + 5);
  ref.prefill(first);
  CHECK_THROWS_WITH(ref.decode_token(50), Catch::Contains("token id 50") && Catch::Contains("vocab size 50"));
  CHECK_THROWS_WITH(ref.prefill(std::vector<int32_t>{1, -3, 2}),
                    Catch::Contains("token id -3") && Catch::Contains("vocab size 50"));
  CHECK_THROWS_AS(plain_llama_logits(m.weights, std::vector<int32_t>{7, 99}), infini::Error);
  CHECK(ref.tokens_seen() == 5);
  const Vec rest = ref.prefill(std::vector<int32_t>(kTokens.begin() + 5, kTokens.end()));
  LlamaReference whole(m.weights, o);
  CHECK(rest == rows(whole.prefill(kTokens), 5, 8, 50));
}

TEST_CASE("llama reference: inconsistent weights throw a one-line error naming the tensor", "[llama_reference]") {
  TinyLlama m(TinyLlamaSpec{});
  SECTION("wrong shape") {
    m.weights.layers[1].wk = m.tensor("blk.1.attn_k.weight", {32, 32}, Vec(32 * 32, 0.0), ElementType::F32);
    CHECK_THROWS_WITH(LlamaReference(m.weights, options(4, true)),
                      Catch::Contains("blk.1.attn_k.weight") && Catch::Contains("expected [32, 16]"));
    CHECK_THROWS_WITH(plain_llama_logits(m.weights, kTokens), Catch::Contains("blk.1.attn_k.weight"));
  }
  SECTION("data too short for the shape") {
    m.weights.output_norm.data = m.weights.output_norm.data.first(8);
    CHECK_THROWS_WITH(LlamaReference(m.weights, options(4, true)), Catch::Contains("output_norm.weight"));
  }
  SECTION("heads not a multiple of kv heads") {
    m.weights.config.heads_kv = 3;
    CHECK_THROWS_WITH(LlamaReference(m.weights, options(4, true)), Catch::Contains("not a multiple"));
  }
  SECTION("segment length") {
    CHECK_THROWS_WITH(LlamaReference(m.weights, options(0, true)), Catch::Contains("segment"));
  }
}
