// Host RoPE inverse frequencies for every variant (docs/design.md §2.2). Everything is double
// precision: the kernels upload these values once, and the `infini rope` tool prints them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"

namespace infini::rope {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("rope: " + what); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// theta_i = base^(-2i/d), i = 0..d/2-1.
std::vector<double> default_inv_freq(double base, int d) {
  std::vector<double> inv(static_cast<size_t>(d / 2));
  for (int i = 0; i < d / 2; ++i) inv[static_cast<size_t>(i)] = std::pow(base, -2.0 * i / d);
  return inv;
}

bool scales(RopeType t) { return t != RopeType::None && t != RopeType::Default; }

bool needs_original_context(RopeType t) {
  return t == RopeType::Dynamic || t == RopeType::Yarn || t == RopeType::Llama3;
}

void validate(const RopeConfig& c, int head_dim, int d) {
  if (head_dim <= 0) fail("head dim must be positive, got " + std::to_string(head_dim));
  if (c.rotary_dim < 0) fail("rotary dim must be >= 0, got " + std::to_string(c.rotary_dim));
  if (d > head_dim)
    fail("rotary dim " + std::to_string(d) + " exceeds the head dim " + std::to_string(head_dim));
  if (d % 2 != 0) fail("rotary dim must be even, got " + std::to_string(d));
  if (!std::isfinite(c.base) || c.base <= 1.0) fail("base must be a finite number > 1, got " + num(c.base));
  if (scales(c.type) && (!std::isfinite(c.factor) || c.factor < 1.0))
    fail(std::string(rope_type_name(c.type)) + " needs a finite factor >= 1, got " + num(c.factor));
  // base * x^(d/(d-2)) is undefined for a single pair.
  if ((c.type == RopeType::Ntk || c.type == RopeType::Dynamic) && d <= 2)
    fail(std::string(rope_type_name(c.type)) + " needs a rotary dim > 2, got " + std::to_string(d));
  if (needs_original_context(c.type) && c.original_max_position_embeddings <= 0)
    fail(std::string(rope_type_name(c.type)) + " needs the original context length (original_max_position_embeddings > 0)");
  if (c.type == RopeType::Yarn) {
    if (!(c.beta_slow > 0.0) || !(c.beta_fast >= c.beta_slow) || !std::isfinite(c.beta_fast))
      fail("yarn needs 0 < beta_slow <= beta_fast, got beta_fast " + num(c.beta_fast) + ", beta_slow " + num(c.beta_slow));
    if (c.attention_factor && !(*c.attention_factor > 0.0 && std::isfinite(*c.attention_factor)))
      fail("yarn attention factor must be > 0, got " + num(*c.attention_factor));
  }
  if (c.type == RopeType::Llama3 && !(c.low_freq_factor > 0.0 && c.high_freq_factor > c.low_freq_factor &&
                                      std::isfinite(c.high_freq_factor)))
    fail("llama3 needs 0 < low_freq_factor < high_freq_factor, got " + num(c.low_freq_factor) + " and " +
         num(c.high_freq_factor));
}

// YaRN: pairs that rotate more than beta_fast times within the original context keep their
// frequency (extrapolation), pairs that rotate fewer than beta_slow times are divided by the
// factor (interpolation), and a linear ramp over the pair index blends the two in between.
std::vector<double> yarn_inv_freq(const RopeConfig& c, int d) {
  const double L0 = static_cast<double>(c.original_max_position_embeddings);
  // The (fractional) pair index whose wavelength fits `rotations` times into L0.
  const auto correction_dim = [&](double rotations) {
    return d * std::log(L0 / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(c.base));
  };
  const double low = std::max(std::floor(correction_dim(c.beta_fast)), 0.0);
  double high = std::min(std::ceil(correction_dim(c.beta_slow)), static_cast<double>(d - 1));
  if (low == high) high += 0.001;  // a one-point ramp would divide by zero

  std::vector<double> inv = default_inv_freq(c.base, d);
  for (size_t i = 0; i < inv.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double keep = 1.0 - ramp;  // weight of the unscaled (extrapolated) frequency
    inv[i] = inv[i] / c.factor * ramp + inv[i] * keep;
  }
  return inv;
}

// Llama 3.1: wavelengths shorter than L0/high_freq_factor are kept, longer than
// L0/low_freq_factor are divided by the factor, and the band between is interpolated smoothly
// in L0/wavelength.
std::vector<double> llama3_inv_freq(const RopeConfig& c, int d) {
  const double L0 = static_cast<double>(c.original_max_position_embeddings);
  const double low_freq_wavelen = L0 / c.low_freq_factor;
  const double high_freq_wavelen = L0 / c.high_freq_factor;
  std::vector<double> inv = default_inv_freq(c.base, d);
  for (double& f : inv) {
    const double wavelen = 2.0 * std::numbers::pi / f;
    if (wavelen < high_freq_wavelen) continue;
    if (wavelen > low_freq_wavelen) {
      f /= c.factor;
      continue;
    }
    const double smooth = (L0 / wavelen - c.low_freq_factor) / (c.high_freq_factor - c.low_freq_factor);
    f = (1.0 - smooth) * f / c.factor + smooth * f;
  }
  return inv;
}

}  // namespace

