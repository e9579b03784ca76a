// GGUF parsing (see gguf_format.hpp for the layout). Order of checks: every count read from the
// file is first compared with the bytes left (each item has a minimum encoded size), so no
// reserve() or loop can be driven past what the file could hold; every length is checked before
// its bytes are taken; tensor sizes are computed with overflow checks and then placed inside the
// data section, aligned and without overlap.
#include "formats/gguf_file.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "infini/error.hpp"
#include "io/mapped_file.hpp"
#include "formats/byte_cursor.hpp"
#include "infini/printable.hpp"

namespace infini::model {

using gguf::ValueType;

namespace {

constexpr uint64_t kMaxKeyLength = 65535;         // the GGUF spec's limit
constexpr uint64_t kMaxTensorNameLength = 1024;   // ggml itself stops at 63
constexpr std::size_t kMaxQuoted = 64;
// Real models have a few hundred keys and at most tens of thousands of tensors. The caps bound
// the memory of the parsed tables (~100 bytes an entry) whatever the size of the file.
constexpr uint64_t kMaxKeyValues = uint64_t(1) << 20;
constexpr uint64_t kMaxTensors = uint64_t(1) << 20;            // longest name echoed in a message
constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;             // key length, 1 char, type, u8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;   // name, n_dims, ne[0], type, offset

std::string name_text(std::string_view s) {
  std::string out(1, '\'');  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "'" + string
  out += printable(s, true, kMaxQuoted);
  out += '\'';
  return out;
}

// "f32=0, f16=1, q4_0=2": the types the reader takes, from the element-type table, in ggml's
// numbering (the order llama.cpp lists them in).
std::string supported_types() {
  std::vector<const ElementTraits*> types;
  for (const ElementTraits& t : kElementTypes) types.push_back(&t);
  std::sort(types.begin(), types.end(),
            [](const ElementTraits* a, const ElementTraits* b) { return a->ggml_type < b->ggml_type; });
  std::string s;
  for (const ElementTraits* t : types)
    s += (s.empty() ? "" : ", ") + std::string(t->name) + "=" + std::to_string(t->ggml_type);
  return s;
}

// Smallest encoding of one array element of type t (a string or an array has its header).
uint64_t min_element_bytes(ValueType t) {
  if (t == ValueType::String) return 8;
  if (t == ValueType::Array) return 4 + 8;
  return gguf::scalar_size(t);
}

class Parser {
 public:
  Parser(std::span<const std::byte> bytes, const std::string& name) : c_(bytes, name), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(name_ + ": " + what); }

  ByteCursor& cursor() { return c_; }

  // A u64-length string, at most max_length bytes and within the file.
  std::string_view string(uint64_t max_length, const std::string& what) {
    const std::size_t at = c_.pos();
    const auto length = c_.read<uint64_t>(what + " length");
    if (length > c_.remaining())
      fail(what + " at byte " + std::to_string(at) + " has length " + std::to_string(length) +
           ", which runs past the end of the file (" + std::to_string(c_.remaining()) + " bytes left)");
    if (length > max_length)
      fail(what + " at byte " + std::to_string(at) + " has length " + std::to_string(length) + " (at most " +
           std::to_string(max_length) + ")");
    const auto chars = c_.take(length, what);
    return {reinterpret_cast<const char*>(chars.data()), chars.size()};
  }

  ValueType value_type(const std::string& what) {
    const auto raw = c_.read<uint32_t>(what + " type");
    if (raw >= gguf::kValueTypeCount) fail(what + " has unknown value type " + std::to_string(raw));
    return static_cast<ValueType>(raw);
  }

  GgufValue value(ValueType type, int depth, const std::string& what) {
    GgufValue v;
    v.type = type;
    if (type == ValueType::String) {
      const std::string_view s = string(UINT64_MAX, what);
      v.payload = std::as_bytes(std::span(s.data(), s.size()));
    } else if (type == ValueType::Array) {
      if (depth >= GgufFile::kMaxArrayDepth)
        fail(what + " nests arrays deeper than " + std::to_string(GgufFile::kMaxArrayDepth));
      v.element_type = value_type(what + " element");
      const std::size_t at = c_.pos();
      v.count = c_.read<uint64_t>(what + " count");
      const uint64_t min = min_element_bytes(v.element_type);
      if (v.count > c_.remaining() / min)
        fail(what + " at byte " + std::to_string(at) + " claims " + std::to_string(v.count) + " elements of " +
             gguf::value_type_name(v.element_type) + ", more than the " + std::to_string(c_.remaining()) +
             " bytes left can hold");
      const std::size_t start = c_.pos();
      if (min_element_bytes(v.element_type) == gguf::scalar_size(v.element_type)) {
        v.payload = c_.take(v.count * min, what);
        if (v.element_type == ValueType::Bool)
          for (std::size_t i = 0; i < v.payload.size(); ++i) check_bool(v.payload[i], what);
      } else {
        for (uint64_t i = 0; i < v.count; ++i) {
          const ValueType inner = v.element_type == ValueType::Array ? value_type(what + " element") : v.element_type;
          (void)value(inner, depth + 1, what + " element " + std::to_string(i));
        }
        v.payload = c_.bytes_between(start);
      }
    } else {
      v.payload = c_.take(gguf::scalar_size(type), what);
      if (type == ValueType::Bool) check_bool(v.payload[0], what);
    }
    return v;
  }

