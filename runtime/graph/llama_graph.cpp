#include "graph/llama_graph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "infini/error.hpp"
#include "model/tensor_values.hpp"
#include "ops/elementwise.hpp"
#include "ops/embedding.hpp"
#include "ops/rms_norm.hpp"
#include "vk/device.hpp"
#include "vk/transfer.hpp"

namespace infini::model {
namespace {

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

vk::Buffer scratch(vk::Device& device, uint64_t floats, const char* label) {
  return vk::Buffer(device, std::max<uint64_t>(floats, 1) * 4, vk::MemoryUse::DeviceLocal, label);
}

}  // namespace

uint32_t max_piece_for(const vk::Device& device, const LlamaConfig& c, uint32_t wanted) {
  const uint64_t widest_row = 4 * uint64_t(std::max({c.embd, c.heads * c.head_dim, c.ffn, c.vocab}));
  const uint64_t limit = ops::max_chunk_bytes(device.caps());
  if (limit / widest_row == 0)
    throw Error("model: one token's activations (" + std::to_string(widest_row) + " bytes) exceed the largest buffer "
                "(maxStorageBufferRange / maxMemoryAllocationSize) of '" + device.caps().name + "', " +
                std::to_string(limit) + " bytes");
  return uint32_t(std::min<uint64_t>(wanted, limit / widest_row));
}

struct LlamaGraph::Kernels {
  ops::Embedding embed;
  ops::RmsNorm norm;
  // The residual adds are done by the projections (MatmulArgs::accumulate); `glu` is the FFN's
  // gate (SwiGLU, or gemma's GeGLU).
  ops::Elementwise add_rows, glu;
  Kernels(vk::Device& d, ElementType embd, const LlamaConfig& c)
      : embed(d, embd, c.scaled_embedding ? float(std::sqrt(double(c.embd))) : 1.0f),
        norm(d),
        add_rows(d, ops::ElementwiseOp::AddRows),
        glu(d, c.ffn_gate == FfnGate::GeGlu ? ops::ElementwiseOp::GeGlu : ops::ElementwiseOp::SwiGlu) {}
};

// What a piece computes between the residual stream's reads and writes, for up to max_piece tokens.
struct LlamaGraph::Activations {
  vk::Buffer h, q, k, v, attn, ffn_gate, ffn_up;
  std::unique_ptr<vk::Buffer> q_normed, k_normed;  // models that normalise Q and K per head
  // The partial products of the projections the autotuner split over k (ops::Matmul's split-K),
  // one at a time: as large as the largest needs for a whole piece; none when none is split.
  std::unique_ptr<vk::Buffer> split;
  Activations(vk::Device& d, const LlamaConfig& c, uint64_t p, bool qk_norm)
      : h(scratch(d, p * c.embd, "normed h")),
        q(scratch(d, p * c.heads * c.head_dim, "q")),
        k(scratch(d, p * c.heads_kv * c.head_dim, "k")),
        v(scratch(d, p * c.heads_kv * c.head_dim, "v")),
        attn(scratch(d, p * c.heads * c.head_dim, "attention out")),
        ffn_gate(scratch(d, p * c.ffn, "ffn gate")),
        ffn_up(scratch(d, p * c.ffn, "ffn up")) {
    if (!qk_norm) return;
    q_normed = std::make_unique<vk::Buffer>(scratch(d, p * c.heads * c.head_dim, "q normed"));
    k_normed = std::make_unique<vk::Buffer>(scratch(d, p * c.heads_kv * c.head_dim, "k normed"));
  }
};

// One layer's kernels over its weights (shared, read-only) and its attention state (this graph's).
struct LlamaGraph::Layer {
  const DeviceLayerWeights& w;
  ops::Matmul mm_q, mm_k, mm_v, mm_o, mm_gate, mm_up, mm_down;
  std::unique_ptr<ops::InfiniAttentionLayer> attention;

