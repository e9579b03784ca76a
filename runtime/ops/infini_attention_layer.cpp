#include "ops/infini_attention_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "infini/error.hpp"
#include "ops/attention_kernels.hpp"
#include "ops/dispatch_grid.hpp"
#include "ops/rope_table.hpp"
#include "ops/matrix_units.hpp"
#include "ops/memory_kernels.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"
#include "vk/transfer.hpp"
#include "util/scalar_bytes.hpp"

namespace infini::ops {
namespace {

constexpr uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

void check_shape(const AttentionShape& s, const InfiniOptions& o, size_t beta_size) {
  auto fail = [](const std::string& what) { throw Error("infini attention: " + what); };
  if (s.heads_q < 1 || s.heads_kv < 1) fail("head counts must be >= 1");
  if (s.heads_q % s.heads_kv != 0)
    fail("Hq = " + std::to_string(s.heads_q) + " is not a multiple of Hkv = " + std::to_string(s.heads_kv));
  if (s.head_dim < 1 || s.head_dim > int(kMaxHeadDim) || s.value_dim < 1 || s.value_dim > int(kMaxHeadDim))
    fail("head dims must be in 1.." + std::to_string(kMaxHeadDim) + ", got D = " + std::to_string(s.head_dim) +
         ", Dv = " + std::to_string(s.value_dim));
  if (o.segment < 1 || o.segment > kMaxSegment)
    fail("segment length must be in 1.." + std::to_string(kMaxSegment) + ", got " + std::to_string(o.segment));
  if (o.sliding && o.memory) fail("a sliding context needs the memory off");
  if (o.sliding && (o.sinks < 0 || o.sinks >= o.segment))
    fail("a sliding context of " + std::to_string(o.segment) + " tokens keeps 0.." + std::to_string(o.segment - 1) +
         " sinks, got " + std::to_string(o.sinks));
  if (o.sliding && o.segment > kMaxSegment / 2) fail("a sliding context must be at most " + std::to_string(kMaxSegment / 2));
  const int64_t gates = gate_values(s, o.gate_shape);
  if (beta_size != size_t(gates))
    fail("beta has " + std::to_string(beta_size) + " values, expected " + std::to_string(gates) +
         (o.gate_shape == GateShape::PerHead        ? " (Hq)"
          : o.gate_shape == GateShape::PerHeadValue ? " (Hq x Dv)"
                                                    : " (one for the layer)"));
  if (!(o.memory_eps > 0.0f) || !std::isfinite(o.memory_eps))
    fail("memory eps must be a positive finite number, got " + std::to_string(o.memory_eps));
  if (!(o.memory_z_init >= 0.0f) || !std::isfinite(o.memory_z_init))
    fail("memory z init must be a finite number >= 0, got " + std::to_string(o.memory_z_init));
}

// The gate logits as every kernel reads them: [Hq][Dv], whatever the options' gate shape.
std::vector<float> gate_per_column(std::span<const float> beta, const AttentionShape& s, GateShape shape) {
  const size_t hq = size_t(s.heads_q), dv = size_t(s.value_dim);
  std::vector<float> out(hq * dv);
  for (size_t h = 0; h < hq; ++h)
    for (size_t e = 0; e < dv; ++e)
      out[h * dv + e] = shape == GateShape::PerHeadValue ? beta[h * dv + e] : shape == GateShape::PerLayer ? beta[0] : beta[h];
  return out;
}

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

uint64_t elements(uint64_t tokens, int heads, int dim) { return tokens * uint64_t(heads) * uint64_t(dim); }

// Storage buffers must not be empty; a kernel never reads an unused one.
uint64_t at_least_a_word(uint64_t bytes) { return bytes < 4 ? 4 : (bytes + 3) / 4 * 4; }

vk::Buffer make_rope_table(vk::Device& device, const rope::RopeFrequencies& freqs, int64_t positions) {
  const auto table = rope_cos_sin_table(freqs, positions);
  vk::Buffer buffer(device, at_least_a_word(table.size() * 4), vk::MemoryUse::DeviceLocal, "rope table");
  if (!table.empty()) vk::upload(buffer, std::span<const float>(table));
  return buffer;
}

}  // namespace

const char* attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::Auto: return "auto";
    case AttentionKernel::Tiled: return "tiled";
    case AttentionKernel::Rows: return "rows";
    case AttentionKernel::Matrix: return "coopmat";
    case AttentionKernel::MatrixEmulated: return "coopmat-emulated";
  }
  return "?";
}

