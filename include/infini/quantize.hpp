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
#include <vector>

#include "infini/element_type.hpp"

namespace infini {

// Which type each weight matrix gets, as llama.cpp's llama-quantize gives it (checked against its
// library for every scheme): output.weight (the embedding table where the output is tied to it)
// takes Q6_K, Q8_0 under q8_0; otherwise
//   q8_0, q4_0, q4_1, q5_0, q5_1, q6_k  every matrix in that type;
//   iq4_nl, iq4_xs    that type, with Q5_K for attn_v where 4 or more query heads share a KV
//                     head and for ffn_down in the first eighth of the layers;
//   q4_k_m, q5_k_m    Q4_K or Q5_K, with Q6_K for attn_v and ffn_down in the first and last eighth
//                     of the layers and every third layer between;
//   q3_k_m            Q3_K, with Q4_K for attn_output, attn_v Q5_K in the first two layers and
//                     Q4_K after, ffn_down Q5_K in the first sixteenth of the layers and Q4_K after;
//   q2_k              Q2_K, with Q3_K for attn_output and ffn_down, attn_v Q4_K where 4 or more
//                     query heads share a KV head and Q3_K else.
// A matrix whose rows are not whole 256-value blocks cannot take a 256-value type and gets
// llama.cpp's 32-value stand-in instead (Q4_0 for Q2_K and Q3_K, Q5_0 for Q4_K, Q5_1 for Q5_K,
// IQ4_NL for IQ4_XS, Q8_0 for Q6_K); one whose rows are not whole 32-value blocks keeps its type.
enum class QuantScheme : uint8_t { Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q3_K_M, Q2_K };

std::vector<QuantScheme> quant_schemes();                         // every scheme, in the order above
std::string_view quant_scheme_name(QuantScheme scheme) noexcept;  // "q4_k_m"
std::optional<QuantScheme> quant_scheme_named(std::string_view name) noexcept;
// general.file_type of a file in `scheme`, as llama.cpp numbers its file types (Q4_K_M is 15).
uint32_t quant_scheme_file_type(QuantScheme scheme) noexcept;

// What the mixtures look at besides a tensor's name: the model's blocks, how many query heads
// share a KV head, and whether the output projection is tied to the embedding table.
struct QuantModel {
  int64_t layers = 1;
  int64_t gqa = 1;
  bool tied = false;
};

// The type `scheme` stores weight matrix `tensor` (GGUF name, rows of `row_length` values) in;
// nullopt when no block type fits the rows.
std::optional<ElementType> quant_type_for(QuantScheme scheme, std::string_view tensor, uint64_t row_length,
                                          const QuantModel& model) noexcept;
// The same for a model of `layers` blocks, no grouped KV heads, its own output matrix.
inline std::optional<ElementType> quant_type_for(QuantScheme scheme, std::string_view tensor, uint64_t row_length,
                                                 int64_t layers) noexcept {
  return quant_type_for(scheme, tensor, row_length, QuantModel{layers});
}

struct QuantizeReport {
  int64_t tensors = 0;          // in the file
  int64_t quantized = 0;        // re-encoded in a block type
  int64_t fell_back = 0;        // of those, given a 32-value type: rows not whole 256-value blocks
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