namespace {
std::string format_double(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

RopeFrequencies rope_frequencies(const RopeConfig& config, int head_dim, int64_t current_length) {
  if (config.type == RopeType::None) {
    if (head_dim <= 0) fail("head dim must be positive, got " + std::to_string(head_dim));
    return {};
  }
  const int d = config.rotary_dim == 0 ? head_dim : config.rotary_dim;
  validate(config, head_dim, d);

  RopeFrequencies out;
  out.rotary_dim = d;
  const double exponent = static_cast<double>(d) / (d - 2);
  switch (config.type) {
    case RopeType::None:
      break;
    case RopeType::Default:
      out.inv_freq = default_inv_freq(config.base, d);
      break;
    case RopeType::Linear:
      out.inv_freq = default_inv_freq(config.base, d);
      for (double& f : out.inv_freq) f /= config.factor;
      break;
    case RopeType::Ntk:
      out.inv_freq = default_inv_freq(config.base * std::pow(config.factor, exponent), d);
      break;
    case RopeType::Dynamic: {
      if (current_length < 0) fail("dynamic needs a current length >= 0, got " + std::to_string(current_length));
      const double L0 = static_cast<double>(config.original_max_position_embeddings);
      double base = config.base;
      if (current_length > config.original_max_position_embeddings) {
        const double L = static_cast<double>(current_length);
        base *= std::pow(config.factor * L / L0 - (config.factor - 1.0), exponent);
      }
      out.inv_freq = default_inv_freq(base, d);
      break;
    }
    case RopeType::Yarn:
      out.inv_freq = yarn_inv_freq(config, d);
      out.attention_factor =
          config.attention_factor.value_or(config.factor > 1.0 ? 0.1 * std::log(config.factor) + 1.0 : 1.0);
      break;
    case RopeType::Llama3:
      out.inv_freq = llama3_inv_freq(config, d);
      break;
  }
  if (!config.frequency_divisors.empty()) {
    if (config.frequency_divisors.size() != out.inv_freq.size())
      fail(std::to_string(config.frequency_divisors.size()) + " frequency divisors for " +
           std::to_string(out.inv_freq.size()) + " frequencies (rotary dim " + std::to_string(d) + " / 2)");
    for (size_t i = 0; i < out.inv_freq.size(); ++i) {
      const double divisor = config.frequency_divisors[i];
      if (!std::isfinite(divisor) || divisor <= 0)
        fail("frequency divisor " + std::to_string(i) + " is " + format_double(divisor) + ", not finite and > 0");
      out.inv_freq[i] /= divisor;
    }
  }
  return out;
}

const char* rope_type_name(RopeType type) noexcept {
  switch (type) {
    case RopeType::None: return "none";
    case RopeType::Default: return "default";
    case RopeType::Linear: return "linear";
    case RopeType::Ntk: return "ntk";
    case RopeType::Dynamic: return "dynamic";
    case RopeType::Yarn: return "yarn";
    case RopeType::Llama3: return "llama3";
  }
  return "unknown";
}

const char* rope_layout_name(RopeLayout layout) noexcept {
  switch (layout) {
    case RopeLayout::Neox: return "neox";
    case RopeLayout::Interleaved: return "interleaved";
  }
  return "unknown";
}

}  // namespace infini::rope
