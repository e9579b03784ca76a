// The compressive memory's kernels (ops/memory_kernels.hpp), each family on its own, against the
// float64 reference steps: the read fused with the gate, the delta rule's retrieval and the write,
// from states far past f16's range (M and z of a stream that has written many segments), at odd
// sizes, with guard words after every output.
#include <algorithm>
#include <cstring>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matrix_units.hpp"
#include "ops/memory_kernels.hpp"
#include "reference/infini_attention_reference.hpp"
#include "util/nmse.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

using ops::MemoryKernel;

constexpr uint32_t kSentinel = 0x7fc0beef, kGuardWords = 37;

// A buffer of `values` followed by guard words.
vk::Buffer guarded(vk::Device& dev, std::span<const float> values, const char* label) {
  std::vector<uint32_t> words(values.size() + kGuardWords, kSentinel);
  std::memcpy(words.data(), values.data(), values.size_bytes());
  vk::Buffer b(dev, words.size() * 4, vk::MemoryUse::DeviceLocal, label);
  vk::upload(b, std::span<const uint32_t>(words));
  return b;
}
// The first n values of a guarded buffer; counts the guard words that changed.
std::vector<float> read_guarded(const vk::Buffer& b, size_t n, size_t& violations) {
  std::vector<uint32_t> words(n + kGuardWords);
  vk::download(b, std::span<uint32_t>(words));
  std::vector<float> out(n);
  std::memcpy(out.data(), words.data(), n * 4);
  violations += size_t(std::count_if(words.begin() + ptrdiff_t(n), words.end(), [](uint32_t w) { return w != kSentinel; }));
  return out;
}

// A state as after many segments: z_d up to `scale` (one row per KV head never written: z = 0,
// M = 0) and M[d] = z_d times values in [-1, 1], as sigma(K)^T V gives.
reference::MemoryState random_state(const AttentionShape& s, double scale, uint32_t seed) {
  reference::MemoryState st = reference::MemoryState::zeros(s);
  const std::vector<float> zr = random_floats(st.z.size(), seed, 0.05f, 1.0f);
  const std::vector<float> mr = random_floats(st.M.size(), seed + 1);
  for (int h = 0; h < s.heads_kv; ++h)
    for (int d = 0; d < s.head_dim; ++d) {
      const size_t i = size_t(h) * s.head_dim + d;
      st.z[i] = d == (h * 7) % s.head_dim ? 0.0 : double(float(scale * zr[i]));
      for (int c = 0; c < s.value_dim; ++c) {
        const size_t j = i * s.value_dim + c;
        st.M[j] = double(float(st.z[i] * mr[j]));
      }
    }
  return st;
}
std::vector<float> as_floats(const std::vector<double>& x) { return {x.begin(), x.end()}; }

// The memory's conventions the reads are checked under (docs/design.md §1.8): the default, and
// every flag of the kernels' push constants set, with an eps large enough to change the result.
std::vector<InfiniOptions> conventions() {
  InfiniOptions plain;
  plain.gate_shape = GateShape::PerHeadValue;  // beta as the kernels take it
  InfiniOptions flipped = plain;
  flipped.gate_sign = GateSign::Local;
  flipped.memory_head_map = MemoryHeadMap::Modulo;
  flipped.memory_eps_mode = EpsMode::Add;
  flipped.memory_eps = 0.25f;
  InfiniOptions clamped = plain;
  clamped.memory_eps = 2.0f;
  return {plain, flipped, clamped};
}

struct Family {
  MemoryKernel kernel;
  uint32_t lanes;
  double tolerance;  // nmse of what the kernels compute: f32 sums, or f16 operands on matrix units
};

