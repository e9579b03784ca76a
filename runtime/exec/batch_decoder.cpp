#include "exec/batch_decoder.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "graph/llama_graph.hpp"
#include "infini/error.hpp"
#include "vk/command_stream.hpp"
#include "vk/staged_buffer.hpp"

namespace infini::model {
namespace {

// A row of the ranked pairs: the deepest ranking, and a multiple of every device's storage
// buffer offset alignment (at most 256), so each row binds at its own offset.
constexpr uint64_t kRankedRowBytes = ops::TopK::kMaxK * 8;
static_assert(kRankedRowBytes % 256 == 0);

vk::Buffer words(vk::Device& device, uint64_t count, const char* label) {
  return vk::Buffer(device, std::max<uint64_t>(count, 1) * 4, vk::MemoryUse::DeviceLocal, label);
}

// The hidden states' way: the first stage's are made on the device, the last's stay there.
vk::StagingDirection hidden_direction(bool embeds, bool head) {
  if (embeds) return head ? vk::StagingDirection::None : vk::StagingDirection::FromDevice;
  return head ? vk::StagingDirection::ToDevice : vk::StagingDirection::Both;
}

}  // namespace

// The batch's part on one device of the pipeline.
struct BatchDecoder::Stage {
  LlamaGraph graph;  // without attention state: the streams bring theirs
  vk::StagedBuffer ids_io, x_io, ranked_io;
  vk::Buffer logits;
  std::vector<vk::Buffer> positions, attention_out;  // per row
  vk::CommandStream stream;

