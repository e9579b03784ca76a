#pragma once
// Quantizing a GGUF model file: every weight matrix whose rows are whole blocks of the target type
// is re-encoded (round to nearest with the format's own scale rule, no importance matrix, as
// ggml's reference quantizers do); norms, the Infini-attention gates and anything else stay as
// they are, and every metadata key is copied (general.file_type names the new type).
#include <cstdint>
#include <filesystem>

#include "infini/element_type.hpp"

namespace infini {

struct QuantizeReport {
  int64_t tensors = 0;          // in the file
  int64_t quantized = 0;        // re-encoded to the target type
  int64_t kept_unfit = 0;       // matrices left as they were: rows not whole blocks
  uint64_t bytes_in = 0, bytes_out = 0;  // file sizes
};

// Reads `in` (any GGUF infini reads), writes `out` atomically. Throws infini::Error, writing
// nothing, when `in` is not readable, `type` is not a block format, or a weight is not finite.
QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out, ElementType type);

}  // namespace infini