  // `tuned`: the autotuner's piece kernel for a weight (type, rows, row length), when it has one.
  Layer(vk::Device& d, const DeviceLayerWeights& weights, const LlamaConfig& c, ops::MatmulKernel kernel,
        ops::MatrixTiles mt, ops::VectorTiles vt,
        const std::function<std::optional<ops::MatmulChoice>(ElementType, int64_t, int64_t)>& tuned)
      : w(weights),
        mm_q(d, ElementType::F32, weights.types.wq, {}, kernel, mt, vt, tuned(weights.types.wq, c.heads * c.head_dim, c.embd)),
        mm_k(d, ElementType::F32, weights.types.wk, {}, kernel, mt, vt,
             tuned(weights.types.wk, c.heads_kv * c.head_dim, c.embd)),
        mm_v(d, ElementType::F32, weights.types.wv, {}, kernel, mt, vt,
             tuned(weights.types.wv, c.heads_kv * c.head_dim, c.embd)),
        mm_o(d, ElementType::F32, weights.types.wo, {}, kernel, mt, vt, tuned(weights.types.wo, c.embd, c.heads * c.head_dim)),
        mm_gate(d, ElementType::F32, weights.types.ffn_gate, {}, kernel, mt, vt, tuned(weights.types.ffn_gate, c.ffn, c.embd)),
        mm_up(d, ElementType::F32, weights.types.ffn_up, {}, kernel, mt, vt, tuned(weights.types.ffn_up, c.ffn, c.embd)),
        mm_down(d, ElementType::F32, weights.types.ffn_down, {}, kernel, mt, vt, tuned(weights.types.ffn_down, c.embd, c.ffn)),
        glu_fusable(weights.types.ffn_gate == weights.types.ffn_up) {}

  // Whether a piece (its rows in `args`) runs its projections on the vector kernel, which then
  // takes the norm (and biases) before Q, K, V, and the FFN's norm, gate, up and SwiGLU, in their
  // passes (decode on GPUs).
  bool fuses_attention_steps(const ops::MatmulArgs& args) const {
    return mm_q.does_fused_steps(args) && mm_k.does_fused_steps(args) && mm_v.does_fused_steps(args);
  }
  bool fuses_ffn_steps(const ops::MatmulArgs& args) const { return glu_fusable && mm_gate.does_fused_steps(args); }
  bool glu_fusable;  // the gate and up weights have one type (so one kernel reads both)

