#version 450
// Peak fp32 throughput probe: every invocation runs eight independent vec4 FMA chains, so the
// device's FMA pipes stay full without any memory traffic. Each loop iteration is
// 8 chains * 4 lanes = 32 FMAs = 64 FLOP. The result is written so nothing is optimised away.
layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params { uint iterations; } p;
layout(std430, binding = 0) writeonly buffer Out { float result[]; };

void main() {
  const float seed = float(gl_GlobalInvocationID.x) * 1e-7;
  vec4 c0 = vec4(seed), c1 = c0 + 0.1, c2 = c0 + 0.2, c3 = c0 + 0.3;
  vec4 c4 = c0 + 0.4, c5 = c0 + 0.5, c6 = c0 + 0.6, c7 = c0 + 0.7;
  const vec4 m = vec4(0.999999);
  const vec4 a = vec4(1e-6);
  for (uint i = 0; i < p.iterations; ++i) {
    c0 = fma(c0, m, a); c1 = fma(c1, m, a); c2 = fma(c2, m, a); c3 = fma(c3, m, a);
    c4 = fma(c4, m, a); c5 = fma(c5, m, a); c6 = fma(c6, m, a); c7 = fma(c7, m, a);
  }
  const vec4 s = (c0 + c1) + (c2 + c3) + (c4 + c5) + (c6 + c7);
  result[gl_GlobalInvocationID.x] = s.x + s.y + s.z + s.w;
}
