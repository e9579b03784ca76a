// Which type each weight matrix gets under a quantization scheme (include/infini/quantize.hpp).
#include <charconv>
#include <string>

#include "infini/quantize.hpp"

namespace infini {
namespace {

struct SchemeTraits {
  QuantScheme scheme;
  std::string_view name;
  ElementType base;       // most matrices
  ElementType more_bits;  // output.weight and some attn_v / ffn_down
  uint32_t file_type;     // llama.cpp's llama_ftype
};

constexpr SchemeTraits kSchemes[] = {
    {QuantScheme::Q8_0, "q8_0", ElementType::Q8_0, ElementType::Q8_0, 7},
    {QuantScheme::Q4_0, "q4_0", ElementType::Q4_0, ElementType::Q4_0, 2},
    {QuantScheme::Q4_K_M, "q4_k_m", ElementType::Q4_K, ElementType::Q6_K, 15},
    {QuantScheme::Q5_K_M, "q5_k_m", ElementType::Q5_K, ElementType::Q6_K, 17},
    {QuantScheme::Q6_K, "q6_k", ElementType::Q6_K, ElementType::Q6_K, 18},
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

}  // namespace

std::string_view quant_scheme_name(QuantScheme scheme) noexcept { return traits(scheme).name; }

uint32_t quant_scheme_file_type(QuantScheme scheme) noexcept { return traits(scheme).file_type; }

std::optional<QuantScheme> quant_scheme_named(std::string_view name) noexcept {
  for (const SchemeTraits& t : kSchemes)
    if (t.name == name) return t.scheme;
  return std::nullopt;
}

std::optional<ElementType> quant_type_for(QuantScheme scheme, std::string_view tensor, uint64_t row_length,
                                          int64_t layers) noexcept {
  const SchemeTraits& t = traits(scheme);
  int64_t layer = layer_of(tensor, "attn_v.weight");
  if (layer < 0) layer = layer_of(tensor, "ffn_down.weight");
  const bool more = tensor == "output.weight" || (layer >= 0 && more_bits_layer(layer, layers));
  const ElementType type = more ? t.more_bits : t.base;
  if (row_length % element_traits(type).block_elements == 0) return type;
  if (row_length % element_traits(ElementType::Q8_0).block_elements == 0) return ElementType::Q8_0;
  return std::nullopt;
}

}  // namespace infini
