#pragma once
// Token embedding lookup on the device: rows of a table of any weight type gathered into f32
// rows, each value times `scale` (1, or gemma's sqrt(n_embd)).
#include <cstdint>

#include "infini/element_type.hpp"
#include "ops/row_chunks.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

class Embedding {
 public:
  Embedding(vk::Device& device, ElementType table, float scale = 1.0f);
  // out[t][:] = table[ids[t]][:] * scale for t < tokens; ids are uint32 already checked against the vocab.
  // A block-format table needs rows (dim) of whole blocks; throws infini::Error otherwise.
  void record(vk::CommandStream& stream, const vk::BufferRange& ids, const vk::BufferRange& table,
              const vk::BufferRange& out, uint32_t tokens, uint32_t dim) const;
  // The same for a table stored as row chunks (one dispatch per chunk).
  void record(vk::CommandStream& stream, const vk::BufferRange& ids, const RowChunks& table,
              const vk::BufferRange& out, uint32_t tokens, uint32_t dim) const;

 private:
  void record_rows(vk::CommandStream& stream, const vk::BufferRange& ids, const vk::BufferRange& table,
                   const vk::BufferRange& out, uint32_t tokens, uint32_t dim, uint32_t first_row, uint32_t rows) const;
  vk::Device& device_;
  ElementType table_;
  float scale_;
  const vk::Pipeline* pipeline_;
};

}  // namespace infini::ops
