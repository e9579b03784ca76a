#include "model/llama_runner.hpp"

#include <algorithm>
#include <string>

#include "infini/error.hpp"
#include "model/llama_weights_check.hpp"
#include "model/tensor_values.hpp"
#include "ops/elementwise.hpp"
#include "ops/embedding.hpp"
#include "ops/matmul.hpp"
#include "ops/rms_norm.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"
#include "vk/transfer.hpp"

namespace infini::model {
namespace {

// Recorded piece shapes kept at most: prefill with a fixed piece size needs segment / piece of
// them; decode needs one per position of the segment, so long segments fall back to recording.
constexpr size_t kMaxRecordedPieces = 512;

DType dtype_of(const TensorView& t) { return t.type == TensorType::F16 ? DType::F16 : DType::F32; }

// Weight matrices are stored on the device exactly as in the file (f32 or packed f16), in as
// many row chunks as the device's buffer limits need (one on most devices).
ops::RowChunks upload_matrix(vk::Device& device, const TensorView& t) {
  const uint64_t rows = t.shape.size() > 1 ? uint64_t(t.shape[1]) : 1;
  return ops::RowChunks(device, t.name, t.data, rows, t.data.size() / std::max<uint64_t>(rows, 1),
                        ops::max_chunk_bytes(device.caps()));
}

// Norm weights are small and read as f32 by the kernels.
vk::Buffer upload_f32(vk::Device& device, const TensorView& t) {
  const std::vector<double> wide = widen_all(t);
  const std::vector<float> values(wide.begin(), wide.end());
  vk::Buffer b(device, values.size() * 4, vk::MemoryUse::DeviceLocal, t.name);
  vk::upload(b, std::span<const float>(values));
  return b;
}

vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

vk::Buffer scratch(vk::Device& device, uint64_t floats, const char* label) {
  return vk::Buffer(device, std::max<uint64_t>(floats, 1) * 4, vk::MemoryUse::DeviceLocal, label);
}

}  // namespace

RunnerOptions resolve_runner_options(const LlamaConfig& c, MemoryChoice memory, int64_t segment,
                                     uint32_t max_piece) {
  RunnerOptions o;
  o.infini = c.has_infini_keys ? c.infini : InfiniOptions{};
  o.infini.memory = memory == MemoryChoice::Auto ? c.has_infini_keys : memory == MemoryChoice::On;
  if (segment > 0) o.infini.segment = segment;
  else if (!c.has_infini_keys) o.infini.segment = kPlainSegment;
  o.max_piece = max_piece;
  return o;
}

struct LlamaRunner::Kernels {
  ops::Embedding embed;
  ops::RmsNorm norm;
  ops::Elementwise add, swiglu;
  Kernels(vk::Device& d, DType embd)
      : embed(d, embd), norm(d), add(d, ops::ElementwiseOp::Add), swiglu(d, ops::ElementwiseOp::SwiGlu) {}
};

struct LlamaRunner::Scratch {
  vk::Buffer ids, x, h, q, k, v, attn, ffn_gate, ffn_up, logits;
  Scratch(vk::Device& d, const LlamaConfig& c, uint64_t p)
      : ids(scratch(d, p, "token ids")),
        x(scratch(d, p * c.embd, "hidden x")),
        h(scratch(d, p * c.embd, "normed h")),
        q(scratch(d, p * c.heads * c.head_dim, "q")),
        k(scratch(d, p * c.heads_kv * c.head_dim, "k")),
        v(scratch(d, p * c.heads_kv * c.head_dim, "v")),
        attn(scratch(d, p * c.heads * c.head_dim, "attention out")),
        ffn_gate(scratch(d, p * c.ffn, "ffn gate")),
        ffn_up(scratch(d, p * c.ffn, "ffn up")),
        logits(scratch(d, p * c.vocab, "logits")) {}
};

struct LlamaRunner::Layer {
  vk::Buffer attn_norm, ffn_norm;
  ops::RowChunks wq, wk, wv, wo, w_gate, w_up, w_down;
  ops::Matmul mm_q, mm_k, mm_v, mm_o, mm_gate, mm_up, mm_down;
  std::unique_ptr<ops::InfiniAttentionLayer> attention;

