// .npy reading and writing. Layout of a file (numpy/lib/format.py, NEP 1):
//   "\x93NUMPY" major minor, header length (u16 LE for 1.0, u32 LE for 2.0 and 3.0),
//   header = a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded
//   with spaces and a newline, then the raw element data.
// Every number taken from the file is checked against the file's size before it is used, so a
// hostile file can neither make us read out of bounds nor allocate more than the file holds.
#include "infini/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "infini/error.hpp"
#include "util/half.hpp"
#include "infini/printable.hpp"
#include "util/scalar_bytes.hpp"

namespace infini {

// Element data is copied to and from memory as is, and '=' (native) byte order is read as
// little-endian; every platform the runtime targets (x86, Arm, Adreno/Mali hosts) is one.
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kMaxNestingDepth = 32;  // bounds the literal parser's recursion
constexpr std::size_t kMaxQuoted = 40;        // longest piece of file content echoed in a message
// Headers of the arrays we accept are ~120 bytes; numpy itself refuses more than 10000 by default.
// The cap bounds the parser's memory (a parsed value is ~50x its text) whatever a v2 header claims.
constexpr uint64_t kMaxHeaderLength = 1u << 16;

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  throw Error(printable(name, false) + ": " + what);
}

std::string format_shape(std::span<const int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// ---- The header: a small parser for the Python literal subset numpy writes -------------------

// A parsed Python literal. Dicts keep their entries in order as alternating key, value items, so
// duplicate keys stay visible (Python would silently keep the last one).
struct PyValue {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict } kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;
};

class LiteralParser {
 public:
  LiteralParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  // The whole header: one dict, then only whitespace (numpy's padding).
  PyValue header_dict() {
    skip_space();
    if (!peek('{')) malformed("expected '{'");
    PyValue dict = value(0);
    skip_space();
    if (pos_ != text_.size()) malformed("unexpected text after the closing '}'");
    return dict;
  }

 private:
  [[noreturn]] void malformed(const std::string& what) const {
    fail(name_, "header is not a well-formed Python dict literal: " + what + " at byte " + std::to_string(pos_) +
                    " of the header");
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\f' || text_[pos_] == '\v'))
      ++pos_;
  }

  PyValue value(std::size_t depth) {
    if (depth > kMaxNestingDepth) malformed("nesting deeper than " + std::to_string(kMaxNestingDepth));
    skip_space();
    if (pos_ >= text_.size()) malformed("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return dict(depth);
    if (c == '(' || c == '[') return sequence(depth);
    if (c == '\'' || c == '"') return string();
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return integer();
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') return constant();
    malformed("unexpected character '" + printable(text_.substr(pos_, 1), true) + "'");
  }

  // After an item: ',' (possibly trailing) or the closing bracket. Returns true at the end.
  bool item_separator(char close, const char* expected) {
    skip_space();
    if (peek(close)) {
      ++pos_;
      return true;
    }
    if (!peek(',')) malformed(expected);
    ++pos_;
    skip_space();
    if (peek(close)) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyValue dict(std::size_t depth) {
    ++pos_;  // '{'
    PyValue d;
    d.kind = PyValue::Kind::Dict;
    skip_space();
    if (peek('}')) {
      ++pos_;
      return d;
    }
    for (;;) {
      d.items.push_back(value(depth + 1));
      skip_space();
      if (!peek(':')) malformed("expected ':' after a dict key");
      ++pos_;
      d.items.push_back(value(depth + 1));
      if (item_separator('}', "expected ',' or '}' in dict")) return d;
    }
  }

  // (a, b), (a,), () are tuples; (a) is just a in parentheses, as in Python. [...] is a list.
  PyValue sequence(std::size_t depth) {
    const char close = text_[pos_] == '(' ? ')' : ']';
    ++pos_;
    PyValue seq;
    seq.kind = close == ')' ? PyValue::Kind::Tuple : PyValue::Kind::List;
    skip_space();
    if (peek(close)) {
      ++pos_;
      return seq;
    }
    bool saw_comma = false;
    for (;;) {
      seq.items.push_back(value(depth + 1));
      skip_space();
      if (peek(',')) saw_comma = true;
      if (item_separator(close, close == ')' ? "expected ',' or ')' in tuple" : "expected ',' or ']' in list")) break;
    }
    if (close == ')' && !saw_comma) return std::move(seq.items.front());
    return seq;
  }

  PyValue string() {
    const char quote = text_[pos_++];
    PyValue s;
    s.kind = PyValue::Kind::Str;
    for (;;) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') malformed("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return s;
      if (c == '\\') {  // only the escapes a dtype string could need
        if (pos_ >= text_.size()) malformed("unterminated string");
        const char e = text_[pos_];
        if (e != '\\' && e != '\'' && e != '"') malformed("unsupported escape sequence in string");
        ++pos_;
        s.str += e;
        continue;
      }
      s.str += c;
    }
  }

  PyValue integer() {
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') malformed("expected digits");
    uint64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
      // Limit to what int64 holds; anything larger is absurd as a dimension anyway.
      if (magnitude > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) malformed("integer too large");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek('L') || peek('l')) ++pos_;  // Python 2 numpy wrote long dimensions as 5L
    PyValue v;
    v.kind = PyValue::Kind::Int;
    v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  PyValue constant() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'a' && text_[pos_] <= 'z') ||
                                   (text_[pos_] >= 'A' && text_[pos_] <= 'Z') || text_[pos_] == '_'))
      ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    PyValue v;
    if (word == "True" || word == "False") {
      v.kind = PyValue::Kind::Bool;
      v.boolean = word == "True";
    } else if (word == "None") {
      v.kind = PyValue::Kind::None;
    } else {
      pos_ = start;
      malformed("unknown name '" + printable(word, true, kMaxQuoted) + "'");
    }
    return v;
  }

  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

