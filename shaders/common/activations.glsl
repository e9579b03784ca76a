// Element-wise functions of Infini-attention (docs/design.md §1.3), in one place so every kernel
// uses the same definitions.
#ifndef INFINI_ACTIVATIONS_GLSL
#define INFINI_ACTIVATIONS_GLSL

// sigma(x) = ELU(x) + 1: the positive feature map of the compressive memory.
float elu_plus_one(float x) { return x > 0.0 ? x + 1.0 : exp(x); }

// 1 / (1 + exp(-x)); exp overflow to +inf gives exactly 0, as it should.
float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// Memory reads divide by max(den, eps).
const float kMemoryEps = 1e-10;

// Running softmax maximum starts here, not at -inf, so exp(m_old - m_new) is never NaN.
const float kSoftmaxInit = -1.70141173e38;  // -FLT_MAX / 2

#endif
