// infini selfcheck: a quick end-to-end proof that the device computes correctly: kernels against
// their float64 CPU references on awkward shapes.
#include <cstdio>
#include <random>

#include "command.hpp"
#include "infini/context.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul.hpp"
#include "ops/matmul_reference.hpp"
#include "util/nmse.hpp"
#include "vk/device.hpp"

namespace infini::cli {
namespace {

int run_selfcheck(const std::string& device_selector) {
  Context context({.device = device_selector});
  vk::Device& device = context.vulkan_device();
  std::printf("selfcheck on %s\n", context.device().name.c_str());

  struct Case {
    uint32_t m, n, k;
    DType a, b;
  };
  const Case cases[] = {{1, 1, 1, DType::F32, DType::F32},       {17, 33, 65, DType::F32, DType::F32},
                        {127, 255, 511, DType::F32, DType::F32}, {17, 33, 65, DType::F32, DType::F16},
                        {127, 255, 511, DType::F16, DType::F16}};
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int failures = 0;
  for (const Case& c : cases) {
    std::vector<float> a(size_t(c.m) * c.k), b(size_t(c.n) * c.k);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    vk::Buffer da = ops::upload_tensor(device, a, c.a, "A");
    vk::Buffer db = ops::upload_tensor(device, b, c.b, "B");
    vk::Buffer dc(device, size_t(c.m) * c.n * 4, vk::MemoryUse::DeviceLocal, "C");
    ops::Matmul matmul(device, c.a, c.b);
    vk::CommandStream stream(device);
    stream.begin();
    matmul.record(stream, {c.m, c.n, c.k, vk::BufferRange::whole(da), vk::BufferRange::whole(db),
                           vk::BufferRange::whole(dc)});
    stream.end();
    stream.submit_and_wait();
    const auto got = ops::download_floats(dc, size_t(c.m) * c.n);
    const auto want = ops::matmul_reference(ops::as_stored(a, c.a), ops::as_stored(b, c.b), c.m, c.n, c.k);
    const double err = nmse(std::span<const float>(got), std::span<const double>(want));
    const bool ok = err <= 1e-9;
    failures += !ok;
    std::printf("  matmul %ux%ux%u A %s B %s  nmse %.2e  %s\n", c.m, c.n, c.k, dtype_name(c.a).data(),
                dtype_name(c.b).data(), err, ok ? "ok" : "FAILED");
  }
  std::printf(failures ? "selfcheck FAILED (%d)\n" : "selfcheck passed\n", failures);
  return failures ? 1 : 0;
}

const RegisterCommand registration{"selfcheck", "Check the device's results against the float64 CPU reference",
                                   [](CLI::App& app) {
                                     auto device = std::make_shared<std::string>();
                                     app.add_option("--device", *device, "Device index or name substring");
                                     return [device] { return run_selfcheck(*device); };
                                   }};

}  // namespace
}  // namespace infini::cli