std::optional<AttentionKernel> attention_kernel_named(std::string_view name) {
  for (AttentionKernel k : {AttentionKernel::Auto, AttentionKernel::Tiled, AttentionKernel::Rows, AttentionKernel::Matrix,
                            AttentionKernel::MatrixEmulated})
    if (name == attention_kernel_name(k)) return k;
  return std::nullopt;
}

InfiniAttentionLayer::InfiniAttentionLayer(vk::Device& device, const AttentionShape& shape, const InfiniOptions& options,
                                           ElementType input, std::span<const float> beta, AttentionKernel kernel,
                                           uint32_t max_tokens)
    : device_(device),
      shape_((check_shape(shape, options, beta.size()), shape)),
      options_(options),
      input_(input),
      segment_(static_cast<uint32_t>(options.segment)),
      rows_(cache_rows(options)),
      max_tokens_(max_tokens == 0 ? rows_ : std::min(max_tokens, rows_)),
      // Dynamic NTK scales for the segment length: positions never exceed it, and one fixed
      // table keeps prefill and token-by-token decode identical.
      freqs_(rope::rope_frequencies(options.rope, shape.head_dim, options.segment)),
      rotary_dim_(static_cast<uint32_t>(freqs_.rotary_dim)),
      rope_table_(make_rope_table(device, freqs_, rows_)),
      beta_(device, elements(shape.heads_q, shape.value_dim, 1) * 4, vk::MemoryUse::DeviceLocal, "gate beta"),
      m_(device, elements(shape.heads_kv, shape.head_dim, shape.value_dim) * 4, vk::MemoryUse::DeviceLocal, "memory M"),
      z_(device, elements(shape.heads_kv, shape.head_dim, 1) * 4, vk::MemoryUse::DeviceLocal, "memory z"),
      cache_k_(device, at_least_a_word(elements(rows_, shape.heads_kv, shape.head_dim) * scalar_bytes(input)),
               vk::MemoryUse::DeviceLocal, "segment cache K"),
      cache_v_(device, at_least_a_word(elements(rows_, shape.heads_kv, shape.value_dim) * scalar_bytes(input)),
               vk::MemoryUse::DeviceLocal, "segment cache V"),
      cache_kr_(device, elements(rows_, shape.heads_kv, shape.head_dim) * 4, vk::MemoryUse::DeviceLocal,
                "segment cache rotated K"),
      qr_(device, elements(max_tokens_, shape.heads_q, shape.head_dim) * 4, vk::MemoryUse::DeviceLocal, "rotated Q"),
      w_(device,
         options.memory && options.update == UpdateRule::Delta ? elements(segment_, shape.heads_kv, shape.value_dim) * 4
                                                               : 4,
         vk::MemoryUse::DeviceLocal, "delta residual"),
      qs_(device, options.sliding ? elements(max_tokens_, shape.heads_q, shape.head_dim) * 4 : 4, vk::MemoryUse::DeviceLocal,
          "rotated Q for the sinks"),
      position_(device, 4, vk::MemoryUse::DeviceLocal, "open tokens"),
      sinks_position_(device, 4, vk::MemoryUse::DeviceLocal, "sinks") {
  if (options.memory_positions == MemoryPositions::Rotated && input == ElementType::F16)
    throw Error("infini attention: a memory of rotated q and k (memory_positions rotated) needs f32 inputs");
  const std::vector<float> beta_columns = gate_per_column(beta, shape, options.gate_shape);
  vk::upload(beta_, std::span<const float>(beta_columns));
  const uint32_t sinks = options.sliding ? uint32_t(options.sinks) : 0u;
  vk::upload(sinks_position_, std::span<const uint32_t>(&sinks, 1));
  // The window rule's specialization constants (common/sliding_window.glsl): 0, 0 for segments.
  const uint32_t window = options.sliding ? segment_ - sinks : 0u;

  const bool f16 = input == ElementType::F16;
  auto& pipelines = device.pipelines();
  const auto source = [f16](AttentionStep step) { return attention_source(step, f16); };
  rope_ = &pipelines.get(source(AttentionStep::Rope));
  append_ = &pipelines.get(source(AttentionStep::CacheAppend));
  const vk::Capabilities& caps = device.caps();
  kernel = choose_attention_kernel(kernel, shape, caps);
  kernel_ = kernel;
  uint32_t memory_lanes = 0;  // the Rows family's workgroup size
  if (kernel == AttentionKernel::Rows) {
    // One SIMD register's worth of invocations: more would only run one after another.
    const uint32_t sg = device.caps().subgroup_size;
    const uint32_t lanes = sg >= 4 && sg <= 16 ? sg : 8;
    const uint32_t rows = rows_per_invocation(shape);
    const uint32_t spec[] = {lanes, rows, uint32_t(shape.head_dim) / 4, uint32_t(shape.value_dim) / 4, sinks, window};
    attention_rows_ = lanes * rows;
    memory_lanes = lanes;
    const uint32_t split_spec[] = {lanes, uint32_t(shape.head_dim) / 4, uint32_t(shape.value_dim) / 4, sinks, window};
    attention_split_ = &pipelines.get(source(AttentionStep::Split), split_spec);
    attention_ = &pipelines.get(source(AttentionStep::Rows), spec);
  } else {
    const uint32_t cg = kAttnWorkgroup / kAttnRows;
    const AttnTiles tiles = attention_tiles(device.caps());
    const uint32_t attn_spec[] = {kAttnWorkgroup, kAttnRows, tiles.keys, kAttnDimChunk, tiles.value_chunk,
                                  ceil_div(uint32_t(shape.value_dim), cg), sinks, window};
    attention_rows_ = kAttnRows;
    const uint32_t blocks = ceil_div(rows_, kDecodeKeys);
    const uint32_t workgroups = device.caps().is_software() ? kDecodeWorkgroupsCpu : kDecodeWorkgroups;
    decode_splits_ = std::min(blocks, ceil_div(workgroups, uint32_t(shape.heads_q)));
    decode_keys_per_split_ = ceil_div(blocks, decode_splits_) * kDecodeKeys;
    decode_parts_ = std::make_unique<vk::Buffer>(
        device, uint64_t(kSplitMaxRows) * uint64_t(shape.heads_q) * decode_splits_ * (2 + uint64_t(shape.value_dim)) * 4,
        vk::MemoryUse::DeviceLocal, "decode partials");
    const uint32_t decode_spec[] = {sinks, window};
    attention_decode_ = &pipelines.get(source(AttentionStep::Decode), decode_spec);
    // The variant that also does the piece's RoPE and cache append copies f16 rows as words.
    const bool whole_words = !f16 || (shape.heads_kv * shape.head_dim % 2 == 0 && shape.heads_kv * shape.value_dim % 2 == 0);
    // The merging ones use device-scope barriers, invalid where the memory model is on without
    // device scope (vk/device.cpp turns it on only for the matrix-unit kernels), and bind up to 14
    // storage buffers, more than some small GPUs allow in one stage.
    const bool device_scope = !caps.vulkan_memory_model || caps.vulkan_memory_model_device_scope;
    const vk::KernelSource& merged_gate = source(AttentionStep::DecodeFreshMergeGate);
    // A sliding context's sinks need their own query rows (qs_), which the fused variants do not make.
    if (!options.sliding && whole_words && device_scope &&
        caps.max_storage_buffers_per_stage >= merged_gate.storage_buffers) {
      attention_decode_merged_ = &pipelines.get(source(AttentionStep::DecodeFreshMerge));
      attention_decode_merged_gate_ = &pipelines.get(merged_gate);
      arrivals_ = std::make_unique<vk::Buffer>(device, uint64_t(kSplitMaxRows) * uint64_t(shape.heads_q) * 4,
                                               vk::MemoryUse::DeviceLocal, "decode arrivals");
    }
    attention_merge_ = &pipelines.get(source(AttentionStep::Merge));
    attention_merge_gate_ = &pipelines.get(source(AttentionStep::MergeGate));
    if (kernel == AttentionKernel::Tiled) {
      attention_ = &pipelines.get(source(AttentionStep::Segment), attn_spec);
    } else {  // Matrix or MatrixEmulated: the tiled family on fragments
      const uint32_t spec[] = {kMatrixAttnWorkgroup, uint32_t(shape.head_dim), uint32_t(shape.value_dim), sinks, window};
      attention_ = &pipelines.get(
          source(kernel == AttentionKernel::MatrixEmulated ? AttentionStep::MatrixEmulated : AttentionStep::Matrix), spec);
      attention_rows_ = kMatrixAttnRows;
    }
  }
  // The memory kernels follow the attention kernel's family.
  const MemoryKernel memory = kernel == AttentionKernel::Rows             ? MemoryKernel::Rows
                              : kernel == AttentionKernel::Matrix         ? MemoryKernel::Matrix
                              : kernel == AttentionKernel::MatrixEmulated ? MemoryKernel::MatrixEmulated
                                                                          : MemoryKernel::Tiled;
  memory_ = std::make_unique<MemoryKernels>(device, shape, f16, options.update, memory, memory_lanes);

  vk::CommandStream stream(device);
  stream.begin();
  record_reset(stream);
  stream.end();
  stream.submit_and_wait();
}

