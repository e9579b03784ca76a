#version 450
// Token embedding: out[t][:] = table[ids[t]][:] * scale as f32. Ids were range-checked on the host. The
// table may be one chunk of rows [first_row, first_row + rows): tokens outside it are left alone.
//! variant f32
//! variant f16 -DTABLE_F16
//! variant q8_0 -DTABLE_Q8_0
//! variant q4_0 -DTABLE_Q4_0
//! variant q4_1 -DTABLE_Q4_1
//! variant q5_0 -DTABLE_Q5_0
//! variant q5_1 -DTABLE_Q5_1
//! variant iq4_nl -DTABLE_IQ4_NL
//! variant iq4_xs -DTABLE_IQ4_XS
//! variant bf16 -DTABLE_BF16
//! variant q2_k -DTABLE_Q2_K
//! variant q3_k -DTABLE_Q3_K
//! variant q4_k -DTABLE_Q4_K
//! variant q5_k -DTABLE_Q5_K
//! variant q6_k -DTABLE_Q6_K
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "../common/storage.glsl"

layout(local_size_x = 128) in;  // kFlatWorkgroup (ops/dispatch_grid.hpp): every device has 128
layout(push_constant) uniform Params { uint tokens, dim, first_row, rows; float scale; } p;

layout(std430, binding = 0) readonly buffer Ids { uint ids[]; };
#if defined(TABLE_Q8_0)
DECLARE_Q8_0_INPUT(1, Table)
#elif defined(TABLE_Q4_0)
DECLARE_Q4_0_INPUT(1, Table)
#elif defined(TABLE_Q4_1)
DECLARE_Q4_1_INPUT(1, Table)
#elif defined(TABLE_Q5_0)
DECLARE_Q5_0_INPUT(1, Table)
#elif defined(TABLE_Q5_1)
DECLARE_Q5_1_INPUT(1, Table)
#elif defined(TABLE_IQ4_NL)
DECLARE_IQ4_NL_INPUT(1, Table)
#elif defined(TABLE_IQ4_XS)
DECLARE_IQ4_XS_INPUT(1, Table)
#elif defined(TABLE_BF16)
DECLARE_BF16_INPUT(1, Table)
#elif defined(TABLE_Q2_K)
DECLARE_Q2_K_INPUT(1, Table)
#elif defined(TABLE_Q3_K)
DECLARE_Q3_K_INPUT(1, Table)
#elif defined(TABLE_Q4_K)
DECLARE_Q4_K_INPUT(1, Table)
#elif defined(TABLE_Q5_K)
DECLARE_Q5_K_INPUT(1, Table)
#elif defined(TABLE_Q6_K)
DECLARE_Q6_K_INPUT(1, Table)
#elif defined(TABLE_F16)
DECLARE_F16_INPUT(1, Table)
#else
DECLARE_F32_INPUT(1, Table)
#endif
layout(std430, binding = 2) writeonly buffer Out { float out_data[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.tokens * p.dim) return;
  const uint t = i / p.dim, c = i % p.dim;
  const uint row = ids[t] - p.first_row;  // wraps around below first_row
  if (row < p.rows) out_data[i] = load_Table(row * p.dim + c) * p.scale;  // scale 1 but for gemma's sqrt(dim)
}
