// The embedding gather for every element type, against the host's decoding of the stored table,
// with guard words after the output.
#include <cmath>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "support/guarded_output.hpp"
#include "infini/element_type.hpp"
#include "ops/embedding.hpp"
#include "ops/host_tensor.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

// come back exactly; block rows as the host decodes them, to f32 rounding (the kernel's d * q + m
// may fuse). Rows of one block put the 34-, 18-, 22- and 210-byte blocks mid-word.
TEST_CASE_METHOD(GpuTest, "embedding gathers the rows of a table of every element type", "[gpu][ops][quant]") {
  for (const ElementTraits& e : kElementTypes) {
    const bool blocks = e.block_elements > 1;
    const uint32_t vocab = 37, dim = blocks ? e.block_elements : 13;  // odd dim: 16-bit rows start mid-word
    const auto table = random_floats(size_t(vocab) * dim, 3);
    const std::vector<uint32_t> ids = {0, 36, 5, 5, 17, 1, 35};
    vk::Buffer dt = ops::upload_tensor(dev(), table, e.type, "table");
    vk::Buffer di(dev(), ids.size() * 4, vk::MemoryUse::DeviceLocal, "ids");
    vk::upload(di, std::span<const uint32_t>(ids));
    vk::Buffer dout = guarded(dev(), std::vector<float>(ids.size() * dim, 0.0f));
    ops::Embedding embed(dev(), e.type);
    run_once(dev(), [&](vk::CommandStream& s) {
      embed.record(s, vk::BufferRange::whole(di), vk::BufferRange::whole(dt), vk::BufferRange::whole(dout),
                   uint32_t(ids.size()), dim);
    });
    const std::vector<double> stored = ops::as_stored(table, e.type);
    std::vector<double> want;
    for (uint32_t id : ids) want.insert(want.end(), stored.begin() + id * dim, stored.begin() + (id + 1) * dim);
    INFO(e.name);
    CHECK(err(ops::download_floats(dout, want.size()), want) <= (blocks ? 1e-12 : 0.0));
    CHECK(guard_intact(dout, want.size()));
  }
}

}  // namespace
}  // namespace infini::test