// The dtype spellings numpy (and hand-written headers) use for our two types.
bool dtype_from_descr(std::string_view descr, ElementType& out) {
  if (!descr.empty() && (descr.front() == '<' || descr.front() == '=')) descr.remove_prefix(1);
  if (descr == "f4" || descr == "f") {
    out = ElementType::F32;
    return true;
  }
  if (descr == "f2" || descr == "e") {
    out = ElementType::F16;
    return true;
  }
  return false;
}

[[noreturn]] void unsupported_dtype(std::string_view name, const std::string& descr) {
  std::string why;
  if (!descr.empty() && descr.front() == '>') why = " (big-endian)";
  else if (descr.find('O') != std::string::npos) why = " (Python objects)";
  fail(name, "unsupported dtype '" + printable(descr, true, kMaxQuoted) + "'" + why +
                 "; only little-endian float32 '<f4' and float16 '<f2' are supported");
}

struct Header {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
};

Header interpret_header(std::string_view text, std::string_view name) {
  const PyValue dict = LiteralParser(text, name).header_dict();
  if (dict.kind != PyValue::Kind::Dict) fail(name, "header is not a dict");

  static constexpr std::string_view kKeys[3] = {"descr", "fortran_order", "shape"};
  const PyValue* found[3] = {nullptr, nullptr, nullptr};
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::Str) fail(name, "header has a key that is not a string");
    std::size_t k = 0;
    while (k < 3 && key.str != kKeys[k]) ++k;
    if (k == 3) fail(name, "header has unexpected key '" + printable(key.str, true, kMaxQuoted) + "'");
    if (found[k]) fail(name, "header has duplicate key '" + std::string(kKeys[k]) + "'");
    found[k] = &dict.items[i + 1];
  }
  for (std::size_t k = 0; k < 3; ++k)
    if (!found[k]) fail(name, "header is missing key '" + std::string(kKeys[k]) + "'");

  Header h;
  const PyValue& descr = *found[0];
  if (descr.kind == PyValue::Kind::List) fail(name, "unsupported structured dtype (descr is a list of fields)");
  if (descr.kind != PyValue::Kind::Str) fail(name, "header 'descr' is not a string");
  if (!dtype_from_descr(descr.str, h.dtype)) unsupported_dtype(name, descr.str);

  const PyValue& fortran = *found[1];
  if (fortran.kind != PyValue::Kind::Bool) fail(name, "header 'fortran_order' is not True or False");
  if (fortran.boolean) fail(name, "Fortran-order arrays (fortran_order: True) are not supported; save in C order");

  const PyValue& shape = *found[2];
  if (shape.kind != PyValue::Kind::Tuple) fail(name, "header 'shape' is not a tuple of integers");
  if (shape.items.size() > kNpyMaxRank)
    fail(name, "rank " + std::to_string(shape.items.size()) + " exceeds the maximum of " +
                   std::to_string(kNpyMaxRank));
  for (const PyValue& dim : shape.items) {
    if (dim.kind != PyValue::Kind::Int) fail(name, "header 'shape' is not a tuple of integers");
    if (dim.integer < 0) fail(name, "negative dimension " + std::to_string(dim.integer) + " in shape");
    h.shape.push_back(dim.integer);
  }
  return h;
}

