#version 450
// RoPE: out[t][h][:] = x[t][h][:] rotated by the angles of position open + t, written as f32 at
// token t of the output, or at token open + t (so K is appended to the open segment's cache).
// `open`, the open segment's length when the piece runs, comes from a buffer, not a push
// constant: one recording serves every position.
// cos and sin come from a host-computed table (double precision, attention factor folded in):
// GPU sin/cos are only specified to ~2^-11 and pos * theta in fp32 loses 1e-5 rad long before
// the context lengths that matter. Pairs are (i, i + d/2) for neox, (2i, 2i + 1) for interleaved;
// dims >= rotary_dim pass through.
//! variant f32
//! variant f16 -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "common/storage.glsl"

layout(local_size_x = 128) in;  // kFlatWorkgroup (ops/dispatch_grid.hpp): every device has 128

layout(push_constant) uniform Params {
  uint tokens, heads, head_dim, rotary_dim;
  uint interleaved;   // 0 = neox, 1 = interleaved
  uint x_token0;      // first token read from x
  uint out_at_open;   // 1: write token t at out token open + t; 0: at token t
} p;

#ifdef X_F16
DECLARE_F16_INPUT(0, X)
#else
DECLARE_F32_INPUT(0, X)
#endif
layout(std430, binding = 1) readonly buffer Table { vec2 cos_sin[]; };  // [position][rotary_dim / 2]
layout(std430, binding = 2) writeonly buffer Out { float out_data[]; };
layout(std430, binding = 3) readonly buffer Position { uint open; };

void main() {
  const uint row_elems = p.heads * p.head_dim;
  const uint e = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (e >= p.tokens * row_elems) return;
  const uint t = e / row_elems;
  const uint within = e % row_elems;
  const uint d = within % p.head_dim;
  const uint in_base = (p.x_token0 + t) * row_elems + within - d;  // start of this head's vector
  const float x = load_X(in_base + d);
  float y = x;
  if (d < p.rotary_dim) {
    const uint half_dim = p.rotary_dim / 2;
    uint pair, partner;
    float sign;  // out = x * cos + sign * x_partner * sin
    if (p.interleaved != 0u) {
      pair = d / 2;
      partner = d ^ 1u;
      sign = (d & 1u) == 0u ? -1.0 : 1.0;
    } else {
      pair = d % half_dim;
      partner = d < half_dim ? d + half_dim : d - half_dim;
      sign = d < half_dim ? -1.0 : 1.0;
    }
    const vec2 cs = cos_sin[(open + t) * half_dim + pair];
    y = x * cs.x + sign * load_X(in_base + partner) * cs.y;
  }
  out_data[(p.out_at_open * open + t) * row_elems + within] = y;
}