InfiniAttentionLayer::~InfiniAttentionLayer() = default;

MemoryKernel InfiniAttentionLayer::memory_kernel() const noexcept { return memory_->kernel(); }

void InfiniAttentionLayer::record_reset(vk::CommandStream& stream) {
  stream.fill(vk::BufferRange::whole(m_), 0);
  uint32_t z_bits = 0;
  std::memcpy(&z_bits, &options_.memory_z_init, 4);
  stream.fill(vk::BufferRange::whole(z_), z_bits);
  if (arrivals_) stream.fill(vk::BufferRange::whole(*arrivals_), 0);  // each merging pass leaves it 0 too
  open_ = 0;
  segments_written_ = 0;
}

void InfiniAttentionLayer::record(vk::CommandStream& stream, TokenRows q, TokenRows k, TokenRows v,
                                  const vk::Buffer& out, uint32_t tokens, const vk::Buffer* position) {
  if (tokens == 0) return;
  if (tokens > segment_room())
    throw Error("infini attention: " + std::to_string(tokens) + " tokens do not fit the " +
                std::to_string(segment_room()) + " left in the open segment");
  if (tokens > max_tokens_)
    throw Error("infini attention: " + std::to_string(tokens) + " tokens in one piece, more than the " +
                std::to_string(max_tokens_) + " this layer was made for");
  const AttentionShape& s = shape_;
  const uint32_t hq = uint32_t(s.heads_q), hkv = uint32_t(s.heads_kv), d = uint32_t(s.head_dim),
                 dv = uint32_t(s.value_dim);
  const uint64_t es = scalar_bytes(input_);
  const uint64_t need_q = elements(q.token0 + tokens, s.heads_q, s.head_dim) * es;
  const uint64_t need_k = elements(k.token0 + tokens, s.heads_kv, s.head_dim) * es;
  const uint64_t need_v = elements(v.token0 + tokens, s.heads_kv, s.value_dim) * es;
  if (q.buffer->size() < need_q || k.buffer->size() < need_k || v.buffer->size() < need_v ||
      out.size() < elements(tokens, s.heads_q, s.value_dim) * 4)
    throw Error("infini attention: an input or output buffer is smaller than " + std::to_string(tokens) + " tokens");
  if (position && position->size() < 4) throw Error("infini attention: the position buffer is smaller than a word");
  // Every kernel below reads the open length from `pos`, never from push constants.
  if (!position) stream.fill(whole(position_), open_);
  const vk::Buffer& pos = position ? *position : position_;

  const uint32_t interleaved = options_.rope.layout == rope::RopeLayout::Interleaved ? 1u : 0u;
  const bool decode = tokens <= kSplitMaxRows;
  // The memory reads Q as it comes, or the rotated Q of step 1.
  const bool rotated = options_.memory && options_.memory_positions == MemoryPositions::Rotated;
  const TokenRows memory_q = rotated ? TokenRows{&qr_, 0} : q;
  // Decode on GPUs does 1.-3. in the attention's own pass (attention_decode.comp's fused variants),
  // which reads the memory with the raw Q.
  const bool fresh = decode && fuses_decode_steps();

  // 1. RoPE: Q into scratch, K appended to the segment's rotated-K cache.
  auto rope = [&](TokenRows x, uint32_t heads, const vk::Buffer& dst, bool at_open) {
    const RopePush push{tokens, heads, d, rotary_dim_, interleaved, x.token0, at_open ? 1u : 0u};
    stream.dispatch(*rope_,
                    {{whole(*x.buffer), vk::Access::Read}, {whole(rope_table_), vk::Access::Read},
                     {whole(dst), vk::Access::Write}, {whole(pos), vk::Access::Read}},
                    push, grid_1d(elements(tokens, int(heads), int(d)), kFlatWorkgroup, device_.caps()));
  };
  if (!fresh) {
    rope(q, hq, qr_, false);
    rope(k, hkv, cache_kr_, true);
  }
  if (options_.sliding) {  // the queries for the sinks, at most at the context's last position
    const RopePush push{tokens, hq, d, rotary_dim_, interleaved, q.token0, 0u, segment_ - 1};
    stream.dispatch(*rope_,
                    {{whole(*q.buffer), vk::Access::Read}, {whole(rope_table_), vk::Access::Read},
                     {whole(qs_), vk::Access::Write}, {whole(pos), vk::Access::Read}},
                    push, grid_1d(elements(tokens, int(hq), int(d)), kFlatWorkgroup, device_.caps()));
  }
  // The sinks' queries: the same rows as Q without sinks.
  const vk::Buffer& sink_queries = options_.sliding ? qs_ : qr_;
  // Raw K and V join the cache for the memory write at the end of the segment.
  auto append = [&](TokenRows x, uint32_t row_values, const vk::Buffer& cache) {
    const AppendPush push{tokens, row_values, x.token0};
    const uint64_t values = uint64_t(tokens) * row_values;
    stream.dispatch(*append_,
                    {{whole(*x.buffer), vk::Access::Read}, {whole(cache), vk::Access::ReadWrite},
                     {whole(pos), vk::Access::Read}},
                    push, grid_1d(es == 2 ? values / 2 + 1 : values, kFlatWorkgroup, device_.caps()));
  };
  if (!fresh) {
    append(k, hkv * d, cache_k_);
    append(v, hkv * dv, cache_v_);
  }

  // 2. Causal attention over the segment so far, and 3. the memory read and gate. The first
  //    segment reads M = 0 (so A = (1-g) A_dot, "mix") unless the "local" convention asks for
  //    plain A_dot there.
  const float scale = float(1.0 / std::sqrt(double(d)));
  const bool first = segments_written_ == 0;
  const bool gate = options_.memory && !(first && options_.first_segment == FirstSegment::Local);
  const MemoryConventions conventions = memory_conventions(options_);
  if (decode && attention_decode_) {
    const DecodePush push{tokens, hq, hkv, d, dv, decode_splits_, decode_keys_per_split_,
                          scale, rotary_dim_, interleaved, q.token0, k.token0, v.token0, conventions.flags,
                          conventions.eps};
    if (fresh) {
      // RoPE, the append, the attention and the merge (with the memory's read and gate) in one pass.
      std::vector<vk::Binding> bindings = {{whole(*q.buffer), vk::Access::Read},
                                           {whole(cache_kr_), vk::Access::ReadWrite},
                                           {whole(cache_v_), vk::Access::ReadWrite},
                                           {whole(*decode_parts_), vk::Access::ReadWrite},
                                           {whole(pos), vk::Access::Read},
                                           {whole(rope_table_), vk::Access::Read},
                                           {whole(*k.buffer), vk::Access::Read},
                                           {whole(*v.buffer), vk::Access::Read},
                                           {whole(cache_k_), vk::Access::ReadWrite},
                                           {whole(out), vk::Access::Write},
                                           {whole(*arrivals_), vk::Access::ReadWrite}};
      if (gate)
        bindings.insert(bindings.end(),
                        {{whole(m_), vk::Access::Read}, {whole(z_), vk::Access::Read}, {whole(beta_), vk::Access::Read}});
      stream.dispatch(gate ? *attention_decode_merged_gate_ : *attention_decode_merged_, bindings, &push, sizeof(push),
                      {decode_splits_, hq, tokens});
    } else {
      stream.dispatch(*attention_decode_,
                      {{whole(qr_), vk::Access::Read}, {whole(cache_kr_), vk::Access::Read},
                       {whole(cache_v_), vk::Access::Read}, {whole(*decode_parts_), vk::Access::Write},
                       {whole(pos), vk::Access::Read}, {whole(sink_queries), vk::Access::Read}},
                      push, {decode_splits_, hq, tokens});
      // The merge does the memory's read and gate in its pass (no launch or barrier of their own).
      const DecodeMergePush merge{hq, dv, decode_splits_, hkv, d, memory_q.token0, conventions.flags, conventions.eps};
      if (gate)
        stream.dispatch(*attention_merge_gate_,
                        {{whole(*decode_parts_), vk::Access::Read},
                         {whole(out), vk::Access::Write},
                         {whole(*memory_q.buffer), vk::Access::Read},
                         {whole(m_), vk::Access::Read},
                         {whole(z_), vk::Access::Read},
                         {whole(beta_), vk::Access::Read}},
                        merge, {1, hq, tokens});
      else
        stream.dispatch(*attention_merge_, {{whole(*decode_parts_), vk::Access::Read}, {whole(out), vk::Access::Write}},
                        merge, {1, hq, tokens});
    }
  } else {
    const AttentionPush attn{tokens, hq, hkv, d, dv, scale};
    const bool split = decode && attention_split_;
    const std::vector<vk::Binding> bindings = {{whole(qr_), vk::Access::Read},       {whole(cache_kr_), vk::Access::Read},
                                               {whole(cache_v_), vk::Access::Read},  {whole(out), vk::Access::Write},
                                               {whole(pos), vk::Access::Read},       {whole(sink_queries), vk::Access::Read}};
    stream.dispatch(split ? *attention_split_ : *attention_, bindings, &attn, sizeof(attn),
                    {split ? tokens : ceil_div(tokens, attention_rows_), hq, 1});
    if (gate)
      memory_->record_gate(stream, *memory_q.buffer, memory_q.token0, m_, z_, beta_, out, tokens, conventions);
  }

  open_ += tokens;
  if (open_ == rows_) {
    if (options_.sliding) record_slide(stream);
    else record_memory_write(stream, open_);
  }
}

void InfiniAttentionLayer::record_finish(vk::CommandStream& stream) {
  if (open_ > 0 && !options_.sliding) record_memory_write(stream, open_);
}


void InfiniAttentionLayer::record_memory_write(vk::CommandStream& stream, uint32_t tokens) {
  if (options_.memory) {
    const bool delta = options_.update == UpdateRule::Delta;
    // The keys as they come, or as rotated for the segment's attention.
    const vk::Buffer& keys = options_.memory_positions == MemoryPositions::Rotated ? cache_kr_ : cache_k_;
    // Retrieval with the old M, z: recorded before the update, which the stream orders after it.
    if (delta) memory_->record_delta(stream, keys, cache_v_, m_, z_, w_, tokens, memory_conventions(options_));
    memory_->record_update(stream, keys, delta ? w_ : cache_v_, m_, z_, tokens);
  }
  open_ = 0;
  ++segments_written_;
}

}  // namespace infini::ops
