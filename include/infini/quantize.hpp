#pragma once
// Quantizing a GGUF model file: every weight matrix is re-encoded in the type its scheme gives it
// (the bytes ggml's reference quantizers write, no importance matrix); norms, the
// Infini-attention gates and anything else stay as they are, and every metadata key is copied
// (general.file_type names the scheme as llama.cpp numbers it).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "infini/element_type.hpp"

namespace infini {

// Which type each weight matrix gets:
//   q8_0, q4_0, q6_k  every matrix in that type;
//   q4_k_m, q5_k_m    Q4_K or Q5_K, with Q6_K for output.weight and for attn_v and ffn_down in the
//                     first and last eighth of the layers and every third layer between (the
//                     mixture llama.cpp calls Q4_K_M and Q5_K_M).
// A matrix whose rows are not whole 256-value blocks cannot take a K type and gets Q8_0 instead;
// one whose rows are not whole 32-value blocks keeps its type.
enum class QuantScheme : uint8_t { Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K };

std::string_view quant_scheme_name(QuantScheme scheme) noexcept;  // "q4_k_m"
std::optional<QuantScheme> quant_scheme_named(std::string_view name) noexcept;
// general.file_type of a file in `scheme`, as llama.cpp numbers its file types (Q4_K_M is 15).
uint32_t quant_scheme_file_type(QuantScheme scheme) noexcept;

// The type `scheme` stores weight matrix `tensor` (GGUF name, rows of `row_length` values) in, for
// a model of `layers` blocks; nullopt when no block type fits the rows.
std::optional<ElementType> quant_type_for(QuantScheme scheme, std::string_view tensor, uint64_t row_length,
                                          int64_t layers) noexcept;

struct QuantizeReport {
  int64_t tensors = 0;          // in the file
  int64_t quantized = 0;        // re-encoded in a block type
  int64_t fell_back = 0;        // of those, given Q8_0: rows not whole 256-value blocks
  int64_t kept_unfit = 0;       // matrices left as they were: rows not whole blocks of 32
  uint64_t bytes_in = 0, bytes_out = 0;  // file sizes
};

// The first tensor of `gguf` stored in a block (quantized) type, and that type; nullopt when
// every tensor is f32 or f16. Quantizing such a file rounds weights that were rounded already
// (`infini quantize` asks for --allow-requantize). Throws infini::Error when the file is not readable.
struct QuantizedTensor {
  std::string name;
  ElementType type;
};
std::optional<QuantizedTensor> first_quantized_tensor(const std::filesystem::path& gguf);

// Reads `in` (any GGUF infini reads), writes `out` atomically. Throws infini::Error, writing
// nothing, when `in` is not readable or a weight is not finite. Large matrices are encoded on
// `threads` threads (0: one per core); the file's bytes do not depend on the count.
QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out, QuantScheme scheme,
                              unsigned threads = 1);

}  // namespace infini
