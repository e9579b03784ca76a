#pragma once
// Bounds-checked little-endian reads from an untrusted byte span. Every read first checks that
// the bytes exist, so a parser built on it cannot read outside the span whatever the file says.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "infini/error.hpp"

namespace infini::model {

static_assert(std::endian::native == std::endian::little, "GGUF I/O assumes a little-endian host");

class ByteCursor {
 public:
  // `name` prefixes error messages (the file name).
  ByteCursor(std::span<const std::byte> bytes, std::string_view name, std::size_t pos = 0)
      : bytes_(bytes), name_(name), pos_(pos) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::size_t size() const { return bytes_.size(); }

  template <typename T>
  T read(std::string_view what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what).data(), sizeof(T));
    return v;
  }

  // The bytes from `start` up to the current position.
  std::span<const std::byte> bytes_between(std::size_t start) const { return bytes_.subspan(start, pos_ - start); }

  // The next n bytes; `what` names the field in the truncation message.
  std::span<const std::byte> take(uint64_t n, std::string_view what) {
    if (n > remaining())
      throw Error(std::string(name_) + ": truncated file: " + std::string(what) + " at byte " + std::to_string(pos_) +
                  " needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) + " remain");
    const auto out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

 private:
  std::span<const std::byte> bytes_;
  std::string_view name_;
  std::size_t pos_;
};

}  // namespace infini::model