  // The floats of partial products a piece of `rows` needs where a projection is split over k.
  uint64_t split_scratch_floats(uint32_t rows, const LlamaConfig& c) const {
    const uint32_t e = uint32_t(c.embd), qd = uint32_t(c.heads * c.head_dim), kvd = uint32_t(c.heads_kv * c.head_dim),
                   f = uint32_t(c.ffn);
    return std::max({mm_q.split_scratch_floats(rows, qd), mm_k.split_scratch_floats(rows, kvd),
                     mm_v.split_scratch_floats(rows, kvd), mm_o.split_scratch_floats(rows, e),
                     mm_gate.split_scratch_floats(rows, f), mm_up.split_scratch_floats(rows, f),
                     mm_down.split_scratch_floats(rows, e)});
  }
};

LlamaGraph::LlamaGraph(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
                       const GraphOptions& options, uint32_t max_piece, bool attention_state)
    : device_(device), config_(config), range_(weights->range()), fused_steps_(options.fused_steps),
      max_piece_(max_piece), weights_(std::move(weights)) {
  const LlamaConfig& c = config_;
  if (&weights_->device() != &device) throw Error("model: a graph's weights must be on its own device");
  const AttentionShape shape{int(c.heads), int(c.heads_kv), int(c.head_dim), int(c.head_dim)};
  kernels_ = std::make_unique<Kernels>(device, weights_->token_embd_type(), c);
  layers_.reserve(size_t(range_.count()));
  // The autotuner's choices apply where the rules would choose (Auto); a kernel asked for is used.
  const auto tuned = [&](ElementType b, int64_t n, int64_t k) -> std::optional<ops::MatmulChoice> {
    if (options.matmul_kernel != ops::MatmulKernel::Auto) return std::nullopt;
    return weights_->piece_choice(b, n, k);
  };
  // The tuned attention family likewise, for layers of the shape and cache it was measured with.
  const ops::AttentionKernel attention_kernel =
      options.kernel != ops::AttentionKernel::Auto
          ? options.kernel
          : weights_->attention_choice(attention_key(c, options.infini)).value_or(ops::AttentionKernel::Auto);
  bool qk_norm = false;
  for (int64_t i = range_.first; i < range_.last; ++i) {
    const DeviceLayerWeights& w = weights_->layer(i);
    Layer& layer = layers_.emplace_back(device, w, c, options.matmul_kernel, options.matrix_tiles, options.vector_tiles,
                                        tuned);
    // The vector kernel's fused gate is SwiGLU's; a GeGLU runs as a step of its own.
    layer.glu_fusable = layer.glu_fusable && c.ffn_gate == FfnGate::SwiGlu;
    qk_norm = qk_norm || w.q_norm != nullptr;
    if (!attention_state) continue;
    try {
      layer.attention = std::make_unique<ops::InfiniAttentionLayer>(device, shape, options.infini, ElementType::F32,
                                                                    w.gate_logits, attention_kernel, max_piece);
    } catch (const Error&) {
      if (attention_kernel == options.kernel) throw;
      // A tuned family this device cannot take (a cache measured without the device profile now
      // in force): the rule's.
      layer.attention = std::make_unique<ops::InfiniAttentionLayer>(device, shape, options.infini, ElementType::F32,
                                                                    w.gate_logits, options.kernel, max_piece);
    }
    layer.attention->fuse_decode_steps(options.fused_steps);
  }
  if (has_head()) {
    logits_matmul_ = std::make_unique<ops::Matmul>(device, ElementType::F32, weights_->output_type(), ops::MatmulTiles{},
                                                   options.matmul_kernel, options.matrix_tiles, options.vector_tiles,
                                                   tuned(weights_->output_type(), c.vocab, c.embd));
    top_k_ = std::make_unique<ops::TopK>(device, uint32_t(c.vocab));
  }
  activations_ = std::make_unique<Activations>(device, c, max_piece, qk_norm);
  uint64_t split = 0;
  for (const Layer& l : layers_) split = std::max(split, l.split_scratch_floats(max_piece, c));
  if (logits_matmul_) split = std::max(split, logits_matmul_->split_scratch_floats(max_piece, uint32_t(c.vocab)));
  if (split > 0) activations_->split = std::make_unique<vk::Buffer>(scratch(device, split, "split-k partials"));
}

LlamaGraph::~LlamaGraph() = default;

const ops::InfiniAttentionLayer& LlamaGraph::first_attention() const {
  if (!layers_.front().attention) throw Error("model: this graph records batched steps only and has no attention state");
  return *layers_.front().attention;
}

void LlamaGraph::advance(uint32_t tokens) {
  for (Layer& l : layers_) l.attention->advance(tokens);
}

void LlamaGraph::take_back(uint32_t tokens) {
  for (Layer& l : layers_) l.attention->take_back(tokens);
}

void LlamaGraph::record_reset(vk::CommandStream& stream) {
  for (Layer& l : layers_) l.attention->record_reset(stream);
}

std::vector<ops::LayerSnapshot> LlamaGraph::snapshot() const {
  std::vector<ops::LayerSnapshot> out;
  for (const Layer& l : layers_) out.push_back(l.attention->snapshot());
  return out;
}

bool LlamaGraph::fits(std::span<const ops::LayerSnapshot> layers) const {
  if (layers.size() != layers_.size()) return false;
  for (size_t i = 0; i < layers.size(); ++i)
    if (!layers_[i].attention->fits(layers[i])) return false;
  return true;
}

void LlamaGraph::restore(std::span<const ops::LayerSnapshot> layers) {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i].attention->restore(layers[i]);
}

void LlamaGraph::record_piece(vk::CommandStream& stream, const PieceIO& io, uint32_t n, uint32_t rows, uint32_t top_k,
                              uint32_t logits_row) {
  const Kernels& k = *kernels_;
  if (embeds()) k.embed.record(stream, whole(*io.ids), *weights_->token_embd(), whole(*io.x), n, uint32_t(config_.embd));
  record_layers(stream, *io.x, n, [&](size_t i, const vk::Buffer& q, const vk::Buffer& kk) {
    layers_[i].attention->record(stream, {&q, 0}, {&kk, 0}, {&activations_->v, 0}, activations_->attn, n, io.position);
  });
  if (!rows) return;
  record_logits(stream, *io.x, *io.logits, n, rows, logits_row);
  const uint32_t vocab = uint32_t(config_.vocab);
  if (top_k)
    top_k_->record(stream, *io.logits, uint64_t(logits_row) * vocab, vocab, top_k, {io.ranked, 0, uint64_t(top_k) * 8});
}