  Layer(vk::Device& d, const LlamaLayerWeights& w)
      : attn_norm(upload_f32(d, w.attn_norm)), ffn_norm(upload_f32(d, w.ffn_norm)),
        wq(upload_matrix(d, w.wq)), wk(upload_matrix(d, w.wk)), wv(upload_matrix(d, w.wv)), wo(upload_matrix(d, w.wo)),
        w_gate(upload_matrix(d, w.ffn_gate)), w_up(upload_matrix(d, w.ffn_up)), w_down(upload_matrix(d, w.ffn_down)),
        mm_q(d, DType::F32, dtype_of(w.wq)), mm_k(d, DType::F32, dtype_of(w.wk)), mm_v(d, DType::F32, dtype_of(w.wv)),
        mm_o(d, DType::F32, dtype_of(w.wo)), mm_gate(d, DType::F32, dtype_of(w.ffn_gate)),
        mm_up(d, DType::F32, dtype_of(w.ffn_up)), mm_down(d, DType::F32, dtype_of(w.ffn_down)) {}
};

LlamaRunner::LlamaRunner(vk::Device& device, const LlamaWeights& weights, const RunnerOptions& options)
    : device_(device),
      config_((check_llama_weights(weights), weights.config)),
      options_(options),
      token_embd_(upload_matrix(device, weights.token_embd)),
      output_norm_(upload_f32(device, weights.output_norm)),
      embd_type_(dtype_of(weights.token_embd)),
      output_type_(dtype_of(weights.output)) {
  if (options.max_piece < 1) throw Error("model: max_piece must be >= 1");
  // Each activation buffer of a piece must fit one buffer of the device: fewer tokens per piece
  // on devices with small limits (the outputs do not change, only the number of submissions).
  const LlamaConfig& cfg = config_;
  const uint64_t widest_row = 4 * uint64_t(std::max({cfg.embd, cfg.heads * cfg.head_dim, cfg.ffn, cfg.vocab}));
  const uint64_t fit = ops::max_chunk_bytes(device.caps()) / widest_row;
  if (fit == 0)
    throw Error("model: one token's activations (" + std::to_string(widest_row) +
                " bytes) exceed the device's largest buffer (maxStorageBufferRange / maxMemoryAllocationSize) of " +
                std::to_string(ops::max_chunk_bytes(device.caps())) + " bytes");
  options_.max_piece = uint32_t(std::min<uint64_t>(options.max_piece, fit));
  options_.infini.rope = config_.rope;
  const LlamaConfig& c = config_;
  const AttentionShape shape{int(c.heads), int(c.heads_kv), int(c.head_dim), int(c.head_dim)};
  kernels_ = std::make_unique<Kernels>(device, embd_type_);
  const bool tied = weights.output.data.data() == weights.token_embd.data.data();
  if (!tied) output_ = std::make_unique<ops::RowChunks>(upload_matrix(device, weights.output));

  layers_.reserve(weights.layers.size());
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const LlamaLayerWeights& w = weights.layers[i];
    std::vector<float> beta(size_t(c.heads), 0.0f);
    if (w.mem_gate) {
      const std::vector<double> b = widen_all(*w.mem_gate);
      std::copy(b.begin(), b.end(), beta.begin());
    }
    Layer& layer = layers_.emplace_back(device, w);
    layer.attention = std::make_unique<ops::InfiniAttentionLayer>(device, shape, options_.infini, DType::F32, beta,
                                                                  options.kernel);
  }

  scratch_ = std::make_unique<Scratch>(device, c, options_.max_piece);
  stream_ = std::make_unique<vk::CommandStream>(device);
  logits_matmul_ = std::make_unique<ops::Matmul>(device, DType::F32, output_ ? output_type_ : embd_type_);
}

LlamaRunner::~LlamaRunner() = default;

void LlamaRunner::reset() {
  vk::CommandStream& stream = *stream_;
  stream.begin();
  for (Layer& l : layers_) l.attention->record_reset(stream);
  stream.end();
  stream.submit_and_wait();
  tokens_seen_ = 0;
}

stream::StateFingerprint LlamaRunner::fingerprint() const {
  const LlamaConfig& c = config_;
  const InfiniOptions& o = options_.infini;
  return {c.vocab, c.embd, c.layers, c.heads, c.heads_kv, c.head_dim, c.ffn, o.segment,
          uint32_t(o.update), uint32_t(o.first_segment), uint32_t(o.gate_sign), o.memory ? 1u : 0u,
          uint32_t(DType::F32)};
}

stream::SessionState LlamaRunner::save_state() const {
  stream::SessionState state{fingerprint(), tokens_seen_, {}};
  for (const Layer& l : layers_) state.layers.push_back(l.attention->snapshot());
  return state;
}

void LlamaRunner::restore_state(const stream::SessionState& state) {
  if (!(state.fingerprint == fingerprint()))
    throw Error("model: the saved state is for " + state.fingerprint.describe() + "; this session is " +
                fingerprint().describe());
  for (size_t i = 0; i < layers_.size(); ++i)
    if (!layers_[i].attention->fits(state.layers[i]))
      throw Error("model: the saved state of layer " + std::to_string(i) + " does not fit");
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i].attention->restore(state.layers[i]);
  tokens_seen_ = state.tokens_seen;
}

