// The sampler's draw weights on the device, operation for operation those of ops/ranked_draw.cpp
// (its constants bit for bit, every multiply precise so none is fused into an add, subnormals
// flushed by hand), so that a kernel drawing a token picks the one the host would.
#ifndef INFINI_DRAW_WEIGHT_GLSL
#define INFINI_DRAW_WEIGHT_GLSL

// Macros: glslang folds no uintBitsToFloat in a const.
#define LOG2E uintBitsToFloat(0x3fb8aa3bu)
#define LN2_HIGH uintBitsToFloat(0x3f318000u)
#define LN2_LOW uintBitsToFloat(0xb95e8083u)
#define SMALLEST_NORMAL uintBitsToFloat(0x00800000u)
const uint kInvFactorial[8] = uint[8](0x3f800000u, 0x3f800000u, 0x3f000000u, 0x3e2aaaabu, 0x3d2aaaabu, 0x3c088889u,
                                      0x3ab60b61u, 0x39500d01u);

float flushed(float v) { return abs(v) < SMALLEST_NORMAL ? 0.0 : v; }

float portable_exp(float x) {
  if (!(x >= -87.0)) return 0.0;
  if (x > 88.0) return uintBitsToFloat(0x7f800000u);
  precise float n = floor(x * LOG2E + 0.5);
  precise float r = (x - n * LN2_HIGH) - n * LN2_LOW;
  precise float poly = uintBitsToFloat(kInvFactorial[7]);
  [[unroll]] for (int j = 6; j >= 0; --j) poly = poly * r + uintBitsToFloat(kInvFactorial[j]);
  precise float e = poly * uintBitsToFloat(uint(int(n) + 127) << 23);
  return e;
}

// exp((logit - best) / T) of a logit as the draw reads it (flushed) against the best so read.
float draw_weight(float logit, float best, float inv_temperature) {
  const float l = flushed(logit);
  if (l == best) return 1.0;
  precise float d = flushed(l - best);
  precise float x = flushed(d * inv_temperature);
  return portable_exp(x);
}

bool is_nan(uint word) { return (word & 0x7f800000u) == 0x7f800000u && (word & 0x007fffffu) != 0u; }

#endif
