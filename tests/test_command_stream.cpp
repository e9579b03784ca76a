// The command stream puts barriers only where later work depends on earlier work, and a
// recorded stream can be replayed.
#include <algorithm>
#include <chrono>

#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul.hpp"
#include "reference/matmul_reference.hpp"
#include "util/nmse.hpp"
#include "vk/host_wait.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

constexpr uint32_t kN = 24;  // square matrices, small enough to be quick

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

ops::MatmulArgs square(const vk::Buffer& a, const vk::Buffer& b, const vk::Buffer& c) {
  return {kN, kN, kN, whole(a), whole(b), whole(c)};
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST_CASE_METHOD(GpuTest, "independent dispatches get no barrier between them", "[gpu][stream]") {
  vk::Device& dev = device();
  const auto a = random_floats(kN * kN, 1), b = random_floats(kN * kN, 2);
  vk::Buffer da = ops::upload_tensor(dev, a, ElementType::F32, "A"), db = ops::upload_tensor(dev, b, ElementType::F32, "B");
  std::vector<vk::Buffer> outs;
  for (int i = 0; i < 4; ++i) outs.emplace_back(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "C");
  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::CommandStream stream(dev);
  stream.begin();
  for (const auto& c : outs) matmul.record(stream, square(da, db, c));  // read A, B; write distinct C
  stream.end();
  stream.submit_and_wait();
  CHECK(stream.dispatch_count() == 4);
  CHECK(stream.barrier_count() == 0);
  const auto want = ops::matmul_reference(to_double(a), to_double(b), kN, kN, kN);
  for (const auto& c : outs) {
    const auto got = ops::download_floats(c, kN * kN);
    CHECK(nmse(std::span<const float>(got), std::span<const double>(want)) <= 1e-10);
  }
}

TEST_CASE_METHOD(GpuTest, "dependent dispatches are ordered by one barrier each", "[gpu][stream]") {
  vk::Device& dev = device();
  const auto a = random_floats(kN * kN, 3), b = random_floats(kN * kN, 4);
  vk::Buffer da = ops::upload_tensor(dev, a, ElementType::F32, "A"), db = ops::upload_tensor(dev, b, ElementType::F32, "B");
  vk::Buffer c1(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "C1"), c2(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "C2");
  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::CommandStream stream(dev);
  stream.begin();
  matmul.record(stream, square(da, db, c1));  // C1 = A B^T
  matmul.record(stream, square(c1, db, c2));  // C2 = C1 B^T: reads C1 (RAW)
  matmul.record(stream, square(da, da, db));  // B = A A^T: overwrites what the second read (WAR)
  stream.end();
  stream.submit_and_wait();
  CHECK(stream.barrier_count() == 2);

  const auto want1 = ops::matmul_reference(to_double(a), to_double(b), kN, kN, kN);
  const auto want2 = ops::matmul_reference(want1, to_double(b), kN, kN, kN);
  const auto got2 = ops::download_floats(c2, kN * kN);
  CHECK(nmse(std::span<const float>(got2), std::span<const double>(want2)) <= 1e-10);
}

TEST_CASE_METHOD(GpuTest, "copies and fills are ordered against dispatches", "[gpu][stream]") {
  vk::Device& dev = device();
  const auto a = random_floats(kN * kN, 5), b = random_floats(kN * kN, 6);
  vk::Buffer da = ops::upload_tensor(dev, a, ElementType::F32, "A"), db = ops::upload_tensor(dev, b, ElementType::F32, "B");
  vk::Buffer copy_of_a(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "A'");
  vk::Buffer c(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "C");
  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::CommandStream stream(dev);
  stream.begin();
  stream.copy(whole(da), whole(copy_of_a));
  matmul.record(stream, square(copy_of_a, db, c));  // RAW on the copy
  stream.fill(whole(da), 0);                          // independent of the dispatch: no barrier
  stream.end();
  stream.submit_and_wait();
  CHECK(stream.barrier_count() == 1);
  const auto got = ops::download_floats(c, kN * kN);
  const auto want = ops::matmul_reference(to_double(a), to_double(b), kN, kN, kN);
  CHECK(nmse(std::span<const float>(got), std::span<const double>(want)) <= 1e-10);
  CHECK(ops::download_floats(da, kN * kN) == std::vector<float>(kN * kN, 0.0f));
}

TEST_CASE_METHOD(GpuTest, "a recorded stream replays on new input", "[gpu][stream]") {
  vk::Device& dev = device();
  auto a = random_floats(kN * kN, 7);
  const auto b = random_floats(kN * kN, 8);
  vk::Buffer da = ops::upload_tensor(dev, a, ElementType::F32, "A"), db = ops::upload_tensor(dev, b, ElementType::F32, "B");
  vk::Buffer c(dev, kN * kN * 4, vk::MemoryUse::DeviceLocal, "C");
  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::CommandStream stream(dev, 4);
  stream.begin();
  stream.timestamp("start");
  matmul.record(stream, square(da, db, c));
  stream.timestamp("matmul");
  stream.end();
  for (int round = 0; round < 3; ++round) {
    a = random_floats(kN * kN, 100 + round);
    vk::upload(da, std::span<const float>(a));
    stream.submit_and_wait();
    const auto got = ops::download_floats(c, kN * kN);
    const auto want = ops::matmul_reference(to_double(a), to_double(b), kN, kN, kN);
    INFO("round " << round);
    CHECK(nmse(std::span<const float>(got), std::span<const double>(want)) <= 1e-10);
    if (stream.timestamps_supported()) {
      const auto ts = stream.timestamps();
      REQUIRE(ts.size() == 2);
      CHECK(ts[0].label == "start");
      CHECK(ts[1].label == "matmul");
      CHECK(ts[0].ns == 0.0);
      CHECK(ts[1].ns >= 0.0);
    }
  }
}

TEST_CASE("the host polls before it sleeps on discrete GPUs only", "[stream]") {
  using std::chrono::microseconds;
  vk::Capabilities caps;
  if (!std::getenv("INFINI_WAIT_SPIN_US")) {
    caps.type = vk::DeviceType::Discrete;
    CHECK(vk::wait_spin_for(caps) == vk::kGpuWaitSpin);
    for (const vk::DeviceType other :
         {vk::DeviceType::Cpu, vk::DeviceType::Integrated, vk::DeviceType::Virtual, vk::DeviceType::Other}) {
      caps.type = other;
      CHECK(vk::wait_spin_for(caps) == microseconds(0));
    }
  }
  int polls = 0;
  CHECK(vk::spin_until([&] { return ++polls == 3; }, microseconds(10'000'000)));
  CHECK(polls == 3);  // returns as soon as the work is done, not when the spin is over
  polls = 0;
  CHECK_FALSE(vk::spin_until([&] { return ++polls > 1'000'000'000; }, microseconds(1000)));
  CHECK(polls >= 1);
  polls = 0;
  CHECK_FALSE(vk::spin_until([&] { return ++polls > 0; }, microseconds(0)));  // no spin: not even one poll
  CHECK(polls == 0);
}

TEST_CASE_METHOD(GpuTest, "a device that polls before it sleeps waits for its work as one that sleeps", "[gpu][stream]") {
  CHECK(device().wait_spin() == vk::wait_spin_for(device().caps()));
  // A spin far longer than the work: the wait must end when the work does, with its results. The
  // work is fills and copies (no kernel to build on a fresh device).
  constexpr uint64_t kWords = 1 << 20;
  for (const std::chrono::microseconds spin : {std::chrono::microseconds(0), std::chrono::microseconds(20'000'000)}) {
    auto dev = open_second_device({.wait_spin = spin});
    INFO("spin " << spin.count() << " us");
    CHECK(dev->wait_spin() == spin);
    vk::Buffer a(*dev, kWords * 4, vk::MemoryUse::DeviceLocal, "a"), b(*dev, kWords * 4, vk::MemoryUse::DeviceLocal, "b");
    vk::CommandStream stream(*dev);
    for (uint32_t round = 1; round <= 3; ++round) {
      const auto start = std::chrono::steady_clock::now();
      stream.begin();
      stream.fill(whole(a), round * 0x01010101u);
      stream.copy(whole(a), whole(b));
      stream.end();
      stream.submit_and_wait();
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
      std::vector<uint32_t> got(kWords);
      vk::download(b, 0, got.data(), kWords * 4);
      CHECK(std::count(got.begin(), got.end(), round * 0x01010101u) == int64_t(kWords));
    }
  }
}

TEST_CASE_METHOD(GpuTest, "dispatches that break a device limit are refused", "[gpu][stream]") {
  vk::Device& dev = device();
  vk::Buffer a(dev, 256, vk::MemoryUse::DeviceLocal, "A");
  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::CommandStream stream(dev);
  stream.begin();
  // A range that starts beyond the buffer.
  CHECK_THROWS(stream.copy({&a, 512, 16}, {&a, 0, 16}));
  // Storage offsets must honour minStorageBufferOffsetAlignment when it is above 4 bytes.
  const uint64_t align = dev.caps().min_storage_buffer_offset_alignment;
  if (align > 4) {
    CHECK_THROWS_WITH(matmul.record(stream, {1, 1, 1, {&a, 4, 4}, {&a, 0, 4}, {&a, 0, 4}}),
                      Catch::Contains("minStorageBufferOffsetAlignment"));
  }
  stream.end();
}

}  // namespace
}  // namespace infini::test
