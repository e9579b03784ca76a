#include "formats/gguf_digest.hpp"

#include <algorithm>
#include <cstring>

namespace infini::model {
namespace {

// FNV-1a over 64-bit words with a final mix (bytes that do not fill a word are zero-padded, and
// every part's length is hashed first, so parts cannot run into each other).
class Digest {
 public:
  void add(std::span<const std::byte> bytes) {
    word(bytes.size());
    size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + i, 8);
      word(w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    word(tail);
  }
  uint64_t value() const {
    uint64_t h = h_;  // splitmix64's finalizer
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return (h ^ (h >> 31)) | 1;  // never 0, which means "not recorded" in state files
  }

 private:
  void word(uint64_t w) { h_ = (h_ ^ w) * 0x100000001b3ull; }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace

uint64_t gguf_digest(const GgufFile& file) {
  constexpr size_t kSample = 4096;
  Digest d;
  d.add(file.bytes().first(std::min<size_t>(file.data_offset(), file.bytes().size())));
  for (const TensorView& t : file.tensors()) {
    const std::span<const std::byte> data = t.data;
    if (data.size() <= 3 * kSample) {
      d.add(data);
      continue;
    }
    d.add(data.first(kSample));
    d.add(data.subspan(data.size() / 2 - kSample / 2, kSample));
    d.add(data.last(kSample));
  }
  return d.value();
}

}  // namespace infini::model
