#include "infini/selfcheck.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "api/context_access.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul.hpp"
#include "util/block_codec.hpp"
#include "util/half.hpp"
#include "vk/command_stream.hpp"
#include "vk/transfer.hpp"

namespace infini {
namespace {

struct MatmulCase {
  uint32_t m, n, k;
  ElementType a, b;
};

// Blocks of random quants (and K formats' sub-block scales and mins) whose f16 scale d is 1, as
// is the second f16 where a block has one (Q4_1's and Q5_1's min m, Q4_K's and Q5_K's dmin), so
// every value is an integer of magnitude below 2^12: q (Q8_0), q - 8 or q - 16 (Q4_0, Q5_0),
// q + 1 (Q4_1, Q5_1), a level (IQ4_NL) or a 6-bit scale less 32 times a level (IQ4_XS), a 6-bit
// scale times a 5-bit quant less a 6-bit min (Q4_K, Q5_K), a 4-bit scale times a 2-bit quant less
// a 4-bit min (Q2_K), a 6-bit scale less 32 times q - 4 (Q3_K), or an int8 scale narrowed to
// -64..63 times q - 32 (Q6_K).
std::vector<std::byte> integer_blocks(ElementType type, size_t blocks, std::mt19937& rng) {
  const ElementTraits& t = element_traits(type);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::byte> bytes(blocks * t.block_bytes);
  for (std::byte& b : bytes) b = std::byte(uint8_t(byte(rng)));
  const uint16_t one = float_to_half(1.0f);
  for (size_t i = 0; i < blocks; ++i) {
    std::byte* block = bytes.data() + i * t.block_bytes;
    if (type == ElementType::Q6_K)
      for (size_t s = 0; s < 16; ++s) block[192 + s] = std::byte(uint8_t(int8_t(int(block[192 + s]) % 128 - 64)));
    std::memcpy(block + scale_offset(type), &one, 2);
    if (has_min_scale(type)) std::memcpy(block + scale_offset(type) + 2, &one, 2);
  }
  return bytes;
}

// C = A B^T on the device for integer-valued A [m][k] in -4..4 and B [n][k]: B in -4..4, or
// integer blocks. Every product and partial sum is an integer below 2^24, exact in f16, bf16 and
// block storage and in f32 arithmetic in any order.
SelfcheckResult check_matmul(vk::Device& device, const MatmulCase& c, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(-4, 4);
  std::vector<float> a(size_t(c.m) * c.k), b(size_t(c.n) * c.k);
  for (float& v : a) v = float(value(rng));
  for (float& v : b) v = float(value(rng));
  vk::Buffer da = ops::upload_tensor(device, a, c.a, "selfcheck A");
  auto upload_b = [&] {
    const ElementTraits& bt = element_traits(c.b);
    if (bt.block_elements == 1) return ops::upload_tensor(device, b, c.b, "selfcheck B");
    const std::vector<std::byte> blocks = integer_blocks(c.b, b.size() / bt.block_elements, rng);
    std::vector<double> exact(b.size());
    decode_blocks(c.b, blocks, 0, b.size(), exact.data());
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(exact[i]);
    vk::Buffer buffer(device, (blocks.size() + 3) / 4 * 4, vk::MemoryUse::DeviceLocal, "selfcheck B");
    vk::upload(buffer, 0, blocks.data(), blocks.size());
    return buffer;
  };
  vk::Buffer db = upload_b();
  vk::Buffer dc(device, size_t(c.m) * c.n * 4, vk::MemoryUse::DeviceLocal, "selfcheck C");
  ops::Matmul matmul(device, c.a, c.b);
  vk::CommandStream stream(device);
  stream.begin();
  matmul.record(stream, {c.m, c.n, c.k, vk::BufferRange::whole(da), vk::BufferRange::whole(db),
                         vk::BufferRange::whole(dc)});
  stream.end();
  stream.submit_and_wait();
  const std::vector<float> got = ops::download_floats(dc, size_t(c.m) * c.n);
  double worst = 0;
  for (uint32_t i = 0; i < c.m; ++i)
    for (uint32_t j = 0; j < c.n; ++j) {
      int64_t exact = 0;
      for (uint32_t p = 0; p < c.k; ++p) exact += int64_t(a[size_t(i) * c.k + p]) * int64_t(b[size_t(j) * c.k + p]);
      const double error = std::fabs(double(got[size_t(i) * c.n + j]) - double(exact));
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
  const std::string name = "matmul " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
                           " A " + std::string(element_name(c.a)) + " B " + std::string(element_name(c.b));
  return {name, worst, worst == 0};
}

}  // namespace

std::vector<SelfcheckResult> selfcheck(Context& context) {
  vk::Device& device = ContextAccess::first_device(context);
  using enum ElementType;
  // One row (the decode kernels), odd sizes that leave every tile partly filled, and each storage pair.
  const MatmulCase cases[] = {{1, 1, 1, F32, F32},       {1, 77, 129, F32, F16},    {17, 33, 65, F32, F32},
                              {127, 255, 511, F32, F32}, {17, 33, 65, F32, F16},    {127, 255, 511, F16, F16},
                              {1, 77, 128, F32, Q8_0},   {17, 33, 96, F32, Q8_0},   {127, 255, 512, F32, Q8_0},
                              {1, 77, 128, F32, Q4_0},   {17, 33, 96, F32, Q4_0},   {127, 255, 512, F32, Q4_0},
                              {1, 77, 256, F32, Q4_K},   {17, 33, 768, F32, Q4_K},  {1, 77, 256, F32, Q5_K},
                              {17, 33, 768, F32, Q5_K},  {1, 77, 256, F32, Q6_K},   {17, 33, 768, F32, Q6_K},
                              {1, 77, 128, F32, Q4_1},   {17, 33, 96, F32, Q4_1},   {1, 77, 128, F32, Q5_0},
                              {17, 33, 96, F32, Q5_0},   {1, 77, 128, F32, Q5_1},   {17, 33, 96, F32, Q5_1},
                              {1, 77, 129, F32, BF16},   {17, 33, 65, F32, BF16},   {1, 77, 128, F32, IQ4_NL},
                              {17, 33, 96, F32, IQ4_NL}, {1, 77, 256, F32, IQ4_XS}, {17, 33, 768, F32, IQ4_XS},
                              {1, 77, 256, F32, Q2_K},   {17, 33, 768, F32, Q2_K},  {1, 77, 256, F32, Q3_K},
                              {17, 33, 768, F32, Q3_K},
                              // K a multiple of 8: matrix units where the device has them (f16 holds
                              // these integers exactly)
                              {130, 129, 136, F32, F16}, {33, 257, 512, F16, F16}, {130, 70, 512, F32, Q4_K},
                              {130, 70, 256, F32, Q5_0}, {130, 129, 136, F32, BF16}};
  std::mt19937 rng(1234);
  std::vector<SelfcheckResult> results;
  for (const MatmulCase& c : cases) results.push_back(check_matmul(device, c, rng));
  return results;
}

}  // namespace infini