// ---- Layout: where the header ends and how much data the shape needs ------------------------

uint32_t load_le(std::span<const uint8_t> bytes, std::size_t offset, std::size_t size) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  return v;
}

// Needs the first min(12, file_size) bytes. Returns the offset of the element data, which is
// guaranteed to be within the file.
uint64_t header_end(std::span<const uint8_t> prefix, uint64_t file_size, std::string_view name) {
  const std::size_t magic_seen = std::min<std::size_t>(prefix.size(), sizeof kMagic);
  if (magic_seen > 0 && std::memcmp(prefix.data(), kMagic, magic_seen) != 0) fail(name, "bad magic: not a .npy file");
  const std::string truncated = "truncated header: the file ends after " + std::to_string(file_size) + " bytes";
  if (prefix.size() < 8) fail(name, truncated);
  const unsigned major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t preamble = 8 + length_bytes;
  if (prefix.size() < preamble) fail(name, truncated);
  const uint64_t header_length = load_le(prefix, 8, length_bytes);
  if (header_length > file_size - preamble)
    fail(name, "header length " + std::to_string(header_length) + " runs beyond the end of the file (" +
                   std::to_string(file_size) + " bytes)");
  if (header_length > kMaxHeaderLength)
    fail(name, "header length " + std::to_string(header_length) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderLength) + " bytes");
  return preamble + header_length;
}

struct Layout {
  Header header;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;
};

// `head` holds at least the whole header (or the whole file).
Layout parse_layout(std::span<const uint8_t> head, uint64_t file_size, std::string_view name) {
  Layout l;
  l.data_offset = header_end(head, file_size, name);
  const std::size_t preamble = head[6] == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(head.data()) + preamble,
                              static_cast<std::size_t>(l.data_offset) - preamble);
  l.header = interpret_header(text, name);

  // Element count and byte size, with overflow checks before anything is multiplied for real.
  uint64_t count = 1;
  for (int64_t dim : l.header.shape) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count) || count > static_cast<uint64_t>(INT64_MAX))
      fail(name, "element count of shape " + format_shape(l.header.shape) + " overflows");
  }
  const uint64_t item = scalar_bytes(l.header.dtype);
  if (__builtin_mul_overflow(count, item, &l.data_bytes) || l.data_bytes > static_cast<uint64_t>(INT64_MAX))
    fail(name, "byte size of shape " + format_shape(l.header.shape) + " overflows");

  const uint64_t available = file_size - l.data_offset;
  const std::string need = "shape " + format_shape(l.header.shape) + " of " + std::string(element_name(l.header.dtype)) +
                           " needs " + std::to_string(l.data_bytes) + " data bytes but the file has " +
                           std::to_string(available);
  if (available < l.data_bytes) fail(name, "data is truncated: " + need);
  if (available > l.data_bytes) fail(name, "trailing bytes after the data: " + need);
  return l;
}

// ---- POSIX file helpers ---------------------------------------------------------------------

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text(int err) { return std::strerror(err); }

