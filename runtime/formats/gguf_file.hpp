#pragma once
// A parsed GGUF file (versions 2 and 3): metadata and tensor views into the file's bytes, which
// the object keeps alive (a read-only memory mapping, or an owned copy for in-memory input).
//
// The file is treated as hostile. Construction checks every count, length, offset and size
// against the file before using or allocating anything for it, and throws infini::Error with a
// one-line message starting with the file name: wrong magic, unsupported version, truncation,
// absurd counts, duplicate keys or tensor names, nesting deeper than kMaxArrayDepth, bad
// general.alignment, tensors with more than 4 dimensions, overflowing element counts, unsupported
// ggml types, misaligned or overlapping data, data outside the file.
//
// A successfully constructed GgufFile only holds tensors whose data lies inside the file, so the
// TensorView spans can be read without further checks.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <map>
#include <vector>

#include "formats/gguf_value.hpp"
#include "formats/tensor_view.hpp"

namespace infini::model {

struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

class GgufFile {
 public:
  static constexpr int kMaxArrayDepth = 4;  // arrays of arrays ... nested at most this deep

  // Maps the file read-only. Errors start with the path.
  explicit GgufFile(const std::filesystem::path& path);
  // Parses a copy of `bytes` (fuzzing, tests, files received over a socket). Errors start with `name`.
  GgufFile(std::span<const std::byte> bytes, std::string name);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the data section
  std::span<const std::byte> bytes() const { return bytes_; }
  // Whatever keeps bytes() alive; share it to keep tensor views valid past this object.
  std::shared_ptr<const void> storage() const { return storage_; }

  // ---- metadata, in file order ----
  const std::vector<GgufKeyValue>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // Typed gets throw "<file>: key 'k' is missing" or "<file>: key 'k' has type string, expected
  // an integer" (see gguf_value.hpp for the conversions each accepts).
  const GgufValue& get(std::string_view key) const;
  uint32_t get_u32(std::string_view key) const;
  int32_t get_i32(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const;
  int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  double get_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::string get_string(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<float> get_f32_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;
  // "<file>: key 'k'", the subject of messages about a key (name cut and made printable).
  std::string describe_key(std::string_view key) const;

  // ---- tensors, in file order ----
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find_tensor(std::string_view name) const;
  const TensorView& tensor(std::string_view name) const;  // throws "<file>: tensor 'x' is missing"

 private:
  void parse();

  std::string name_;
  std::shared_ptr<const void> storage_;
  std::span<const std::byte> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 0;
  uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> metadata_;
  std::map<std::string, std::size_t, std::less<>> key_index_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace infini::model