void LlamaGraph::record_batch(vk::CommandStream& stream, const BatchIO& io, std::span<LlamaGraph* const> streams) {
  const uint32_t b = uint32_t(streams.size());
  if (layers_.front().attention) throw Error("model: a batched step is recorded by a graph without attention state");
  if (b == 0 || b > max_piece_ || io.positions.size() != b || io.attention_out.size() != b)
    throw Error("model: a batched step of " + std::to_string(b) + " streams; this graph takes 1.." +
                std::to_string(max_piece_));
  for (const LlamaGraph* g : streams)
    if (&g->device_ != &device_ || g->weights_ != weights_ || !g->layers_.front().attention)
      throw Error("model: a batched step's streams must run this graph's weights on its device");
  const uint32_t vocab = uint32_t(config_.vocab), qd = uint32_t(config_.heads * config_.head_dim);
  if (embeds()) kernels_->embed.record(stream, whole(*io.ids), *weights_->token_embd(), whole(*io.x), b, uint32_t(config_.embd));
  record_layers(stream, *io.x, b, [&](size_t i, const vk::Buffer& q, const vk::Buffer& kk) {
    // Every stream's attention first, then the copies into the batch's rows: the copies wait for
    // the attention once, not once a stream.
    for (uint32_t s = 0; s < b; ++s)
      streams[s]->layers_[i].attention->record(stream, {&q, s}, {&kk, s}, {&activations_->v, s}, *io.attention_out[s],
                                               1, io.positions[s]);
    const uint64_t row = uint64_t(qd) * 4;
    for (uint32_t s = 0; s < b; ++s)
      stream.copy({io.attention_out[s], 0, row}, {&activations_->attn, s * row, row});
  });
  if (!has_head()) return;
  record_logits(stream, *io.x, *io.logits, b, b, 0);
  for (uint32_t s = 0; s < b; ++s)
    top_k_->record(stream, *io.logits, uint64_t(s) * vocab, vocab, io.top_k,
                   {io.ranked, s * io.ranked_stride, uint64_t(io.top_k) * 8});
}