void check_family(const Family& family, const AttentionShape& s, ElementType input, uint32_t tokens, double scale) {
  vk::Device& dev = device();
  const uint32_t seed = uint32_t(s.head_dim * 131 + s.value_dim * 7 + tokens + (input == ElementType::F16 ? 1 : 0));
  INFO(ops::memory_kernel_name(family.kernel) << " Hq " << s.heads_q << " Hkv " << s.heads_kv << " D " << s.head_dim
                                              << " Dv " << s.value_dim << " tokens " << tokens << " "
                                              << element_name(input) << " state scale " << scale);
  const reference::MemoryState state = random_state(s, scale, seed);
  const size_t m_size = state.M.size(), z_size = state.z.size();
  const uint32_t q0 = 3;  // the read starts at row 3 of Q, as a piece after the first does
  const std::vector<float> q = random_floats(size_t(q0 + tokens) * s.heads_q * s.head_dim, seed + 2, -1.5f, 1.5f);
  const std::vector<float> k = random_floats(size_t(tokens) * s.heads_kv * s.head_dim, seed + 3, -1.5f, 1.5f);
  const std::vector<float> v = random_floats(size_t(tokens) * s.heads_kv * s.value_dim, seed + 4);
  const std::vector<float> a_dot = random_floats(size_t(tokens) * s.heads_q * s.value_dim, seed + 5);
  // A gate logit per head and value column: the kernels' layout whatever a file's gate shape.
  const std::vector<float> beta = random_floats(size_t(s.heads_q) * s.value_dim, seed + 6, -2.0f, 2.0f);
  const std::vector<double> qd = ops::as_stored(q, input), kd = ops::as_stored(k, input), vd = ops::as_stored(v, input);
  const std::vector<double> beta_d(beta.begin(), beta.end());

  vk::Buffer qb = ops::upload_tensor(dev, q, input, "Q"), kb = ops::upload_tensor(dev, k, input, "K"),
             vb = ops::upload_tensor(dev, v, input, "V"), betab = ops::upload_tensor(dev, beta, ElementType::F32, "beta");
  const std::vector<float> m0 = as_floats(state.M), z0 = as_floats(state.z);
  vk::Buffer mb = guarded(dev, m0, "M"), zb = guarded(dev, z0, "z");
  vk::CommandStream stream(dev);
  size_t violations = 0;

  for (const UpdateRule rule : {UpdateRule::Linear, UpdateRule::Delta}) {
    const ops::MemoryKernels kernels(dev, s, input == ElementType::F16, rule, family.kernel, family.lanes);
    REQUIRE(kernels.kernel() == family.kernel);
    for (const InfiniOptions& o : conventions()) {
      const ops::MemoryConventions c = ops::memory_conventions(o);
      INFO("gate sense " << (o.gate_sign == GateSign::Local ? "local" : "memory") << ", head map "
                         << (o.memory_head_map == MemoryHeadMap::Modulo ? "modulo" : "group") << ", eps " << o.memory_eps
                         << (o.memory_eps_mode == EpsMode::Add ? " added" : " clamped"));
      // The read and gate, for query rows q0 ..
      vk::Buffer out = guarded(dev, a_dot, "out");
      stream.begin();
      kernels.record_gate(stream, qb, q0, mb, zb, betab, out, tokens, c);
      stream.end();
      stream.submit_and_wait();
      const std::span<const double> q_rows(qd.data() + size_t(q0) * s.heads_q * s.head_dim,
                                           size_t(tokens) * s.heads_q * s.head_dim);
      const std::vector<double> a_mem = reference::memory_read(q_rows, tokens, s, state, o);
      const std::vector<double> want = reference::gate(a_mem, std::vector<double>(a_dot.begin(), a_dot.end()), beta_d,
                                                       tokens, s, o, false);
      const std::vector<float> got = read_guarded(out, want.size(), violations);
      INFO("gate");
      CHECK(nmse(std::span<const float>(got), std::span<const double>(want)) <= family.tolerance);
      if (rule == UpdateRule::Delta) {  // W = V - A_mem for K
        vk::Buffer w = guarded(dev, std::vector<float>(v.size(), 0.0f), "W");
        stream.begin();
        kernels.record_delta(stream, kb, vb, mb, zb, w, tokens, c);
        stream.end();
        stream.submit_and_wait();
        const AttentionShape per_kv{s.heads_kv, s.heads_kv, s.head_dim, s.value_dim};
        const std::vector<double> k_mem = reference::memory_read(kd, tokens, per_kv, state, o);
        std::vector<double> want_w(vd.size());
        for (size_t i = 0; i < want_w.size(); ++i) want_w[i] = vd[i] - k_mem[i];
        const std::vector<float> got_w = read_guarded(w, want_w.size(), violations);
        INFO("delta retrieval");
        CHECK(nmse(std::span<const float>(got_w), std::span<const double>(want_w)) <= family.tolerance);
      }
    }
    // The write of W: V in the input type (linear), or an f32 residual (delta), from the state.
    const std::vector<float> w_values = rule == UpdateRule::Linear ? v : random_floats(v.size(), seed + 7, -2.0f, 2.0f);
    vk::Buffer wb = rule == UpdateRule::Linear ? ops::upload_tensor(dev, v, input, "W")
                                               : ops::upload_tensor(dev, w_values, ElementType::F32, "W");
    stream.begin();
    kernels.record_update(stream, kb, wb, mb, zb, tokens);
    stream.end();
    stream.submit_and_wait();
    reference::MemoryState want = state;
    reference::memory_write(kd, rule == UpdateRule::Linear ? vd : ops::as_stored(w_values, ElementType::F32), tokens, s,
                            UpdateRule::Linear, want);
    const std::vector<float> got_m = read_guarded(mb, m_size, violations), got_z = read_guarded(zb, z_size, violations);
    // What the write added, which the state's size would otherwise hide.
    std::vector<double> got_dm(m_size), want_dm(m_size), got_dz(z_size), want_dz(z_size);
    for (size_t i = 0; i < m_size; ++i) {
      got_dm[i] = double(got_m[i]) - double(m0[i]);
      want_dm[i] = want.M[i] - state.M[i];
    }
    for (size_t i = 0; i < z_size; ++i) {
      got_dz[i] = double(got_z[i]) - double(z0[i]);
      want_dz[i] = want.z[i] - state.z[i];
    }
    INFO("write, " << (rule == UpdateRule::Linear ? "linear" : "delta"));
    // M and z are f32: adding to values of `scale` rounds at scale * 2^-24.
    const double state_rounding = scale * scale * 1e-13;
    CHECK(nmse(std::span<const double>(got_dm), std::span<const double>(want_dm)) <= family.tolerance + state_rounding);
    CHECK(nmse(std::span<const double>(got_dz), std::span<const double>(want_dz)) <= 1e-10 + state_rounding);
    vk::upload(mb, std::span<const float>(m0));  // back to the state for the next rule
    vk::upload(zb, std::span<const float>(z0));
  }
  CHECK(violations == 0);
}

