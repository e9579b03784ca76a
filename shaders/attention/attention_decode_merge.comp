#version 450
// Combines the partials of attention_decode.comp (common/decode_merge.glsl): one workgroup per
// (head, row), every lane taking value columns. GATE: the compressive memory's read and gate in
// the same pass, which decode on a GPU would otherwise pay a launch and a barrier for.
//! variant plain
//! variant gate_f32 -DGATE
//! variant gate_f16 -DGATE -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint heads_q, value_dim, splits;
  uint heads_kv, head_dim;  // GATE
  uint x_token0;            // GATE: the first query row's token in X
  uint memory_flags;        // GATE: common/activations.glsl's kGateLocal, kHeadModulo, kEpsAdd
  float memory_eps;         // GATE
} p;

layout(std430, binding = 0) readonly buffer Parts { float parts[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_data[]; };
#ifdef GATE
#ifdef X_F16
DECLARE_F16_INPUT(2, X)
#else
DECLARE_F32_INPUT(2, X)
#endif
layout(std430, binding = 3) readonly buffer MBuffer { float mem[]; };  // [Hkv][D][Dv]
layout(std430, binding = 4) readonly buffer ZBuffer { float z[]; };    // [Hkv][D]
layout(std430, binding = 5) readonly buffer Beta { float beta[]; };    // [Hq][Dv]
const uint kMaxHeadDim = 256;
shared float sigma_q[kMaxHeadDim];
float merge_query(uint i) { return load_X(i); }
#endif
#include "../common/decode_merge.glsl"

void main() {
  const MergeShape shape = {p.heads_q, p.heads_kv, p.head_dim, p.value_dim, p.splits, p.x_token0, p.memory_flags, p.memory_eps};
  merge_partials(gl_WorkGroupID.y, gl_WorkGroupID.z, gl_LocalInvocationID.x, gl_WorkGroupSize.x, shape);
}