void LlamaGraph::record_layers(vk::CommandStream& stream, const vk::Buffer& x, uint32_t n, const Attend& attend) {
  const LlamaConfig& c = config_;
  const uint32_t e = uint32_t(c.embd), qd = uint32_t(c.heads * c.head_dim), kvd = uint32_t(c.heads_kv * c.head_dim),
                 f = uint32_t(c.ffn);
  const float eps = float(c.rms_eps);
  Activations& s = *activations_;
  const Kernels& k = *kernels_;
  const vk::BufferRange split = s.split ? whole(*s.split) : vk::BufferRange{};
  auto matmul = [&](const ops::Matmul& mm, const vk::Buffer& a, const ops::RowChunks& b, const vk::Buffer& out_buf,
                    uint32_t out, uint32_t in) {
    ops::MatmulArgs args{n, out, in, whole(a), {}, whole(out_buf)};
    args.split_scratch = split;
    ops::record_matmul_chunks(mm, stream, args, b);
  };
  // The residual stream x takes the attention's and the FFN's output projections as they are
  // computed (the matmul adds to it): one dispatch, and one barrier, fewer each.
  auto add_to_x = [&](const ops::Matmul& mm, const vk::Buffer& a, const ops::RowChunks& b, uint32_t in) {
    ops::MatmulArgs args{n, e, in, whole(a), {}, whole(x)};
    args.accumulate = true;
    args.split_scratch = split;
    ops::record_matmul_chunks(mm, stream, args, b);
  };
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& l = layers_[i];
    // Q, K and V from the normed x, with their biases: on the vector kernel (decode) in the
    // projections' own passes, else as separate steps.
    ops::MatmulArgs probe{n, qd, e, whole(x), {}, whole(s.q)};
    const bool fuse_qkv = fused_steps_ && l.fuses_attention_steps(probe);
    if (!fuse_qkv) k.norm.record(stream, whole(x), whole(l.w.attn_norm), whole(s.h), n, e, eps);
    auto project = [&](const ops::Matmul& mm, const ops::RowChunks& w, const vk::Buffer& out, uint32_t width,
                       const std::unique_ptr<vk::Buffer>& bias) {
      ops::MatmulArgs args{n, width, e, whole(fuse_qkv ? x : s.h), {}, whole(out)};
      args.split_scratch = split;
      if (fuse_qkv) {
        args.a_norm = whole(l.w.attn_norm);
        args.norm_eps = eps;
        if (bias) args.bias = whole(*bias);
      }
      ops::record_matmul_chunks(mm, stream, args, w);
    };
    project(l.mm_q, l.w.wq, s.q, qd, l.w.bq);
    project(l.mm_k, l.w.wk, s.k, kvd, l.w.bk);
    project(l.mm_v, l.w.wv, s.v, kvd, l.w.bv);
    // Separate bias adds after all three projections: one barrier before them, not one each.
    if (l.w.bq && !fuse_qkv) k.add_rows.record(stream, whole(s.q), whole(*l.w.bq), n * qd, qd);
    if (l.w.bk && !fuse_qkv) k.add_rows.record(stream, whole(s.k), whole(*l.w.bk), n * kvd, kvd);
    if (l.w.bv && !fuse_qkv) k.add_rows.record(stream, whole(s.v), whole(*l.w.bv), n * kvd, kvd);
    const vk::Buffer *q = &s.q, *kk = &s.k;
    if (l.w.q_norm) {  // each head of Q and K normalised before RoPE (qwen3)
      const uint32_t hd = uint32_t(c.head_dim);
      k.norm.record(stream, whole(s.q), whole(*l.w.q_norm), whole(*s.q_normed), n * uint32_t(c.heads), hd, eps);
      k.norm.record(stream, whole(s.k), whole(*l.w.k_norm), whole(*s.k_normed), n * uint32_t(c.heads_kv), hd, eps);
      q = s.q_normed.get();
      kk = s.k_normed.get();
    }
    attend(i, *q, *kk);
    add_to_x(l.mm_o, s.attn, l.w.wo, qd);
    // The FFN: silu(gate) * up of the normed x, then down, added to x.
    ops::MatmulArgs ffn{n, f, e, whole(x), {}, whole(s.ffn_gate)};
    if (fused_steps_ && l.fuses_ffn_steps(ffn)) {
      ffn.a_norm = whole(l.w.ffn_norm);
      ffn.norm_eps = eps;
      ops::record_matmul_chunks(l.mm_gate, stream, ffn, l.w.w_gate, &l.w.w_up);
    } else {
      k.norm.record(stream, whole(x), whole(l.w.ffn_norm), whole(s.h), n, e, eps);
      matmul(l.mm_gate, s.h, l.w.w_gate, s.ffn_gate, f, e);
      matmul(l.mm_up, s.h, l.w.w_up, s.ffn_up, f, e);
      k.glu.record(stream, whole(s.ffn_gate), whole(s.ffn_up), n * f);
    }
    add_to_x(l.mm_down, s.ffn_gate, l.w.w_down, f);
  }
}

// Logits only for the rows asked for: all of them, or the last one of the stream's last piece.
// The final norm, of those rows only, inside the logits' pass where the vector kernel runs it.
void LlamaGraph::record_logits(vk::CommandStream& stream, const vk::Buffer& x, const vk::Buffer& logits, uint32_t n,
                               uint32_t rows, uint32_t logits_row) {
  const uint32_t e = uint32_t(config_.embd), vocab = uint32_t(config_.vocab);
  const float eps = float(config_.rms_eps);
  ops::MatmulArgs args{rows, vocab, e, whole(x), {}, whole(logits)};
  if (activations_->split) args.split_scratch = whole(*activations_->split);
  args.a_offset = (n - rows) * e;
  args.c_offset = logits_row * vocab;
  if (fused_steps_ && logits_matmul_->does_fused_steps(args)) {
    args.a_norm = whole(*weights_->output_norm());
    args.norm_eps = eps;
  } else {
    kernels_->norm.record(stream, whole(x), whole(*weights_->output_norm()), whole(activations_->h), n, e, eps);
    args.a = whole(activations_->h);
  }
  ops::record_matmul_chunks(*logits_matmul_, stream, args, *weights_->output());
}

}  // namespace infini::model
