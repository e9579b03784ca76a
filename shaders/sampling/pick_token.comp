#version 450
// The next token of a chain decoded ahead on the device (LayerStage::submit_chain): from the
// step's ranking (top_k.comp's k best pairs, best first), the best one (greedy, or k = 1) or the
// one a uniform number draws (ops::ranked_draw, the host sampler's draw: the same f32 operations
// in the same order, marked precise so no multiply-add is fused, subnormals flushed by hand and
// the same constants bit for bit, so the device and the host pick the same token). Writes the
// pick (logit bits, id) for the host; with FEED also the next step's token id and its position
// (the open segment's length, one more). A NaN logit ranks first and is passed on as the pick,
// so the host sees it and refuses it. One invocation: at most 64 candidates.
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 1) in;

layout(push_constant) uniform Params {
  uint k;     // pairs in the ranking
  uint step;  // this step's uniform and pick slot
  uint feed;  // 1: write the next step's token id and position
} p;

const uint kNone = 0xffffffffu;  // an empty ranking slot

layout(std430, binding = 0) readonly buffer Ranked { uvec2 ranked[]; };
// [0] 1 for greedy, [1] 1 / T, [2] top_p (float bits; ops::DrawSettings), [3] unused, [4 + step] uniforms
layout(std430, binding = 1) readonly buffer Draws { uint draws[]; };
layout(std430, binding = 2) writeonly buffer Picks { uvec2 picks[]; };
layout(std430, binding = 3) writeonly buffer Ids { int ids[]; };
layout(std430, binding = 4) buffer Position { uint position[]; };

#include "../common/draw_weight.glsl"

float logit(uint i) { return uintBitsToFloat(ranked[i].x); }

float weight(uint i, float best, float inv_temperature) { return draw_weight(logit(i), best, inv_temperature); }

void main() {
  uint k = 0;
  while (k < p.k && ranked[k].y != kNone) ++k;
  uint pick = 0;
  if (draws[0] == 0u && k > 1u && !is_nan(ranked[0].x)) {
    const float inv_temperature = uintBitsToFloat(draws[1]), top_p = uintBitsToFloat(draws[2]);
    const float u = uintBitsToFloat(draws[4 + p.step]);
    const float best = flushed(logit(0));
    precise float sum = 0.0;
    for (uint i = 0; i < k; ++i) sum += weight(i, best, inv_temperature);
    precise float limit = top_p * sum;
    uint keep = k;
    precise float held = 0.0;
    for (uint i = 0; i < k; ++i) {
      held += weight(i, best, inv_temperature);
      if (held >= limit) {
        keep = i + 1;
        break;
      }
    }
    precise float total = 0.0;
    for (uint i = 0; i < keep; ++i) total += weight(i, best, inv_temperature);
    precise float x = u * total;
    pick = keep - 1;
    for (uint i = 0; i < keep; ++i) {
      const float w = weight(i, best, inv_temperature);
      if (x < w) {
        pick = i;
        break;
      }
      x = flushed(x - w);
    }
  }
  picks[p.step] = ranked[pick];
  if (p.feed != 0u) {
    ids[0] = int(ranked[pick].y);
    position[0] += 1u;
  }
}
