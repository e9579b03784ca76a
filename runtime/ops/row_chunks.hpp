#pragma once
// A weight matrix [rows][row_bytes] on the device as chunks of whole rows, each in its own buffer,
// so that no chunk exceeds one allocation (maxMemoryAllocationSize) or one descriptor range
// (maxStorageBufferRange). Small devices (phones, iGPUs) have limits of 128 MiB to 2 GiB; a
// 128K-token vocabulary's embedding table is larger. On devices with room there is one chunk.
// Ops that read such a matrix record one dispatch per chunk (see matmul_chunks, Embedding).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ops/matmul.hpp"
#include "vk/buffer.hpp"

namespace infini::ops {

struct RowChunk {
  vk::Buffer buffer;
  uint32_t first_row = 0, rows = 0;
};

class RowChunks {
 public:
  // Uploads `data` (rows * row_bytes bytes). Chunks hold at most max_chunk_bytes, in a multiple of
  // `row_multiple` rows where that many fit (aligned offsets keep the fast kernels); throws naming
  // the limit when one row alone is too big.
  RowChunks(vk::Device& device, const std::string& label, std::span<const std::byte> data, uint64_t rows,
            uint64_t row_bytes, uint64_t max_chunk_bytes, uint32_t row_multiple = 4);

  const std::vector<RowChunk>& chunks() const noexcept { return chunks_; }
  uint64_t rows() const noexcept { return rows_; }

 private:
  std::vector<RowChunk> chunks_;
  uint64_t rows_;
};

// The largest buffer a device takes as one allocation and one binding.
uint64_t max_chunk_bytes(const vk::Capabilities& caps);

// C[:, rows of chunk] = A * chunk^T for every chunk: `args` describes the whole product (n = all
// rows of B, c packed or with ldc, the bias's offset that of column 0); its b range is ignored.
// glu_up: the matching chunks of MatmulArgs::glu_up (its glu_up range is ignored).
void record_matmul_chunks(const Matmul& matmul, vk::CommandStream& stream, MatmulArgs args, const RowChunks& b,
                          const RowChunks* glu_up = nullptr);

}  // namespace infini::ops
