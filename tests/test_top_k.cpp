// The device ranking of logits (ops::TopK) picks exactly the candidates, in exactly the order, that
// the host sampler ranks by: larger value first, ties to the lower id, NaN first. Row lengths cross
// the chunk sizes of the passes (one pass, two, three), values tie often, and -inf appears.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/top_k.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

// The independent reference: a full sort of the ids.
std::vector<ops::RankedLogit> ranked_on_host(const std::vector<float>& v, uint32_t k) {
  std::vector<int32_t> ids(v.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    const bool na = std::isnan(v[size_t(a)]), nb = std::isnan(v[size_t(b)]);
    if (na != nb) return na;
    if (!na && v[size_t(a)] != v[size_t(b)]) return v[size_t(a)] > v[size_t(b)];
    return a < b;
  });
  std::vector<ops::RankedLogit> out;
  for (size_t i = 0; i < std::min<size_t>(k, ids.size()); ++i) out.push_back({v[size_t(ids[i])], ids[i]});
  return out;
}

std::vector<ops::RankedLogit> ranked_on_device(vk::Device& dev, const std::vector<float>& row, uint32_t lead,
                                               uint32_t k) {
  // `lead` values before the row: the ranking reads from an offset and counts ids from there.
  std::vector<float> values(lead, 1e30f);
  values.insert(values.end(), row.begin(), row.end());
  vk::Buffer in = ops::upload_tensor(dev, values, ElementType::F32, "logits");
  vk::Buffer out(dev, uint64_t(k) * 8 + 16, vk::MemoryUse::DeviceLocal, "ranked");
  const std::vector<uint32_t> guard(size_t(k) * 2 + 4, 0xdeadbeefu);
  vk::upload(out, 0, guard.data(), guard.size() * 4);
  ops::TopK top(dev, uint32_t(row.size()));
  vk::CommandStream stream(dev);
  stream.begin();
  top.record(stream, in, lead, uint32_t(row.size()), k, {&out, 0, uint64_t(k) * 8});
  stream.end();
  stream.submit_and_wait();
  std::vector<uint32_t> words(guard.size());
  vk::download(out, 0, words.data(), words.size() * 4);
  for (size_t i = size_t(k) * 2; i < words.size(); ++i) CHECK(words[i] == 0xdeadbeefu);  // nothing past k pairs
  return ops::TopK::unpack(words.data(), k);
}

void check_same(const std::vector<ops::RankedLogit>& got, const std::vector<ops::RankedLogit>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("rank " << i);
    CHECK(got[i].id == want[i].id);
    CHECK((got[i].logit == want[i].logit || (std::isnan(got[i].logit) && std::isnan(want[i].logit))));
  }
}

TEST_CASE_METHOD(GpuTest, "top-k on the device ranks as the host sampler does", "[gpu][top_k]") {
  const uint32_t count = GENERATE(1u, 7u, 511u, 512u, 2049u, 32000u, 150001u);
  const uint32_t k = GENERATE(1u, 40u, 64u);
  INFO(count << " values, k = " << k);
  std::vector<float> row = random_floats(count, count * 7 + k, -4.0f, 4.0f);
  for (size_t i = 0; i < row.size(); ++i) {
    row[i] = std::round(row[i] * 4) / 4;  // 33 distinct values: ties everywhere
    if (i % 97 == 13) row[i] = -std::numeric_limits<float>::infinity();
  }
  check_same(ranked_on_device(device(), row, count % 3, k), ranked_on_host(row, k));
}

TEST_CASE_METHOD(GpuTest, "top-k on the device ranks a NaN first and refuses bad k", "[gpu][top_k]") {
  std::vector<float> row = random_floats(3000, 5);
  row[2500] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<ops::RankedLogit> got = ranked_on_device(device(), row, 0, 3);
  REQUIRE(got.size() == 3);
  CHECK(std::isnan(got[0].logit));
  CHECK(got[0].id == 2500);
  check_same(got, ranked_on_host(row, 3));

  ops::TopK top(device(), 100);
  vk::Buffer b(device(), 1024, vk::MemoryUse::DeviceLocal, "b");
  vk::CommandStream stream(device());
  stream.begin();
  CHECK_THROWS_WITH(top.record(stream, b, 0, 100, 0, vk::BufferRange::whole(b)), Catch::Contains("k must be in 1..64"));
  CHECK_THROWS_WITH(top.record(stream, b, 0, 100, 65, vk::BufferRange::whole(b)), Catch::Contains("k must be in 1..64"));
  CHECK_THROWS_WITH(top.record(stream, b, 0, 101, 5, vk::BufferRange::whole(b)), Catch::Contains("101 values"));
  CHECK_THROWS_WITH(top.record(stream, b, 200, 100, 5, vk::BufferRange::whole(b)), Catch::Contains("too small"));
  stream.end();
}

}  // namespace
}  // namespace infini::test