std::vector<float> LlamaRunner::forward(std::span<const int32_t> tokens, bool all_logits) {
  if (tokens.empty()) throw Error("model: no tokens to feed");
  for (int32_t t : tokens)
    if (t < 0 || t >= config_.vocab)
      throw Error("model: token id " + std::to_string(t) + " is outside the vocabulary of " +
                  std::to_string(config_.vocab));
  const size_t vocab = size_t(config_.vocab);
  std::vector<float> logits(all_logits ? tokens.size() * vocab : vocab);
  size_t done = 0;
  while (done < tokens.size()) {
    // A piece never crosses a segment boundary: every layer's open segment has the same room
    // (a model has at least one layer; check_llama_weights makes sure).
    const size_t room = layers_.front().attention->segment_room();
    const size_t piece = std::min({tokens.size() - done, room, size_t(options_.max_piece)});
    const bool last = done + piece == tokens.size();
    float* out = all_logits ? logits.data() + done * vocab : (last ? logits.data() : nullptr);
    run_piece(tokens.subspan(done, piece), all_logits, out);
    done += piece;
  }
  return logits;
}

void LlamaRunner::run_piece(std::span<const int32_t> tokens, bool all_logits, float* logits) {
  const LlamaConfig& c = config_;
  const uint32_t n = uint32_t(tokens.size());
  const uint32_t e = uint32_t(c.embd), qd = uint32_t(c.heads * c.head_dim), kvd = uint32_t(c.heads_kv * c.head_dim),
                 f = uint32_t(c.ffn), vocab = uint32_t(c.vocab);
  const float eps = float(c.rms_eps);
  Scratch& s = *scratch_;
  vk::upload(s.ids, 0, tokens.data(), tokens.size_bytes());
  const uint32_t rows = all_logits ? n : (logits ? 1u : 0u);
  const ops::InfiniAttentionLayer& first_layer = *layers_.front().attention;
  const PieceShape shape{first_layer.open_tokens(), n, first_layer.segments_written() == 0, rows};
  if (const auto it = recorded_.find(shape); it != recorded_.end()) {
    for (Layer& l : layers_) l.attention->advance(n);
    it->second->submit_and_wait();
    tokens_seen_ += n;
    if (rows) vk::download(s.logits, 0, logits, uint64_t(rows) * vocab * 4);
    return;
  }
  std::unique_ptr<vk::CommandStream> fresh;
  if (recorded_.size() < kMaxRecordedPieces) fresh = std::make_unique<vk::CommandStream>(device_);
  vk::CommandStream& stream = fresh ? *fresh : *stream_;
  stream.begin();
  const Kernels& k = *kernels_;
  k.embed.record(stream, whole(s.ids), token_embd_, whole(s.x), n, e);
  auto matmul = [&](const ops::Matmul& mm, const vk::Buffer& a, const ops::RowChunks& b, const vk::Buffer& out_buf,
                    uint32_t out, uint32_t in) { ops::record_matmul_chunks(mm, stream, {n, out, in, whole(a), {}, whole(out_buf)}, b); };
  for (Layer& l : layers_) {
    k.norm.record(stream, whole(s.x), whole(l.attn_norm), whole(s.h), n, e, eps);
    matmul(l.mm_q, s.h, l.wq, s.q, qd, e);
    matmul(l.mm_k, s.h, l.wk, s.k, kvd, e);
    matmul(l.mm_v, s.h, l.wv, s.v, kvd, e);
    l.attention->record(stream, {&s.q, 0}, {&s.k, 0}, {&s.v, 0}, s.attn, n);
    matmul(l.mm_o, s.attn, l.wo, s.h, e, qd);
    k.add.record(stream, whole(s.x), whole(s.h), n * e);
    k.norm.record(stream, whole(s.x), whole(l.ffn_norm), whole(s.h), n, e, eps);
    matmul(l.mm_gate, s.h, l.w_gate, s.ffn_gate, f, e);
    matmul(l.mm_up, s.h, l.w_up, s.ffn_up, f, e);
    k.swiglu.record(stream, whole(s.ffn_gate), whole(s.ffn_up), n * f);
    matmul(l.mm_down, s.ffn_gate, l.w_down, s.h, e, f);
    k.add.record(stream, whole(s.x), whole(s.h), n * e);
  }
  // Logits only for the rows asked for: all of them, or the last one of the stream's last piece.
  if (rows) {
    k.norm.record(stream, whole(s.x), whole(output_norm_), whole(s.h), n, e, eps);
    ops::MatmulArgs args{rows, vocab, e, whole(s.h), {}, whole(s.logits)};
    args.a_offset = (n - rows) * e;
    ops::record_matmul_chunks(*logits_matmul_, stream, args, output_ ? *output_ : token_embd_);
  }
  stream.end();
  stream.submit_and_wait();
  if (fresh) recorded_.emplace(shape, std::move(fresh));
  tokens_seen_ += n;
  if (rows) vk::download(s.logits, 0, logits, uint64_t(rows) * vocab * 4);
}

}  // namespace infini::model