// Shapes: GQA 2 at D 64; D 48 with Dv 96 (three passes of value columns, MHA); GQA 4 at D = Dv = 32.
// Tokens: 70 (a full and a nearly empty workgroup of 64), 5 (a partial token chunk), 1 (decode:
// the matrix family reads with the tiled kernel). States of scale 4 (a few segments) and 3e5
// (thousands of segments; past f16's largest value, 65504).
void check_kernels(const Family& family) {
  struct Case {
    AttentionShape shape;
    uint32_t tokens;
    double scale;
  };
  const Case cases[] = {{{4, 2, 64, 64}, 70, 4}, {{4, 2, 64, 64}, 5, 3e5}, {{3, 3, 48, 96}, 70, 3e5},
                        {{4, 1, 32, 32}, 1, 3e5}, {{4, 1, 32, 32}, 37, 4}};
  for (const ElementType t : {ElementType::F32, ElementType::F16})
    for (const Case& c : cases) check_family(family, c.shape, t, c.tokens, c.scale);
}

TEST_CASE_METHOD(GpuTest, "memory kernels: tiled and rows against the float64 reference steps", "[gpu][layer][memory]") {
  check_kernels({MemoryKernel::Tiled, 0, 1e-10});
  check_kernels({MemoryKernel::Rows, 8, 1e-10});
}

TEST_CASE_METHOD(GpuTest, "memory kernels: coopmat-emulated against the float64 reference steps",
                 "[gpu][layer][memory]") {
  if (!device().caps().shader_float16) {
    WARN("skipped: " << device().caps().name << " has no shaderFloat16");  // reported, not counted as a pass
    return;
  }
  check_kernels({MemoryKernel::MatrixEmulated, 0, 1e-6});
}

TEST_CASE_METHOD(GpuTest, "memory kernels: coopmat on matrix units against the float64 reference steps",
                 "[gpu][layer][memory]") {
  if (!ops::supports_matrix_units(device().caps())) {
    WARN("skipped: " << device().caps().name << " has no cooperative matrices infini can use");  // reported, not a pass
    return;
  }
  check_kernels({MemoryKernel::Matrix, 0, 1e-6});
}

TEST_CASE_METHOD(GpuTest, "memory kernels: the matrix family falls back to tiled where it does not fit",
                 "[gpu][layer][memory]") {
  if (device().caps().max_shared_memory_bytes >= 32768)  // D 64 needs 24 KiB
    CHECK(ops::matrix_memory_misfit({4, 2, 64, 64}, device().caps()).empty());
  CHECK(ops::matrix_memory_misfit({4, 2, 40, 64}, device().caps()).find("D a multiple of 16") != std::string::npos);
  CHECK(ops::matrix_memory_misfit({4, 2, 64, 48}, device().caps()).find("Dv of 32") != std::string::npos);
  if (device().caps().shader_float16) {
    const ops::MemoryKernels odd(device(), {4, 2, 40, 64}, false, UpdateRule::Linear, MemoryKernel::MatrixEmulated);
    CHECK(odd.kernel() == MemoryKernel::Tiled);
  }
  CHECK_THROWS_WITH(ops::MemoryKernels(device(), {4, 2, 42, 64}, false, UpdateRule::Linear, MemoryKernel::Rows, 8),
                    Catch::Contains("multiples of 4"));
}

}  // namespace
}  // namespace infini::test
