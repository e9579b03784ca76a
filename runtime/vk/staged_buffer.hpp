#pragma once
// A device buffer that the host fills or reads around every submission of recorded work (a
// piece's token ids or hidden states in, its logits or hidden states out).
//
// Where device-local memory is host-visible (unified memory: integrated GPUs, lavapipe) the host
// touches the device buffer directly. Elsewhere a host-visible twin of the same size stands in,
// made once, and the copies between the two are recorded into the work's own command buffer: a
// replayed recording moves its inputs and outputs with no extra submission, no allocation and no
// driver object made per piece.
#include <cstdint>
#include <memory>
#include <string>

#include "vk/buffer.hpp"

namespace infini::vk {

class CommandStream;
class Device;

// Which way the host moves the data: in (written before the work), out (read after), or both (a
// hidden state that a middle pipeline stage receives, transforms in place and passes on).
// None: the host never touches it (no twin).
enum class StagingDirection { None, ToDevice, FromDevice, Both };

class StagedBuffer {
 public:
  StagedBuffer(Device& device, uint64_t bytes, StagingDirection direction, const std::string& label);

  const Buffer& device_buffer() const noexcept { return device_; }
  bool staged() const noexcept { return twin_ != nullptr; }  // false: the host maps device_buffer()

  // Host side, before the submission / after it. Throw infini::Error on a
  // range outside the buffer.
  void write(uint64_t offset, const void* data, uint64_t bytes) const;
  void read(uint64_t offset, void* data, uint64_t bytes) const;

  // Records the copy of bytes [offset, offset + bytes) from the twin into the device buffer
  // (before the work that reads it) / from the device buffer into the twin (after the work that
  // writes it). Nothing where there is no twin.
  void record_upload(CommandStream& stream, uint64_t bytes, uint64_t offset = 0) const;
  void record_download(CommandStream& stream, uint64_t bytes, uint64_t offset = 0) const;

 private:
  const Buffer& host_side() const noexcept { return twin_ ? *twin_ : device_; }

  Buffer device_;
  std::unique_ptr<Buffer> twin_;
};

}  // namespace infini::vk