 private:
  void check_bool(std::byte b, const std::string& what) const {
    if (b != std::byte{0} && b != std::byte{1})
      fail(what + " is a bool with value " + std::to_string(std::to_integer<int>(b)) + " (must be 0 or 1)");
  }

  ByteCursor c_;
  const std::string& name_;
};

struct TensorInfo {
  uint64_t offset = 0;  // relative to the data section
  uint64_t bytes = 0;
};

}  // namespace

GgufFile::GgufFile(const std::filesystem::path& path) : name_(printable(path.string(), false)) {
  auto mapping = std::make_shared<io::MappedFile>(path);
  bytes_ = mapping->bytes();
  storage_ = std::move(mapping);
  parse();
}

GgufFile::GgufFile(std::span<const std::byte> bytes, std::string name) : name_(printable(name, false)) {
  auto copy = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
  bytes_ = *copy;
  storage_ = std::move(copy);
  parse();
}

void GgufFile::parse() {
  Parser p(bytes_, name_);
  ByteCursor& c = p.cursor();

  // ---- header ----
  const std::size_t magic_seen = std::min<std::size_t>(bytes_.size(), sizeof gguf::kMagic);
  if (magic_seen == 0 || std::memcmp(bytes_.data(), gguf::kMagic, magic_seen) != 0)
    p.fail(magic_seen == 0 ? std::string("empty file: not a GGUF file")
                           : "bad magic '" + printable({reinterpret_cast<const char*>(bytes_.data()), magic_seen}, true) +
                                 "': not a GGUF file");
  c.take(sizeof gguf::kMagic, "magic");
  version_ = c.read<uint32_t>("version");
  if (version_ == 1) p.fail("unsupported GGUF version 1 (obsolete; only versions 2 and 3 are read)");
  if (version_ != 2 && version_ != 3) {
    if (version_ == 0x02000000u || version_ == 0x03000000u)
      p.fail("big-endian GGUF files are not supported");
    p.fail("unsupported GGUF version " + std::to_string(version_) + " (only versions 2 and 3 are read)");
  }
  const auto tensor_count = c.read<uint64_t>("tensor count");
  const auto kv_count = c.read<uint64_t>("metadata count");
  if (kv_count > c.remaining() / kMinKeyValueBytes)
    p.fail("metadata count " + std::to_string(kv_count) + " cannot fit in the " + std::to_string(c.remaining()) +
           " bytes after the header");
  if (tensor_count > (c.remaining() - kv_count * kMinKeyValueBytes) / kMinTensorInfoBytes)
    p.fail("tensor count " + std::to_string(tensor_count) + " cannot fit in the " + std::to_string(c.remaining()) +
           " bytes after the header");

  if (kv_count > kMaxKeyValues)
    p.fail("metadata count " + std::to_string(kv_count) + " exceeds the limit of " + std::to_string(kMaxKeyValues));
  if (tensor_count > kMaxTensors)
    p.fail("tensor count " + std::to_string(tensor_count) + " exceeds the limit of " + std::to_string(kMaxTensors));

  // ---- metadata ----
  metadata_.reserve(static_cast<std::size_t>(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    const std::string pair = "metadata pair " + std::to_string(i);
    const std::string_view key = p.string(kMaxKeyLength, pair + " key");
    if (key.empty()) p.fail(pair + " has an empty key");
    if (key_index_.contains(key)) p.fail("duplicate key " + name_text(key));
    const std::string what = "key " + name_text(key);
    const ValueType type = p.value_type(what);
    GgufValue value = p.value(type, 0, what);
    key_index_.emplace(std::string(key), metadata_.size());
    metadata_.push_back({std::string(key), value});
  }

  alignment_ = gguf::kDefaultAlignment;
  if (const GgufValue* a = find(gguf::kAlignmentKey)) {
    alignment_ = value_u32(*a, describe_key(gguf::kAlignmentKey));
    if (!std::has_single_bit(alignment_))
      p.fail(std::string(gguf::kAlignmentKey) + " is " + std::to_string(alignment_) +
             ", which is not a power of two");
  }

  // ---- tensor infos ----
  if (tensor_count > c.remaining() / kMinTensorInfoBytes)
    p.fail("tensor count " + std::to_string(tensor_count) + " cannot fit in the " + std::to_string(c.remaining()) +
           " bytes left after the metadata");
  std::vector<TensorInfo> infos;
  infos.reserve(static_cast<std::size_t>(tensor_count));
  tensors_.reserve(static_cast<std::size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    const std::string_view name = p.string(kMaxTensorNameLength, "name of tensor " + std::to_string(i));
    if (name.empty()) p.fail("tensor " + std::to_string(i) + " has an empty name");
    const std::string what = "tensor " + name_text(name);
    if (tensor_index_.contains(name)) p.fail("duplicate tensor name " + name_text(name));
    const auto n_dims = c.read<uint32_t>(what + " dimension count");
    if (n_dims < 1 || n_dims > gguf::kMaxDims)
      p.fail(what + " has " + std::to_string(n_dims) + " dimensions (1 to " + std::to_string(gguf::kMaxDims) +
             " are supported)");
    TensorView t;
    t.name = std::string(name);
    uint64_t elements = 1;
    bool overflow = false;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = c.read<uint64_t>(what + " dimension");
      if (ne > static_cast<uint64_t>(INT64_MAX)) p.fail(what + " has dimension " + std::to_string(ne) + ", too large");
      t.shape.push_back(static_cast<int64_t>(ne));
      overflow = overflow || __builtin_mul_overflow(elements, ne, &elements) || elements > uint64_t(INT64_MAX);
    }
    if (overflow) p.fail("element count of " + what + " with shape " + gguf::shape_text(t.shape) + " overflows");
    const auto type = c.read<uint32_t>(what + " type");
    const std::optional<ElementType> stored = element_type_from_ggml(type);
    if (!stored) p.fail(what + " has ggml type " + std::to_string(type) + ", which infini does not read (" + supported_types() + ")");
    t.type = *stored;
    TensorInfo info;
    info.offset = c.read<uint64_t>(what + " offset");
    if (info.offset % alignment_ != 0)
      p.fail(what + " data offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
             std::to_string(alignment_));
    // Blocks never span rows: a row (shape[0] values) must be a whole number of blocks.
    const uint32_t block = element_traits(t.type).block_elements;
    if (!t.shape.empty() && t.shape[0] % block != 0)
      p.fail(what + " has rows of " + std::to_string(t.shape[0]) + " values, not a multiple of the " +
             std::string(element_name(t.type)) + " block of " + std::to_string(block));
    const std::optional<uint64_t> bytes = element_bytes(t.type, elements);
    if (!bytes) p.fail("byte size of " + what + " with shape " + gguf::shape_text(t.shape) + " overflows");
    info.bytes = *bytes;
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
    infos.push_back(info);
  }

  // ---- data section ----
  const uint64_t end_of_infos = c.pos();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;  // no overflow: both < 2^63
  const uint64_t data_size = data_offset_ < bytes_.size() ? bytes_.size() - data_offset_ : 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& info = infos[i];
    if (info.offset > data_size || info.bytes > data_size - info.offset)
      p.fail("tensor " + name_text(tensors_[i].name) + " (" + gguf::shape_text(tensors_[i].shape) + " " +
             std::string(element_name(tensors_[i].type)) + ", " + std::to_string(info.bytes) + " bytes at offset " +
             std::to_string(info.offset) + ") runs past the end of the file (the data section holds " +
             std::to_string(data_size) + " bytes)");
    tensors_[i].data = bytes_.subspan(static_cast<std::size_t>(data_offset_ + info.offset),
                                      static_cast<std::size_t>(info.bytes));
  }
  std::vector<std::size_t> order(tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return infos[a].offset < infos[b].offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = infos[order[k - 1]];
    if (prev.bytes > 0 && prev.offset + prev.bytes > infos[order[k]].offset)
      p.fail("tensors " + name_text(tensors_[order[k - 1]].name) + " and " + name_text(tensors_[order[k]].name) +
             " overlap in the data section");
  }
}