  Stage(std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& c, const GraphOptions& options, uint32_t rows)
      : graph(weights->device(), weights, c, options, rows, /*attention_state=*/false),
        ids_io(weights->device(), uint64_t(rows) * 4,
               graph.embeds() ? vk::StagingDirection::ToDevice : vk::StagingDirection::None, "batch token ids"),
        x_io(weights->device(), uint64_t(rows) * uint64_t(c.embd) * 4, hidden_direction(graph.embeds(), graph.has_head()),
             "batch hidden x"),
        ranked_io(weights->device(), graph.has_head() ? rows * kRankedRowBytes : 4,
                  graph.has_head() ? vk::StagingDirection::FromDevice : vk::StagingDirection::None, "batch ranked logits"),
        logits(words(weights->device(), graph.has_head() ? uint64_t(rows) * uint64_t(c.vocab) : 1, "batch logits")),
        stream(weights->device()) {
    positions.reserve(rows);
    attention_out.reserve(rows);
    for (uint32_t i = 0; i < rows; ++i) {
      positions.push_back(words(weights->device(), 1, "batch open tokens"));
      attention_out.push_back(words(weights->device(), uint64_t(c.heads) * uint64_t(c.head_dim), "batch attention out"));
    }
  }
};

BatchDecoder::BatchDecoder(std::span<const std::shared_ptr<const DeviceWeights>> stages, const LlamaConfig& config,
                           const GraphOptions& options, uint32_t max_batch)
    : config_(config), max_batch_(max_batch) {
  if (max_batch == 0) throw Error("model: a batched step takes at least one stream");
  if (stages.empty()) throw Error("model: a batched step needs the model's weights");
  for (const std::shared_ptr<const DeviceWeights>& w : stages)
    stages_.push_back(std::make_unique<Stage>(w, config, options, max_batch));
  if (!stages_.front()->graph.embeds() || !stages_.back()->graph.has_head())
    throw Error("model: a batched step runs every layer of the model");
}

BatchDecoder::~BatchDecoder() = default;

void BatchDecoder::check(std::span<const Entry> entries, uint32_t k) const {
  if (entries.empty() || entries.size() > max_batch_)
    throw Error("model: a batched step of " + std::to_string(entries.size()) + " streams; it takes 1.." +
                std::to_string(max_batch_));
  if (k == 0 || k > ops::TopK::kMaxK)
    throw Error("model: a device ranking takes 1.." + std::to_string(ops::TopK::kMaxK) + " logits, got " +
                std::to_string(k));
  std::set<const LlamaRunner*> seen;
  for (const Entry& e : entries) {
    if (!seen.insert(e.runner).second) throw Error("model: a stream joins a batched step twice");
    if (e.token < 0 || e.token >= config_.vocab)
      throw Error("model: token id " + std::to_string(e.token) + " is outside the vocabulary of " +
                  std::to_string(config_.vocab));
    bool same = e.runner->stage_count() == stages_.size();
    for (size_t i = 0; same && i < stages_.size(); ++i)
      same = &e.runner->stage(i).graph().weights() == &stages_[i]->graph.weights();
    if (!same) throw Error("model: a batched step's streams must run its weights on its devices");
    for (size_t i = 0; i < stages_.size(); ++i)
      if (e.runner->stage(i).in_flight()) throw Error("model: a stream with a piece in flight cannot join a batched step");
  }
}

std::vector<std::vector<ops::RankedLogit>> BatchDecoder::step(std::span<const Entry> entries, uint32_t k) {
  check(entries, k);
  const uint32_t b = uint32_t(entries.size());
  const uint64_t hidden_bytes = uint64_t(b) * uint64_t(config_.embd) * 4;
  std::vector<float> hidden;  // between the devices of a pipeline
  for (size_t i = 0; i < stages_.size(); ++i) {
    Stage& st = *stages_[i];
    std::vector<LlamaGraph*> graphs(b);
    std::vector<const vk::Buffer*> positions(b), outs(b);
    for (uint32_t s = 0; s < b; ++s) {
      graphs[s] = &entries[s].runner->stage(i).graph();
      positions[s] = &st.positions[s];
      outs[s] = &st.attention_out[s];
    }
    vk::CommandStream& stream = st.stream;
    stream.begin();
    if (st.graph.embeds()) {
      std::vector<int32_t> ids(b);
      for (uint32_t s = 0; s < b; ++s) ids[s] = entries[s].token;
      st.ids_io.write(0, ids.data(), uint64_t(b) * 4);
      st.ids_io.record_upload(stream, uint64_t(b) * 4);
    } else {
      st.x_io.write(0, hidden.data(), hidden_bytes);
      st.x_io.record_upload(stream, hidden_bytes);
    }
    // Every layer of a stream has the same open length (pieces never cross a segment's end).
    for (uint32_t s = 0; s < b; ++s)
      stream.fill(vk::BufferRange::whole(st.positions[s]), graphs[s]->first_attention().open_tokens());
    const BatchIO io{&st.ids_io.device_buffer(), &st.x_io.device_buffer(), &st.logits, &st.ranked_io.device_buffer(),
                     kRankedRowBytes, k, positions, outs};
    st.graph.record_batch(stream, io, graphs);
    if (st.graph.has_head()) {
      // Each stream's logits where its head stage keeps its last ones (row 0), for a whole row later.
      const uint64_t row = uint64_t(config_.vocab) * 4;
      for (uint32_t s = 0; s < b; ++s)
        stream.copy({&st.logits, s * row, row}, {&entries[s].runner->stage(i).logits_buffer(), 0, row});
      st.ranked_io.record_download(stream, uint64_t(b) * kRankedRowBytes);
    } else {
      st.x_io.record_download(stream, hidden_bytes);
    }
    stream.end();
    stream.submit_and_wait();
    if (!st.graph.has_head()) {
      hidden.resize(size_t(b) * size_t(config_.embd));
      st.x_io.read(0, hidden.data(), hidden_bytes);
    }
  }
  for (const Entry& e : entries) e.runner->took_batched_token();
  std::vector<uint32_t> pairs(size_t(b) * kRankedRowBytes / 4);
  stages_.back()->ranked_io.read(0, pairs.data(), pairs.size() * 4);
  std::vector<std::vector<ops::RankedLogit>> out(b);
  for (uint32_t s = 0; s < b; ++s) out[s] = ops::TopK::unpack(pairs.data() + s * kRankedRowBytes / 4, k);
  return out;
}

}  // namespace infini::model
