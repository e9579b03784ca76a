// GGUF v3 writing (layout in gguf_format.hpp). Values are encoded once when set; the file is then
// the header block (magic, counts, metadata, tensor infos, padding) followed by the tensors, each
// padded to the alignment, so the reader's overlap and alignment checks hold by construction.
#include "formats/gguf_writer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "infini/error.hpp"
#include "io/atomic_file.hpp"
#include "util/half.hpp"
#include "util/block_codec.hpp"

namespace infini::model {

using gguf::ValueType;

namespace {

using Bytes = std::vector<std::byte>;

// resize + memcpy rather than vector::insert, which GCC 12 at -O3 flags with false
// -Wstringop-overflow warnings.
void append(Bytes& out, const void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

template <typename T>
void put(Bytes& out, T v) {
  append(out, &v, sizeof v);
}

void put_string(Bytes& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  append(out, s.data(), s.size());
}

template <typename T>
Bytes scalar(ValueType type, T v) {
  Bytes b;
  put<uint32_t>(b, static_cast<uint32_t>(type));
  put(b, v);
  return b;
}

template <typename T>
Bytes array(ValueType element, std::span<const T> values) {
  Bytes b;
  put<uint32_t>(b, static_cast<uint32_t>(ValueType::Array));
  put<uint32_t>(b, static_cast<uint32_t>(element));
  put<uint64_t>(b, values.size());
  for (const T& v : values) put(b, v);
  return b;
}

uint64_t align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

uint64_t element_count(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (!std::has_single_bit(alignment)) throw Error("GgufWriter: alignment " + std::to_string(alignment) + " is not a power of two");
  if (alignment != gguf::kDefaultAlignment) set(gguf::kAlignmentKey, scalar(ValueType::U32, alignment));
}

void GgufWriter::set(std::string_view key, Bytes encoded) {
  if (key.empty()) throw Error("GgufWriter: empty key");
  for (Entry& e : metadata_)
    if (e.key == key) {
      e.encoded = std::move(encoded);
      return;
    }
  metadata_.push_back({std::string(key), std::move(encoded)});
}

void GgufWriter::set_u8(std::string_view k, uint8_t v) { set(k, scalar(ValueType::U8, v)); }
void GgufWriter::set_i8(std::string_view k, int8_t v) { set(k, scalar(ValueType::I8, v)); }
void GgufWriter::set_u16(std::string_view k, uint16_t v) { set(k, scalar(ValueType::U16, v)); }
void GgufWriter::set_i16(std::string_view k, int16_t v) { set(k, scalar(ValueType::I16, v)); }
void GgufWriter::set_u32(std::string_view k, uint32_t v) { set(k, scalar(ValueType::U32, v)); }
void GgufWriter::set_i32(std::string_view k, int32_t v) { set(k, scalar(ValueType::I32, v)); }
void GgufWriter::set_u64(std::string_view k, uint64_t v) { set(k, scalar(ValueType::U64, v)); }
void GgufWriter::set_i64(std::string_view k, int64_t v) { set(k, scalar(ValueType::I64, v)); }
void GgufWriter::set_f32(std::string_view k, float v) { set(k, scalar(ValueType::F32, v)); }
void GgufWriter::set_f64(std::string_view k, double v) { set(k, scalar(ValueType::F64, v)); }
void GgufWriter::set_bool(std::string_view k, bool v) { set(k, scalar(ValueType::Bool, uint8_t(v ? 1 : 0))); }

void GgufWriter::set_value(std::string_view k, const GgufValue& v) {
  Bytes b;
  put<uint32_t>(b, static_cast<uint32_t>(v.type));
  if (v.type == ValueType::String) {
    put<uint64_t>(b, v.payload.size());
  } else if (v.type == ValueType::Array) {
    put<uint32_t>(b, static_cast<uint32_t>(v.element_type));
    put<uint64_t>(b, v.count);
  }
  append(b, v.payload.data(), v.payload.size());
  set(k, std::move(b));
}

void GgufWriter::set_string(std::string_view k, std::string_view v) {
  Bytes b;
  put<uint32_t>(b, static_cast<uint32_t>(ValueType::String));
  put_string(b, v);
  set(k, std::move(b));
}

void GgufWriter::set_string_array(std::string_view k, std::span<const std::string> v) {
  Bytes b;
  put<uint32_t>(b, static_cast<uint32_t>(ValueType::Array));
  put<uint32_t>(b, static_cast<uint32_t>(ValueType::String));
  put<uint64_t>(b, v.size());
  for (const std::string& s : v) put_string(b, s);
  set(k, std::move(b));
}

void GgufWriter::set_f32_array(std::string_view k, std::span<const float> v) { set(k, array(ValueType::F32, v)); }
void GgufWriter::set_i32_array(std::string_view k, std::span<const int32_t> v) { set(k, array(ValueType::I32, v)); }

void GgufWriter::remove(std::string_view key) {
  std::erase_if(metadata_, [&](const Entry& e) { return e.key == key; });
}

bool GgufWriter::has(std::string_view key) const {
  return std::any_of(metadata_.begin(), metadata_.end(), [&](const Entry& e) { return e.key == key; });
}

void GgufWriter::add_tensor(std::string name, ElementType type, std::vector<int64_t> shape, std::vector<std::byte> data) {
  if (name.empty() || has_tensor(name)) throw Error("GgufWriter: tensor name '" + name + "' is empty or already used");
  if (shape.empty() || shape.size() > gguf::kMaxDims)
    throw Error("GgufWriter: tensor '" + name + "' must have 1 to 4 dimensions");
  for (int64_t d : shape)
    if (d < 0) throw Error("GgufWriter: tensor '" + name + "' has a negative dimension");
  if (data.size() != element_bytes(type, element_count(shape)))
    throw Error("GgufWriter: tensor '" + name + "' of shape " + gguf::shape_text(shape) + " was given " +
                std::to_string(data.size()) + " bytes");
  tensors_.push_back({std::move(name), type, std::move(shape), std::move(data)});
}

void GgufWriter::add_tensor(std::string name, ElementType type, std::vector<int64_t> shape, std::span<const float> values) {
  add_tensor(std::move(name), type, std::move(shape), encode_blocks(type, values));
}

void GgufWriter::remove_tensor(std::string_view name) {
  std::erase_if(tensors_, [&](const Tensor& t) { return t.name == name; });
}

bool GgufWriter::has_tensor(std::string_view name) const {
  return std::any_of(tensors_.begin(), tensors_.end(), [&](const Tensor& t) { return t.name == name; });
}

uint64_t GgufWriter::parameter_count() const {
  uint64_t n = 0;
  for (const Tensor& t : tensors_) n += element_count(t.shape);
  return n;
}

Bytes GgufWriter::header() const {
  Bytes b;
  append(b, gguf::kMagic, sizeof gguf::kMagic);
  put<uint32_t>(b, gguf::kVersion);
  put<uint64_t>(b, tensors_.size());
  put<uint64_t>(b, metadata_.size());
  for (const Entry& e : metadata_) {
    put_string(b, e.key);
    append(b, e.encoded.data(), e.encoded.size());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(b, t.name);
    put<uint32_t>(b, static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) put<uint64_t>(b, static_cast<uint64_t>(d));
    put<uint32_t>(b, element_traits(t.type).ggml_type);
    put<uint64_t>(b, offset);
    offset = align_up(offset + t.data.size(), alignment_);
  }
  b.resize(static_cast<std::size_t>(align_up(b.size(), alignment_)));  // zero padding
  return b;
}

uint64_t GgufWriter::file_size() const {
  uint64_t size = header().size();
  for (const Tensor& t : tensors_) size += align_up(t.data.size(), alignment_);
  return size;
}

void GgufWriter::emit(const std::function<void(std::span<const std::byte>)>& sink) const {
  sink(header());
  const Bytes zeros(alignment_);
  for (const Tensor& t : tensors_) {
    sink(t.data);
    const uint64_t pad = align_up(t.data.size(), alignment_) - t.data.size();
    sink(std::span(zeros).first(static_cast<std::size_t>(pad)));
  }
}

Bytes GgufWriter::to_bytes() const {
  Bytes out;
  emit([&](std::span<const std::byte> piece) { append(out, piece.data(), piece.size()); });
  return out;
}

uint64_t GgufWriter::write(const std::filesystem::path& path) const {
  io::AtomicFile file(path);
  emit([&](std::span<const std::byte> piece) { file.write(piece); });
  file.commit();
  return file.written();
}

}  // namespace infini::model