void read_exact(int fd, uint8_t* out, uint64_t size, uint64_t offset, std::string_view name) {
  while (size > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<uint64_t>(size, 1u << 30));
    const ssize_t n = ::pread(fd, out, chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(name, "read failed: " + errno_text(errno));
    if (n == 0) fail(name, "file shrank while it was being read");
    out += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void write_all(int fd, const uint8_t* data, std::size_t size, std::string_view name) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, std::min<std::size_t>(size, 1u << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(name, "write failed: " + errno_text(errno));
    if (n == 0) fail(name, "short write: the device accepted no more data");
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

// ---- Public API -------------------------------------------------------------------------------

int64_t NpyArray::elements() const {
  uint64_t n = 1;  // wraps instead of UB on a hand-made absurd shape; read arrays are checked
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return static_cast<int64_t>(n);
}

std::vector<float> NpyArray::to_floats() const {
  const auto n = static_cast<std::size_t>(elements());
  if (bytes.size() != n * scalar_bytes(dtype))
    throw Error("NpyArray: " + std::to_string(bytes.size()) + " data bytes do not match shape " + format_shape(shape));
  std::vector<float> out(n);
  if (dtype == ElementType::F32) {
    if (n) std::memcpy(out.data(), bytes.data(), bytes.size());
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = half_to_float(h);
    }
  }
  return out;
}

NpyArray parse_npy(std::span<const uint8_t> file, std::string_view name) {
  Layout l = parse_layout(file, file.size(), name);
  NpyArray a;
  a.dtype = l.header.dtype;
  a.shape = std::move(l.header.shape);
  const auto data = file.subspan(static_cast<std::size_t>(l.data_offset));
  a.bytes.assign(data.begin(), data.end());
  return a;
}

NpyArray read_npy(const std::filesystem::path& path) {
  const std::string name = path.string();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(name, "cannot open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(name, "cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) fail(name, "not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);

  // Read the preamble, then exactly the header it announces (checked against the file size),
  // then the data straight into the array: no second copy of a large tensor.
  std::vector<uint8_t> head(static_cast<std::size_t>(std::min<uint64_t>(file_size, 12)));
  read_exact(fd.get(), head.data(), head.size(), 0, name);
  const uint64_t end = header_end(head, file_size, name);
  if (const std::size_t have = head.size(); end > have) {
    head.resize(static_cast<std::size_t>(end));
    read_exact(fd.get(), head.data() + have, end - have, have, name);
  }
  Layout l = parse_layout(head, file_size, name);

  NpyArray a;
  a.dtype = l.header.dtype;
  a.shape = std::move(l.header.shape);
  a.bytes.resize(static_cast<std::size_t>(l.data_bytes));
  read_exact(fd.get(), a.bytes.data(), l.data_bytes, l.data_offset, name);
  return a;
}

void write_npy_f32(const std::filesystem::path& path, std::span<const float> data, std::span<const int64_t> shape) {
  const std::string name = path.string();
  if (shape.size() > kNpyMaxRank)
    fail(name, "rank " + std::to_string(shape.size()) + " exceeds the maximum of " + std::to_string(kNpyMaxRank));
  uint64_t count = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count))
      fail(name, "cannot write shape " + format_shape(shape) + ": invalid dimensions");
  if (count != data.size())
    fail(name, "shape " + format_shape(shape) + " has " + std::to_string(count) + " elements but " +
                   std::to_string(data.size()) + " values were given");
  if (path.filename().empty()) fail(name, "not a file name");

  // Version 1.0 header padded with spaces to a 64-byte boundary, newline last, as numpy does.
  // With rank <= 8 it is always far below 1.0's 65535-byte limit.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + format_shape(shape) + ", }";
  const std::size_t unpadded = sizeof kMagic + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string preamble(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  preamble += '\x01';
  preamble += '\x00';
  preamble += static_cast<char>(header.size() & 0xff);
  preamble += static_cast<char>(header.size() >> 8);

  // A unique temp name in the target's directory (rename is only atomic within a filesystem).
  // O_EXCL guards against another writer; mode 0666 lets the umask decide, as for any new file.
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::filesystem::path tmp;
  int raw = -1;
  for (int attempt = 0; attempt < 100 && raw < 0; ++attempt) {
    std::string leaf = ".";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + string
    leaf += path.filename().string();
    leaf += ".tmp-";
    leaf += std::to_string(::getpid());
    leaf += '-';
    leaf += std::to_string(counter.fetch_add(1));
    tmp = dir / leaf;
    raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0) fail(name, "cannot create a temporary file in " + dir.string() + ": " + errno_text(errno));

  Fd fd(raw);
  try {
    write_all(fd.get(), reinterpret_cast<const uint8_t*>(preamble.data()), preamble.size(), name);
    write_all(fd.get(), reinterpret_cast<const uint8_t*>(header.data()), header.size(), name);
    write_all(fd.get(), reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes(), name);
    // Data must be on disk before the rename is, or a crash could leave an empty file behind.
    if (::fsync(fd.get()) != 0) fail(name, "cannot flush to disk: " + errno_text(errno));
    if (::close(fd.release()) != 0) fail(name, "cannot close: " + errno_text(errno));
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(name, "cannot rename the temporary file into place: " + errno_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable; failure here loses nothing already visible, so ignore it.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace infini
