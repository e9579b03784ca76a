#pragma once
// Builds a GGUF version 3 file: metadata in insertion order, then tensor infos, then each
// tensor's data at an offset aligned to the file's alignment. Setting a key that exists replaces
// its value in place (tests use that to make hostile variants of a valid file).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/gguf_format.hpp"
#include "formats/gguf_value.hpp"
#include "formats/tensor_view.hpp"

namespace infini::model {

class GgufWriter {
 public:
  // Alignment of the data section and of every tensor; a power of two. Written as
  // general.alignment when it differs from the default 32.
  explicit GgufWriter(uint32_t alignment = gguf::kDefaultAlignment);

  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  void set_string_array(std::string_view key, std::span<const std::string> v);
  void set_f32_array(std::string_view key, std::span<const float> v);
  void set_i32_array(std::string_view key, std::span<const int32_t> v);
  // A value as read from another file (GgufFile::metadata()), copied byte for byte.
  void set_value(std::string_view key, const GgufValue& value);
  void remove(std::string_view key);
  bool has(std::string_view key) const;

  // `data` holds the elements in ggml order (shape[0] contiguous), elements * type size bytes.
  void add_tensor(std::string name, ElementType type, std::vector<int64_t> shape, std::vector<std::byte> data);
  // f32 values stored as `type` (f16 rounds to nearest even).
  void add_tensor(std::string name, ElementType type, std::vector<int64_t> shape, std::span<const float> values);
  void remove_tensor(std::string_view name);
  bool has_tensor(std::string_view name) const;

  uint64_t parameter_count() const;  // elements of all tensors
  uint64_t file_size() const;        // bytes the file will have

  // The whole file in memory, or streamed in pieces to `sink`.
  std::vector<std::byte> to_bytes() const;
  void emit(const std::function<void(std::span<const std::byte>)>& sink) const;
  // Writes the file atomically (temp file + rename); returns its size.
  uint64_t write(const std::filesystem::path& path) const;

 private:
  struct Entry {
    std::string key;
    std::vector<std::byte> encoded;  // u32 type + value
  };
  struct Tensor {
    std::string name;
    ElementType type;
    std::vector<int64_t> shape;
    std::vector<std::byte> data;
  };
  void set(std::string_view key, std::vector<std::byte> encoded);
  std::vector<std::byte> header() const;  // everything before the data section, padded

  uint32_t alignment_;
  std::vector<Entry> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace infini::model
