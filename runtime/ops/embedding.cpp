#include "ops/embedding.hpp"

#include "ops/dispatch_grid.hpp"
#include "spirv/embed_variants.h"
#include "infini/error.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {
struct Push {
  uint32_t tokens, dim, first_row, rows;
  float scale;
};
}  // namespace

namespace {
// The kernel variant that reads a table of `type`: embed.comp's variant named after the type
// (embed_q4_k); a type the shader declares no variant for has no kernel.
vk::KernelSource embed_kernel(ElementType type) {
  const std::string name = "embed_" + std::string(element_name(type));
  for (const spirv::ShaderVariant& v : spirv::embed_variants)
    if (v.name == name) return {v.name, v.words, 3, sizeof(Push)};
  throw Error("embedding: no kernel for a table of " + std::string(element_name(type)));
}
}  // namespace

Embedding::Embedding(vk::Device& device, ElementType table, float scale)
    : device_(device), table_(table), scale_(scale), pipeline_(&device.pipelines().get(embed_kernel(table))) {}

void Embedding::record(vk::CommandStream& stream, const vk::BufferRange& ids, const vk::BufferRange& table,
                       const vk::BufferRange& out, uint32_t tokens, uint32_t dim) const {
  record_rows(stream, ids, table, out, tokens, dim, 0, UINT32_MAX);
}

void Embedding::record(vk::CommandStream& stream, const vk::BufferRange& ids, const RowChunks& table,
                       const vk::BufferRange& out, uint32_t tokens, uint32_t dim) const {
  for (const RowChunk& c : table.chunks())
    record_rows(stream, ids, vk::BufferRange::whole(c.buffer), out, tokens, dim, c.first_row, c.rows);
}

void Embedding::record_rows(vk::CommandStream& stream, const vk::BufferRange& ids, const vk::BufferRange& table,
                            const vk::BufferRange& out, uint32_t tokens, uint32_t dim, uint32_t first_row,
                            uint32_t rows) const {
  if (tokens == 0) return;
  const ElementTraits& e = element_traits(table_);
  if (dim % e.block_elements)
    throw Error("embedding: rows of " + std::to_string(dim) + " values are not whole " + std::string(e.name) +
                " blocks of " + std::to_string(e.block_elements));
  if (ids.size < uint64_t(tokens) * 4 || out.size < uint64_t(tokens) * dim * 4)
    throw Error("embedding: ids or output range too small for " + std::to_string(tokens) + " tokens");
  stream.dispatch(*pipeline_, {{ids, vk::Access::Read}, {table, vk::Access::Read}, {out, vk::Access::Write}},
                  Push{tokens, dim, first_row, rows, scale_}, grid_1d(uint64_t(tokens) * dim, kFlatWorkgroup, device_.caps()));
}

}  // namespace infini::ops
