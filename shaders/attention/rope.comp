#version 450
// RoPE: out[t][h][:] = x[t][h][:] rotated by the angles of position min(open + t, max_position),
// written as f32 at token t of the output, or at token open + t (so K is appended to the open
// segment's cache). max_position caps the position for the queries that score a sliding context's
// sinks: past the context they sit at its last position (ops/infini_attention_layer.hpp).
// `open`, the open segment's length when the piece runs, comes from a buffer, not a push
// constant: one recording serves every position.
// cos and sin come from a host-computed table (double precision, attention factor folded in):
// GPU sin/cos are only specified to ~2^-11 and pos * theta in fp32 loses 1e-5 rad long before
// the context lengths that matter. The rotation itself is common/rope.glsl's.
//! variant f32
//! variant f16 -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/rope.glsl"
#include "../common/storage.glsl"

layout(local_size_x = 128) in;  // kFlatWorkgroup (ops/dispatch_grid.hpp): every device has 128

layout(push_constant) uniform Params {
  uint tokens, heads, head_dim, rotary_dim;
  uint interleaved;   // 0 = neox, 1 = interleaved
  uint x_token0;      // first token read from x
  uint out_at_open;   // 1: write token t at out token open + t; 0: at token t
  uint max_position;  // the largest position rotated by (0xffffffff: none)
} p;

#ifdef X_F16
DECLARE_F16_INPUT(0, X)
#else
DECLARE_F32_INPUT(0, X)
#endif
layout(std430, binding = 1) readonly buffer Table { vec2 cos_sin[]; };  // [position][rotary_dim / 2]
layout(std430, binding = 2) writeonly buffer Out { float out_data[]; };
layout(std430, binding = 3) readonly buffer Position { uint open; };
DECLARE_ROPE(X)

void main() {
  const uint row_elems = p.heads * p.head_dim;
  const uint e = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (e >= p.tokens * row_elems) return;
  const uint t = e / row_elems;
  const uint within = e % row_elems;
  const uint d = within % p.head_dim;
  const uint in_base = (p.x_token0 + t) * row_elems + within - d;  // start of this head's vector
  const float y = rope_X(in_base, d, min(open + t, p.max_position), p.rotary_dim, p.interleaved);
  out_data[(p.out_at_open * open + t) * row_elems + within] = y;
}
