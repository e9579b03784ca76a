#version 450
// The next token of a chain decoded ahead on the device, drawn from a whole row of logits:
// sampling with top-k off and top-p 1 (an OpenAI-style request's default), where no ranking
// narrows the candidates. The draw is ops::row_draw's, operation for operation (the host sampler
// draws so too): weights as common/draw_weight.glsl gives them, summed in order within chunks of
// 256 tokens and then over the chunks in order; the uniform times the total walks the chunks,
// then the tokens of the chunk it lands in. The invocations find the best logit and sum the
// chunks (each chunk by one invocation, in order), one invocation walks. Writes the pick (logit
// bits, id) for the host; with FEED also the next step's token id and one more into the position.
// A NaN logit anywhere is passed on as the pick (the first one), so the host refuses it.
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
const uint WG = 64;
const uint CHUNK = 256;        // ops::kRowDrawChunk
const uint MAX_CHUNKS = 2048;  // rows of up to 524,288 logits (the op checks)

layout(push_constant) uniform Params {
  uint count;   // logits in the row
  uint offset;  // the row's first logit in the buffer
  uint step;    // this step's uniform and pick slot
  uint feed;    // 1: write the next step's token id and position
} p;

const uint kNone = 0xffffffffu;

layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
// As pick_token.comp: [1] 1 / T (float bits), [4 + step] uniforms
layout(std430, binding = 1) readonly buffer Draws { uint draws[]; };
layout(std430, binding = 2) writeonly buffer Picks { uvec2 picks[]; };
layout(std430, binding = 3) writeonly buffer Ids { int ids[]; };
layout(std430, binding = 4) buffer Position { uint position[]; };

#include "../common/draw_weight.glsl"

shared float best_of[WG];
shared uint nan_at[WG];
shared float chunk_sum[MAX_CHUNKS];

float weight(uint i, float best, float inv_temperature) {
  return draw_weight(logits[p.offset + i], best, inv_temperature);
}

// The last token of chunk c with a weight: where rounding leaves the walk just past a chunk.
uint last_weighted(uint c, float best, float inv_temperature) {
  uint last = c * CHUNK;
  for (uint i = c * CHUNK; i < min(p.count, c * CHUNK + CHUNK); ++i)
    if (weight(i, best, inv_temperature) > 0.0) last = i;
  return last;
}

void main() {
  const uint lane = gl_LocalInvocationID.x;
  // The best logit (of the flushed values: the max of flushed is the flushed max) and the first NaN.
  float m = uintBitsToFloat(0xff800000u);  // -inf
  uint first_nan = kNone;
  for (uint i = lane; i < p.count; i += WG) {
    const uint bits = floatBitsToUint(logits[p.offset + i]);
    if (is_nan(bits)) first_nan = min(first_nan, i);
    else m = max(m, flushed(uintBitsToFloat(bits)));
  }
  best_of[lane] = m;
  nan_at[lane] = first_nan;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (lane < s) {
      best_of[lane] = max(best_of[lane], best_of[lane + s]);
      nan_at[lane] = min(nan_at[lane], nan_at[lane + s]);
    }
    barrier();
  }
  const float best = best_of[0];
  first_nan = nan_at[0];
  const float inv_temperature = uintBitsToFloat(draws[1]);
  const uint chunks = (p.count + CHUNK - 1) / CHUNK;
  if (first_nan == kNone) {
    for (uint c = lane; c < chunks; c += WG) {
      precise float s = 0.0;
      for (uint i = c * CHUNK; i < min(p.count, c * CHUNK + CHUNK); ++i) s += weight(i, best, inv_temperature);
      chunk_sum[c] = s;
    }
  }
  barrier();
  if (lane != 0) return;
  uint pick = first_nan;
  if (first_nan == kNone) {
    precise float total = 0.0;
    for (uint c = 0; c < chunks; ++c) total += chunk_sum[c];
    precise float x = uintBitsToFloat(draws[4 + p.step]) * total;
    uint landed = kNone;
    for (uint c = 0; c < chunks && landed == kNone; ++c) {
      if (x < chunk_sum[c]) landed = c;
      else x = flushed(x - chunk_sum[c]);
    }
    if (landed == kNone) {
      // Rounding left x past the end: the last token with a weight.
      landed = chunks - 1;
      while (landed > 0 && !(chunk_sum[landed] > 0.0)) --landed;
      pick = last_weighted(landed, best, inv_temperature);
    } else {
      pick = kNone;
      for (uint i = landed * CHUNK; i < min(p.count, landed * CHUNK + CHUNK) && pick == kNone; ++i) {
        const float w = weight(i, best, inv_temperature);
        if (x < w) pick = i;
        else x = flushed(x - w);
      }
      if (pick == kNone) pick = last_weighted(landed, best, inv_temperature);
    }
  }
  picks[p.step] = uvec2(floatBitsToUint(logits[p.offset + pick]), pick);
  if (p.feed != 0u) {
    ids[0] = int(pick);
    position[0] += 1u;
  }
}