// ---- accessors ----

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second].value;
}

std::string GgufFile::describe_key(std::string_view key) const { return name_ + ": key " + name_text(key); }

const GgufValue& GgufFile::get(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) throw Error(describe_key(key) + " is missing");
  return *v;
}

uint32_t GgufFile::get_u32(std::string_view key) const { return value_u32(get(key), describe_key(key)); }
int32_t GgufFile::get_i32(std::string_view key) const { return value_i32(get(key), describe_key(key)); }
uint64_t GgufFile::get_u64(std::string_view key) const { return value_u64(get(key), describe_key(key)); }
int64_t GgufFile::get_i64(std::string_view key) const { return value_i64(get(key), describe_key(key)); }
float GgufFile::get_f32(std::string_view key) const { return value_f32(get(key), describe_key(key)); }
double GgufFile::get_f64(std::string_view key) const { return value_f64(get(key), describe_key(key)); }
bool GgufFile::get_bool(std::string_view key) const { return value_bool(get(key), describe_key(key)); }
std::string GgufFile::get_string(std::string_view key) const {
  return std::string(value_string(get(key), describe_key(key)));
}
std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  return value_string_array(get(key), describe_key(key));
}
std::vector<float> GgufFile::get_f32_array(std::string_view key) const {
  return value_f32_array(get(key), describe_key(key));
}
std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  return value_int_array(get(key), describe_key(key));
}

const TensorView* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorView& GgufFile::tensor(std::string_view name) const {
  const TensorView* t = find_tensor(name);
  if (!t) throw Error(name_ + ": tensor " + name_text(name) + " is missing");
  return *t;
}

}  // namespace infini::model
