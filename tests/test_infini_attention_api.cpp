// The public InfiniAttention object: pieces of any size give the stream's output, reset starts
// over, f16 inputs work, and misuse is a one-line error.
#include "support/attention_harness.hpp"
#include "support/gpu_fixture.hpp"
#include "infini/infini_attention.hpp"
#include "ops/matrix_units.hpp"
#include "util/half.hpp"
#include "util/nmse.hpp"

namespace infini::test {
namespace {

Context& context() {
  static Context c;
  return c;
}

std::vector<float> feed(InfiniAttention& layer, const StreamInputs& in, int64_t piece) {
  const AttentionShape& s = in.shape;
  const size_t qr = size_t(s.heads_q) * s.head_dim, kr = size_t(s.heads_kv) * s.head_dim,
               vr = size_t(s.heads_kv) * s.value_dim;
  std::vector<float> out;
  for (int64_t t = 0; t < in.tokens; t += piece) {
    const int64_t n = std::min(piece, in.tokens - t);
    const auto part = layer.process(std::span(in.q).subspan(t * qr, n * qr), std::span(in.k).subspan(t * kr, n * kr),
                                    std::span(in.v).subspan(t * vr, n * vr), n);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

TEST_CASE("InfiniAttention streams in pieces of any size and matches the reference", "[gpu][api]") {
  const StreamInputs in = random_stream({4, 2, 64, 64}, 70, 3);
  InfiniOptions o;
  o.segment = 16;
  InfiniAttention layer(context(), in.shape, o, in.beta);
  const auto whole = feed(layer, in, in.tokens);
  layer.finish();
  const auto memory = layer.memory();
  const ReferenceResult want = run_reference_layer(in, o, ElementType::F32);
  CHECK(nmse(std::span<const float>(whole), std::span<const double>(want.out)) <= 1e-6);
  CHECK(nmse(std::span<const float>(memory), std::span<const double>(want.memory)) <= 1e-6);
  CHECK(layer.segments_written() == 5);

  // Pieces change only the order of sums, except on matrix units: there longer pieces round Q, K,
  // P and V to f16 while pieces of 1-2 tokens (decode) compute in f32.
  const bool matrix_units = ops::matrix_units_for_auto(device().caps()) != ops::MatrixUnits::None;
  const double bound = matrix_units ? kMatrixAttentionTolerance : 1e-12;
  for (int64_t piece : {int64_t(1), int64_t(7), int64_t(33)}) {
    layer.reset();
    const auto got = feed(layer, in, piece);
    INFO("pieces of " << piece);
    CHECK(nmse(std::span<const float>(got), std::span<const float>(whole)) <= bound);
    CHECK(layer.tokens_processed() == in.tokens);
  }
}

TEST_CASE("InfiniAttention takes f16 inputs", "[gpu][api]") {
  const StreamInputs in = random_stream({2, 1, 64, 64}, 40, 9);
  InfiniOptions o;
  o.segment = 16;
  InfiniAttention layer(context(), in.shape, o, in.beta, ElementType::F16);
  auto halves = [](const std::vector<float>& v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = float_to_half(v[i]);
    return h;
  };
  const auto got = layer.process(halves(in.q), halves(in.k), halves(in.v), in.tokens);
  const ReferenceResult want = run_reference_layer(in, o, ElementType::F16);
  CHECK(nmse(std::span<const float>(got), std::span<const double>(want.out)) <= 1e-4);
  CHECK_THROWS_WITH(layer.process(in.q, in.k, in.v, in.tokens), Catch::Contains("takes f16 inputs"));
}

TEST_CASE("InfiniAttention rejects what does not fit", "[gpu][api]") {
  InfiniOptions o;
  o.segment = 8;
  const std::vector<float> beta(3, 0.0f);
  CHECK_THROWS_WITH(InfiniAttention(context(), {3, 2, 64, 64}, o, beta), Catch::Contains("not a multiple of Hkv"));
  CHECK_THROWS_WITH(InfiniAttention(context(), {4, 2, 64, 64}, o, beta), Catch::Contains("beta has 3"));
  o.rope.rotary_dim = 80;
  CHECK_THROWS(InfiniAttention(context(), {2, 2, 64, 64}, o, std::vector<float>(2)));
  o.rope.rotary_dim = 0;
  InfiniAttention layer(context(), {2, 2, 64, 64}, o, std::vector<float>(2));
  const std::vector<float> few(10);
  CHECK_THROWS_WITH(layer.process(few, few, few, 1), Catch::Contains("need"));
}

}  // namespace
}  // namespace infini::test
