// RoPE of one value, shared by rope.comp and the decode kernel that rotates as it reads.
//
// A kernel declares the host-computed table `cos_sin[]` ([position][rotary_dim / 2], vec2 of
// cos, sin) and an input X read with load_X(i), then DECLARE_ROPE(X) gives
//   rope_X(head, d, position, rotary_dim, interleaved)
// the value of dimension d of the head vector starting at element `head`, rotated by the angles
// of `position`. Pairs are (i, i + rotary_dim/2) for neox (interleaved 0), (2i, 2i + 1) for
// interleaved; dims >= rotary_dim pass through.
#ifndef INFINI_ROPE_GLSL
#define INFINI_ROPE_GLSL

#define DECLARE_ROPE(NAME)                                                                  \
  float rope_##NAME(uint head, uint d, uint position, uint rotary_dim, uint interleaved) {  \
    const float x = load_##NAME(head + d);                                                  \
    if (d >= rotary_dim) return x;                                                          \
    const uint half_dim = rotary_dim / 2;                                                   \
    uint pair, partner;                                                                     \
    float sign; /* out = x * cos + sign * x_partner * sin */                                \
    if (interleaved != 0u) {                                                                \
      pair = d / 2;                                                                         \
      partner = d ^ 1u;                                                                     \
      sign = (d & 1u) == 0u ? -1.0 : 1.0;                                                   \
    } else {                                                                                \
      pair = d % half_dim;                                                                  \
      partner = d < half_dim ? d + half_dim : d - half_dim;                                 \
      sign = d < half_dim ? -1.0 : 1.0;                                                     \
    }                                                                                       \
    const vec2 cs = cos_sin[position * half_dim + pair];                                    \
    return x * cs.x + sign * load_##NAME(head + partner) * cs.y;                            \
  }

#endif
