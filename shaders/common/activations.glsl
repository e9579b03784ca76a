// Element-wise functions of Infini-attention (docs/design.md §1.3), in one place so every kernel
// uses the same definitions.
#ifndef INFINI_ACTIVATIONS_GLSL
#define INFINI_ACTIVATIONS_GLSL

// sigma(x) = ELU(x) + 1: the positive feature map of the compressive memory.
float elu_plus_one(float x) { return x > 0.0 ? x + 1.0 : exp(x); }

// 1 / (1 + exp(-x)); exp overflow to +inf gives exactly 0, as it should.
float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// The memory's conventions (docs/design.md §1.8), as bits of a kernel's memory_flags push
// constant, next to its memory_eps.
const uint kGateLocal = 1u;   // g = sigmoid(beta) weights A_dot, not A_mem
const uint kHeadModulo = 2u;  // query head h reads KV head h % Hkv's memory, not h / (Hq / Hkv)
const uint kEpsAdd = 4u;      // reads divide by den + eps, not max(den, eps)

float memory_denominator(float den, float eps, uint flags) {
  return (flags & kEpsAdd) != 0u ? den + eps : max(den, eps);
}
uint memory_kv_head(uint h, uint heads, uint heads_kv, uint flags) {
  return (flags & kHeadModulo) != 0u ? h % heads_kv : h / (heads / heads_kv);
}
// The weight of A_mem for a gate logit.
float memory_weight(float beta, uint flags) {
  const float g = sigmoid(beta);
  return (flags & kGateLocal) != 0u ? 1.0 - g : g;
}

// Running softmax maximum starts here, not at -inf, so exp(m_old - m_new) is never NaN.
const float kSoftmaxInit = -1.70141173e38;  // -FLT_MAX / 2

#endif
