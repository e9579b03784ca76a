// Which type each weight matrix gets under a quantization scheme (include/infini/quantize.hpp).
#include <charconv>
#include <string>

#include "infini/quantize.hpp"

namespace infini {
namespace {

struct SchemeTraits {
  QuantScheme scheme;
  std::string_view name;
  ElementType base;    // most matrices
  uint32_t file_type;  // llama.cpp's llama_ftype
};

constexpr SchemeTraits kSchemes[] = {
    {QuantScheme::Q8_0, "q8_0", ElementType::Q8_0, 7},       {QuantScheme::Q4_0, "q4_0", ElementType::Q4_0, 2},
    {QuantScheme::Q4_K_M, "q4_k_m", ElementType::Q4_K, 15},  {QuantScheme::Q5_K_M, "q5_k_m", ElementType::Q5_K, 17},
    {QuantScheme::Q6_K, "q6_k", ElementType::Q6_K, 18},      {QuantScheme::Q4_1, "q4_1", ElementType::Q4_1, 3},
    {QuantScheme::Q5_0, "q5_0", ElementType::Q5_0, 8},       {QuantScheme::Q5_1, "q5_1", ElementType::Q5_1, 9},
    {QuantScheme::IQ4_NL, "iq4_nl", ElementType::IQ4_NL, 25}, {QuantScheme::IQ4_XS, "iq4_xs", ElementType::IQ4_XS, 30},
    {QuantScheme::Q3_K_M, "q3_k_m", ElementType::Q3_K, 12},  {QuantScheme::Q2_K, "q2_k", ElementType::Q2_K, 10},
};

const SchemeTraits& traits(QuantScheme s) { return kSchemes[size_t(s)]; }

// The layer of "blk.N.rest" when rest is `what`; -1 otherwise.
int64_t layer_of(std::string_view tensor, std::string_view what) {
  constexpr std::string_view kPrefix = "blk.";
  if (!tensor.starts_with(kPrefix)) return -1;
  tensor.remove_prefix(kPrefix.size());
  int64_t layer = -1;
  const auto [end, ec] = std::from_chars(tensor.data(), tensor.data() + tensor.size(), layer);
  if (ec != std::errc() || end == tensor.data() + tensor.size() || *end != '.') return -1;
  return std::string_view(end + 1, size_t(tensor.data() + tensor.size() - end - 1)) == what ? layer : -1;
}

// The layers whose attn_v and ffn_down get more bits: the first and last eighth, and every third
// layer between (llama.cpp's rule for its _M mixtures).
bool more_bits_layer(int64_t layer, int64_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// The type before any fallback for rows that are not whole blocks (llama_tensor_get_type).
ElementType mixture_type(QuantScheme scheme, std::string_view tensor, const QuantModel& m) {
  using enum ElementType;
  const ElementType base = traits(scheme).base;
  if (tensor == "output.weight" || (m.tied && tensor == "token_embd.weight")) return base == Q8_0 ? Q8_0 : Q6_K;
  const bool iq4 = scheme == QuantScheme::IQ4_NL || scheme == QuantScheme::IQ4_XS;
  if (const int64_t layer = layer_of(tensor, "attn_v.weight"); layer >= 0) {
    switch (scheme) {
      case QuantScheme::Q2_K: return m.gqa >= 4 ? Q4_K : Q3_K;
      case QuantScheme::Q3_K_M: return layer < 2 ? Q5_K : Q4_K;
      case QuantScheme::Q4_K_M:
      case QuantScheme::Q5_K_M: return more_bits_layer(layer, m.layers) ? Q6_K : base;
      default: return iq4 && m.gqa >= 4 ? Q5_K : base;
    }
  }
  if (const int64_t layer = layer_of(tensor, "ffn_down.weight"); layer >= 0) {
    switch (scheme) {
      case QuantScheme::Q2_K: return Q3_K;
      case QuantScheme::Q3_K_M: return layer < m.layers / 16 ? Q5_K : Q4_K;
      case QuantScheme::Q4_K_M:
      case QuantScheme::Q5_K_M: return more_bits_layer(layer, m.layers) ? Q6_K : base;
      default: return iq4 && layer < m.layers / 8 ? Q5_K : base;
    }
  }
  if (layer_of(tensor, "attn_output.weight") >= 0) {
    if (scheme == QuantScheme::Q2_K) return Q3_K;
    if (scheme == QuantScheme::Q3_K_M) return Q4_K;
  }
  return base;
}

}  // namespace

std::vector<QuantScheme> quant_schemes() {
  std::vector<QuantScheme> all;
  for (const SchemeTraits& t : kSchemes) all.push_back(t.scheme);
  return all;
}

std::string_view quant_scheme_name(QuantScheme scheme) noexcept { return traits(scheme).name; }

uint32_t quant_scheme_file_type(QuantScheme scheme) noexcept { return traits(scheme).file_type; }

std::optional<QuantScheme> quant_scheme_named(std::string_view name) noexcept {
  for (const SchemeTraits& t : kSchemes)
    if (t.name == name) return t.scheme;
  return std::nullopt;
}

std::optional<ElementType> quant_type_for(QuantScheme scheme, std::string_view tensor, uint64_t row_length,
                                          const QuantModel& model) noexcept {
  using enum ElementType;
  const ElementType type = mixture_type(scheme, tensor, model);
  if (row_length % element_traits(type).block_elements == 0) return type;
  // Rows that are not whole 256-value super-blocks take a 32-value type of about the same bits,
  // as llama.cpp's quantizer does (so such files match the ones it writes for small models).
  const ElementType fallback = type == Q2_K || type == Q3_K ? Q4_0
                               : type == Q4_K               ? Q5_0
                               : type == Q5_K               ? Q5_1
                               : type == IQ4_XS             ? IQ4_NL
                                                            : Q8_0;
  if (row_length % element_traits(fallback).block_elements == 0) return fallback;
  return std::nullopt;
}

}  // namespace infini
