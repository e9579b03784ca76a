#pragma once
// A 64-bit digest that tells one model file from another: saved stream states carry it so that a
// state is never restored into other weights of the same shape (a fine-tune, another quantization,
// another random seed). It hashes the whole header (metadata and tensor table) and a sample of
// every tensor's data (its first, middle and last 4 KiB), so it costs milliseconds even for
// multi-GB files; it is an identity check, not a defence against forgery.
#include <cstdint>

#include "formats/gguf_file.hpp"

namespace infini::model {

uint64_t gguf_digest(const GgufFile& file);

}  // namespace infini::model
