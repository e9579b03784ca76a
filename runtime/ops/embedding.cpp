#include "ops/embedding.hpp"

#include "ops/dispatch_grid.hpp"
#include "spirv/embed_f16.h"
#include "spirv/embed_f32.h"
#include "infini/error.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct Push {
  uint32_t tokens, dim;
};
}  // namespace

Embedding::Embedding(vk::Device& device, DType table)
    : device_(device),
      pipeline_(&device.pipelines().get(table == DType::F16
                                            ? vk::KernelSource{"embed_f16", spirv::embed_f16, 3, sizeof(Push)}
                                            : vk::KernelSource{"embed_f32", spirv::embed_f32, 3, sizeof(Push)})) {}

void Embedding::record(vk::CommandStream& stream, const vk::BufferRange& ids, const vk::BufferRange& table,
                       const vk::BufferRange& out, uint32_t tokens, uint32_t dim) const {
  if (tokens == 0) return;
  if (ids.size < uint64_t(tokens) * 4 || out.size < uint64_t(tokens) * dim * 4)
    throw Error("embedding: ids or output range too small for " + std::to_string(tokens) + " tokens");
  stream.dispatch(*pipeline_, {{ids, vk::Access::Read}, {table, vk::Access::Read}, {out, vk::Access::Write}},
                  Push{tokens, dim}, grid_1d(uint64_t(tokens) * dim, 256, device_.caps()));
}

}  // namespace infini::ops
