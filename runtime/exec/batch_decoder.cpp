#include "exec/batch_decoder.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "infini/error.hpp"

namespace infini::model {
namespace {

// A row of the ranked pairs: the deepest ranking, and a multiple of every device's storage
// buffer offset alignment (at most 256), so each row binds at its own offset.
constexpr uint64_t kRankedRowBytes = ops::TopK::kMaxK * 8;
static_assert(kRankedRowBytes % 256 == 0);

vk::Buffer words(vk::Device& device, uint64_t count, const char* label) {
  return vk::Buffer(device, std::max<uint64_t>(count, 1) * 4, vk::MemoryUse::DeviceLocal, label);
}

}  // namespace

BatchDecoder::BatchDecoder(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
                           const GraphOptions& options, uint32_t max_batch)
    : device_(device),
      config_(config),
      max_batch_(max_batch),
      graph_(device, std::move(weights), config, options, max_batch, /*attention_state=*/false),
      ids_io_(device, uint64_t(max_batch) * 4, vk::StagingDirection::ToDevice, "batch token ids"),
      ranked_io_(device, uint64_t(max_batch) * kRankedRowBytes, vk::StagingDirection::FromDevice,
                 "batch ranked logits"),
      x_(words(device, uint64_t(max_batch) * config.embd, "batch hidden x")),
      logits_(words(device, uint64_t(max_batch) * config.vocab, "batch logits")),
      stream_(device) {
  if (max_batch == 0) throw Error("model: a batched step takes at least one stream");
  positions_.reserve(max_batch);
  attention_out_.reserve(max_batch);
  for (uint32_t i = 0; i < max_batch; ++i) {
    positions_.push_back(words(device, 1, "batch open tokens"));
    attention_out_.push_back(words(device, uint64_t(config.heads) * config.head_dim, "batch attention out"));
  }
}

BatchDecoder::~BatchDecoder() = default;

void BatchDecoder::check(std::span<const Entry> entries, uint32_t k) const {
  if (entries.empty() || entries.size() > max_batch_)
    throw Error("model: a batched step of " + std::to_string(entries.size()) + " streams; it takes 1.." +
                std::to_string(max_batch_));
  if (k == 0 || k > ops::TopK::kMaxK)
    throw Error("model: a device ranking takes 1.." + std::to_string(ops::TopK::kMaxK) + " logits, got " +
                std::to_string(k));
  std::set<const LayerStage*> seen;
  for (const Entry& e : entries) {
    if (!seen.insert(e.stage).second) throw Error("model: a stream joins a batched step twice");
    if (e.token < 0 || e.token >= config_.vocab)
      throw Error("model: token id " + std::to_string(e.token) + " is outside the vocabulary of " +
                  std::to_string(config_.vocab));
    if (&e.stage->device() != &device_ || &e.stage->graph().weights() != &graph_.weights())
      throw Error("model: a batched step's streams must run its weights on its device");
    if (e.stage->in_flight()) throw Error("model: a stream with a piece in flight cannot join a batched step");
  }
}

std::vector<std::vector<ops::RankedLogit>> BatchDecoder::step(std::span<const Entry> entries, uint32_t k) {
  check(entries, k);
  const uint32_t b = uint32_t(entries.size());
  std::vector<int32_t> ids(b);
  std::vector<LlamaGraph*> graphs(b);
  for (uint32_t i = 0; i < b; ++i) {
    ids[i] = entries[i].token;
    graphs[i] = &entries[i].stage->graph();
  }
  ids_io_.write(0, ids.data(), uint64_t(b) * 4);
  std::vector<const vk::Buffer*> positions(b), outs(b);
  stream_.begin();
  ids_io_.record_upload(stream_, uint64_t(b) * 4);
  for (uint32_t i = 0; i < b; ++i) {
    positions[i] = &positions_[i];
    outs[i] = &attention_out_[i];
    // Every layer of a stream has the same open length (pieces never cross a segment's end).
    stream_.fill(vk::BufferRange::whole(positions_[i]), graphs[i]->first_attention().open_tokens());
  }
  const BatchIO io{&ids_io_.device_buffer(), &x_, &logits_, &ranked_io_.device_buffer(), kRankedRowBytes, k,
                   positions, outs};
  graph_.record_batch(stream_, io, graphs);
  // Each stream's logits where its stage keeps its last ones (row 0), for a whole row read later.
  const uint64_t row = uint64_t(config_.vocab) * 4;
  for (uint32_t i = 0; i < b; ++i)
    stream_.copy({&logits_, i * row, row}, {&entries[i].stage->logits_buffer(), 0, row});
  ranked_io_.record_download(stream_, uint64_t(b) * kRankedRowBytes);
  stream_.end();
  stream_.submit_and_wait();
  for (const Entry& e : entries) e.stage->took_batched_token();
  std::vector<uint32_t> pairs(size_t(b) * kRankedRowBytes / 4);
  ranked_io_.read(0, pairs.data(), pairs.size() * 4);
  std::vector<std::vector<ops::RankedLogit>> out(b);
  for (uint32_t i = 0; i < b; ++i) out[i] = ops::TopK::unpack(pairs.data() + i * kRankedRowBytes / 4, k);
  return out;
}

}  // namespace infini::model
