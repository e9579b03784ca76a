#include "ops/row_chunks.hpp"

#include <algorithm>

#include "infini/error.hpp"
#include "vk/device.hpp"
#include "vk/transfer.hpp"

namespace infini::ops {

uint64_t max_chunk_bytes(const vk::Capabilities& caps) {
  uint64_t limit = UINT64_MAX;
  if (caps.max_storage_buffer_range) limit = std::min(limit, caps.max_storage_buffer_range);
  if (caps.max_memory_allocation_size) limit = std::min(limit, caps.max_memory_allocation_size);
  return limit;
}

RowChunks::RowChunks(vk::Device& device, const std::string& label, std::span<const std::byte> data, uint64_t rows,
                     uint64_t row_bytes, uint64_t max_chunk_bytes, uint32_t row_multiple)
    : rows_(rows) {
  if (data.size() != rows * row_bytes)
    throw Error(label + ": " + std::to_string(data.size()) + " bytes for " + std::to_string(rows) + " rows of " +
                std::to_string(row_bytes) + " bytes");
  // Buffers are rounded up to whole 32-bit words (f16 kernels read words).
  const uint64_t fit = std::min<uint64_t>((max_chunk_bytes & ~uint64_t(3)) / std::max<uint64_t>(row_bytes, 1), rows);
  const uint64_t per_chunk = fit >= rows ? rows : fit >= row_multiple ? fit / row_multiple * row_multiple : fit;
  if (per_chunk == 0 && rows > 0)
    throw Error(label + ": a row of " + std::to_string(row_bytes) +
                " bytes exceed the device's largest buffer (maxStorageBufferRange / maxMemoryAllocationSize) of " +
                std::to_string(max_chunk_bytes) + " bytes");
  for (uint64_t first = 0; first < rows || first == 0; first += per_chunk) {
    const uint64_t n = std::min(per_chunk, rows - first);
    const std::string name = rows > per_chunk ? label + " rows " + std::to_string(first) + "+" + std::to_string(n) : label;
    vk::Buffer buffer(device, std::max<uint64_t>(4, (n * row_bytes + 3) / 4 * 4), vk::MemoryUse::DeviceLocal, name);
    if (n) vk::upload(buffer, 0, data.data() + first * row_bytes, n * row_bytes);
    chunks_.push_back({std::move(buffer), uint32_t(first), uint32_t(n)});
    if (rows == 0) break;
  }
}

void record_matmul_chunks(const Matmul& matmul, vk::CommandStream& stream, MatmulArgs args, const RowChunks& b,
                          const RowChunks* glu_up) {
  const uint32_t ldc = args.ldc ? args.ldc : args.n, c_offset = args.c_offset, bias_offset = args.bias_offset;
  const std::vector<RowChunk>& chunks = b.chunks();
  const auto same_rows = [](const RowChunk& x, const RowChunk& y) { return x.first_row == y.first_row && x.rows == y.rows; };
  if (glu_up && !std::equal(chunks.begin(), chunks.end(), glu_up->chunks().begin(), glu_up->chunks().end(), same_rows))
    throw Error("matmul: the up weights are not chunked as the gate's (they must have the same shape and type)");
  for (size_t i = 0; i < chunks.size(); ++i) {
    const RowChunk& chunk = chunks[i];
    MatmulArgs part = args;
    part.n = chunk.rows;
    part.b = vk::BufferRange::whole(chunk.buffer);
    if (glu_up) part.glu_up = vk::BufferRange::whole(glu_up->chunks()[i].buffer);
    part.b_offset = 0;
    part.ldc = ldc;
    part.c_offset = c_offset + chunk.first_row;
    part.bias_offset = bias_offset + chunk.first_row;
    matmul.record(stream, part);
  }
}

}  // namespace infini::ops
