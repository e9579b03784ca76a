#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0) holding little-endian float32 or float16
// arrays in C order: the tensor exchange format of `infini attention`. The reader treats every
// file as hostile: anything it cannot represent exactly is rejected with a one-line infini::Error
// that starts with the file name, before any allocation larger than the file itself.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "infini/element_type.hpp"

namespace infini {

// Highest rank the reader accepts; the runtime's tensors have at most 4 dimensions.
inline constexpr std::size_t kNpyMaxRank = 8;

struct NpyArray {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;  // empty for a 0-d (scalar) array
  std::vector<uint8_t> bytes;  // little-endian element data, C order

  int64_t elements() const;
  std::vector<float> to_floats() const;  // f16 is widened exactly
};

// Parses a whole .npy file held in memory. `name` is only used to prefix error messages.
NpyArray parse_npy(std::span<const uint8_t> file, std::string_view name);

// Reads and parses a .npy file; the element data is read straight into the result.
NpyArray read_npy(const std::filesystem::path& path);

// Writes float32 C-order data. The file appears atomically (a temp file in the same directory
// is written, flushed to disk and renamed over `path`), so readers and crashes never see a
// half-written file. Throws infini::Error when the shape does not match the data or on any I/O
// failure (cannot create, disk full, short write); the temp file is removed then.
void write_npy_f32(const std::filesystem::path& path, std::span<const float> data, std::span<const int64_t> shape);

}  // namespace infini
