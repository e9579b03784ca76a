#include "exec/llama_runner.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <string>

#include "infini/error.hpp"
#include "exec/layer_split.hpp"
#include "model/llama_weights_check.hpp"
#include "vk/device.hpp"
#include "vk/shared_signal.hpp"

namespace infini::model {

LlamaRunner::LlamaRunner(vk::Device& device, const LlamaWeights& weights, const RunnerOptions& options)
    : LlamaRunner(std::array<vk::Device*, 1>{&device}, weights, options) {}

LlamaRunner::LlamaRunner(std::span<vk::Device* const> devices, const LlamaWeights& weights,
                         const RunnerOptions& options, std::span<const int64_t> layers_per_device,
                         DeviceWeightCache* cache)
    : config_((check_llama_weights(weights), weights.config)), options_(options) {
  if (options.max_piece < 1) throw Error("model: max_piece must be >= 1");
  if (options.decode_chain > LayerStage::kMaxChain)
    throw Error("model: decode_chain must be 0 (the device's choice) to " + std::to_string(LayerStage::kMaxChain) +
                ", got " + std::to_string(options.decode_chain));
  if (devices.empty()) throw Error("model: no devices given");
  options_.infini.rope = config_.rope;
  auto by_memory = [&] { return layers_for_devices(devices, config_.layers); };
  const std::vector<int64_t> counts =
      !layers_per_device.empty() ? std::vector<int64_t>(layers_per_device.begin(), layers_per_device.end())
      : cache                    ? cache->split(devices, by_memory)
                                 : by_memory();
  int64_t sum = 0;
  bool negative = false;
  for (int64_t c : counts) {
    negative |= c < 0;
    sum += c;
  }
  if (negative || counts.size() != devices.size() || sum != config_.layers)
    throw Error("model: the split gives " + std::to_string(sum) + " layers to " + std::to_string(counts.size()) +
                " devices; the model has " + std::to_string(config_.layers) + " layers and " +
                std::to_string(devices.size()) + " devices are given");
  // Each activation buffer of a piece must fit one buffer of every device: fewer tokens per piece
  // on devices with small limits (the outputs do not change, only the number of submissions).
  for (size_t i = 0; i < devices.size(); ++i)
    if (counts[i] > 0) options_.max_piece = max_piece_for(*devices[i], config_, options_.max_piece);
  // The devices that get layers, and how hidden states pass between neighbours: through memory
  // both share where they can, one slot per piece the pipeline keeps in flight.
  std::vector<size_t> used;
  for (size_t i = 0; i < devices.size(); ++i)
    if (counts[i] > 0) used.push_back(i);
  const size_t in_flight = 2 * used.size();
  std::vector<HiddenSlots> slots(used.size());
  for (size_t u = 0; u + 1 < used.size(); ++u) {
    vk::Device &producer = *devices[used[u]], &consumer = *devices[used[u + 1]];
    const std::vector<Handoff> candidates = handoff_candidates(options.handoff, producer, consumer);
    for (Handoff kind : candidates) {
      const auto sharing = sharing_of(kind);
      if (!sharing) {
        handoffs_.push_back(kind);
        break;
      }
      const size_t kept = shared_.size();
      try {
        for (size_t k = 0; k < in_flight; ++k) {
          const uint64_t bytes = uint64_t(options_.max_piece) * uint64_t(config_.embd) * 4;
          shared_.push_back(std::make_unique<vk::SharedBuffer>(producer, consumer, bytes, *sharing,
                                                               "hidden hand-off " + std::to_string(k)));
        }
      } catch (const Error&) {
        shared_.resize(kept);  // the driver would not share after all: the next kind, or the error if forced
        if (kind == candidates.back()) throw;
        continue;
      }
      for (size_t k = kept; k < shared_.size(); ++k) {
        slots[u].out.push_back(&shared_[k]->producer_side());
        slots[u + 1].in.push_back(&shared_[k]->consumer_side());
      }
      handoffs_.push_back(kind);
      break;
    }
    HandoffWait wait = choose_handoff_wait(options.handoff_wait, handoffs_.back(), producer, consumer);
    if (const auto signal = signal_of(wait)) {
      try {
        signals_.push_back(std::make_unique<vk::SharedSignal>(producer, consumer, *signal, in_flight));
        slots[u].ready_out = slots[u + 1].ready_in = signals_.back().get();
      } catch (const Error&) {
        // The driver would not share the signal after all: the host orders them, unless forced.
        if (handoff_wait_forced(options.handoff_wait)) throw;
        wait = HandoffWait::Host;
      }
    }
    handoff_waits_.push_back(wait);
  }
  // Greedy chains over the stages need a way back for each step's best token, from the head's
  // device to the embedding's, ordered on the devices as the hidden states are: only where every
  // hand-off is through shared memory with the devices waiting for each other, and where the
  // last device can share memory and a signal with the first. Elsewhere decode goes token by token.
  const bool device_ordered = used.size() > 1 && signals_.size() == used.size() - 1 &&
                              std::all_of(handoffs_.begin(), handoffs_.end(),
                                          [](Handoff h) { return sharing_of(h).has_value(); });
  if (device_ordered) {
    vk::Device &head = *devices[used.back()], &embedding = *devices[used.front()];
    const size_t kept_buffers = shared_.size();
    try {
      for (size_t k = 0; k < in_flight; ++k)
        shared_.push_back(std::make_unique<vk::SharedBuffer>(head, embedding, 16, *sharing_of(handoffs_.front()),
                                                             "token ring " + std::to_string(k)));
      signals_.push_back(std::make_unique<vk::SharedSignal>(head, embedding, signals_.front()->kind(), in_flight));
      for (size_t k = kept_buffers; k < shared_.size(); ++k) {
        slots.back().token_out.push_back(&shared_[k]->producer_side());
        slots.front().token_in.push_back(&shared_[k]->consumer_side());
      }
      slots.back().token_ready_out = slots.front().token_ready_in = signals_.back().get();
    } catch (const Error&) {
      shared_.resize(kept_buffers);  // no ring: these devices decode token by token
    }
  }
  int64_t first = 0;
  for (size_t u = 0; u < used.size(); ++u) {
    const size_t i = used[u];
    const LayerRange range{first, first + counts[i]};
    try {
      std::shared_ptr<const DeviceWeights> copy =
          cache ? cache->get(*devices[i], weights, range, options_.tune, &options_.infini)
                : std::make_shared<const DeviceWeights>(*devices[i], weights, range, options_.tune, &options_.infini);
      stages_.push_back(std::make_unique<LayerStage>(*devices[i], std::move(copy), config_, options_, std::move(slots[u])));
    } catch (const std::exception& e) {  // name the device and its layers when there are several
      if (devices.size() == 1) throw;
      throw Error("device '" + devices[i]->caps().name + "' (layers " + std::to_string(range.first) + "-" +
                  std::to_string(range.last - 1) + "): " + e.what());
    }
    first += counts[i];
  }
  if (stages_.size() > 1) {
    std::vector<LayerStage*> raw;
    for (auto& st : stages_) raw.push_back(st.get());
    pipeline_ = std::make_unique<StagePipeline>(raw, in_flight);
  }
}

LlamaRunner::~LlamaRunner() = default;

size_t LlamaRunner::recorded_pieces() const noexcept { return stages_.front()->recorded_pieces(); }

StageProfile LlamaRunner::profile() const noexcept {
  StageProfile sum;
  for (const auto& s : stages_) sum += s->profile();
  return sum;
}

vk::DispatchProfile LlamaRunner::dispatch_profile() const {
  vk::DispatchProfile sum;
  for (const auto& s : stages_) sum += s->dispatch_profile();
  return sum;
}

std::vector<LlamaRunner::StageInfo> LlamaRunner::stages() const {
  std::vector<StageInfo> out;
  for (const auto& s : stages_) out.push_back({&s->device(), s->range()});
  return out;
}

std::vector<StageProfile> LlamaRunner::stage_profiles() const {
  std::vector<StageProfile> out;
  for (const auto& s : stages_) out.push_back(s->profile());
  return out;
}

std::vector<HandoffProfile> LlamaRunner::handoff_profiles() const {
  return pipeline_ ? pipeline_->handoffs() : std::vector<HandoffProfile>(stages_.size());
}

void LlamaRunner::record_timeline(bool on) {
  timeline_.assign(stages_.size(), {});
  for (size_t i = 0; i < stages_.size(); ++i) stages_[i]->record_timeline(on ? &timeline_[i] : nullptr);
}

std::vector<std::vector<BusyInterval>> LlamaRunner::timeline() {
  std::vector<std::vector<BusyInterval>> out(stages_.size());
  if (timeline_.size() == stages_.size())
    for (size_t i = 0; i < stages_.size(); ++i) out[i].swap(timeline_[i]);
  return out;
}

void LlamaRunner::reset() {
  for (auto& s : stages_) s->reset();
  tokens_seen_ = 0;
}

stream::StateFingerprint LlamaRunner::fingerprint() const {
  const LlamaConfig& c = config_;
  const InfiniOptions& o = options_.infini;
  return {c.vocab, c.embd, c.layers, c.heads, c.heads_kv, c.head_dim, c.ffn, o.segment,
          uint32_t(o.update), uint32_t(o.first_segment), uint32_t(o.gate_sign), o.memory ? 1u : 0u,
          uint32_t(ElementType::F32), o.sliding ? o.sinks : -1};
}

stream::SessionState LlamaRunner::save_state() const {
  stream::SessionState state;
  state.fingerprint = fingerprint();
  state.tokens_seen = tokens_seen_;
  for (const auto& s : stages_)
    for (ops::LayerSnapshot& l : s->snapshot()) state.layers.push_back(std::move(l));
  return state;
}

void LlamaRunner::restore_state(const stream::SessionState& state) {
  if (!(state.fingerprint == fingerprint()))
    throw Error("model: the saved state is for " + state.fingerprint.describe() + "; this session is " +
                fingerprint().describe());
  const std::span<const ops::LayerSnapshot> layers(state.layers);
  auto part = [&](const LayerStage& s) { return layers.subspan(size_t(s.range().first), size_t(s.range().count())); };
  for (const auto& s : stages_)
    if (state.layers.size() != size_t(config_.layers) || !s->fits(part(*s)))
      throw Error("model: the saved state of layers " + std::to_string(s->range().first) + "-" +
                  std::to_string(s->range().last - 1) + " does not fit");
  for (auto& s : stages_) s->restore(part(*s));
  tokens_seen_ = state.tokens_seen;
}

std::vector<float> LlamaRunner::forward(std::span<const int32_t> tokens, bool all_logits) {
  std::vector<float> logits(all_logits ? tokens.size() * size_t(config_.vocab) : size_t(config_.vocab));
  run(tokens, all_logits, 0, logits.data(), nullptr);
  return logits;
}

std::vector<ops::RankedLogit> LlamaRunner::forward_ranked(std::span<const int32_t> tokens, uint32_t k) {
  if (k == 0 || k > ops::TopK::kMaxK)
    throw Error("model: a device ranking takes 1.." + std::to_string(ops::TopK::kMaxK) + " logits, got " +
                std::to_string(k));
  std::vector<uint32_t> pairs(size_t(k) * 2);
  run(tokens, false, k, nullptr, pairs.data());
  return ops::TopK::unpack(pairs.data(), k);
}

std::vector<ops::RankedLogit> LlamaRunner::forward_greedy(int32_t first, uint32_t steps) {
  // Greedy picks are each step's best pair: the picks, then the last step's best, in step order.
  ChainPicks chain = forward_sampled(first, steps, ops::PickToken::Draws{}, 1);
  chain.picks.push_back(chain.last.at(0));
  return chain.picks;
}

LlamaRunner::ChainPicks LlamaRunner::forward_sampled(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws,
                                                     uint32_t k) {
  if (decode_chain() == 0)
    throw Error("model: decoding ahead on the device needs the model on one device, or devices that pass "
                "tokens back to the first on the device");
  if (steps == 0 || steps > chain_room())
    throw Error("model: a chain of " + std::to_string(steps) + " steps; this stream takes 1.." +
                std::to_string(chain_room()) + " now");
  if (first < 0 || first >= config_.vocab)
    throw Error("model: token id " + std::to_string(first) + " is outside the vocabulary of " +
                std::to_string(config_.vocab));
  // Refused before any stage has started (a pipeline's head would refuse after the others moved on).
  if (k > ops::TopK::kMaxK || (k == 0 && !draws_rows_ahead()))
    throw Error("model: a chain's steps rank 1.." + std::to_string(ops::TopK::kMaxK) +
                " logits, or draw from whole rows of at most " + std::to_string(ops::PickToken::kMaxRow) + "; got k " +
                std::to_string(k) + " of " + std::to_string(config_.vocab));
  std::vector<uint32_t> picks(size_t(steps - 1) * 2), last(size_t(k) * 2);
  ChainPicks out;
  if (k == 0) out.last_row.resize(size_t(config_.vocab));
  const auto t0 = std::chrono::steady_clock::now();
  if (pipeline_) {
    pipeline_->run_chain(first, steps, draws, k, picks.data(), last.data(), out.last_row.data());
    for (auto& stage : stages_) stage->allow_take_back(steps - 1);
  } else {
    LayerStage& stage = *stages_.front();
    stage.submit_chain(first, steps, draws, k, picks.data(), last.data(), out.last_row.data());
    stage.finish(nullptr);
  }
  token_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  tokens_seen_ += int64_t(steps);
  for (uint32_t i = 0; i + 1 < steps; ++i)
    out.picks.push_back({std::bit_cast<float>(picks[2 * i]), int32_t(picks[2 * i + 1])});
  if (k) out.last = ops::TopK::unpack(last.data(), k);
  return out;
}

bool LlamaRunner::draws_rows_ahead() const noexcept { return config_.vocab <= int64_t(ops::PickToken::kMaxRow); }

namespace {
// The largest power of two that is at most `most` (at least 1): chain lengths a stream replays.
uint32_t power_of_two_at_most(double most) noexcept {
  uint32_t steps = 1;
  while (double(steps) * 2 <= most) steps *= 2;
  return steps;
}
}  // namespace

uint32_t auto_decode_chain(bool cpu_driver, double token_seconds) noexcept {
  if (cpu_driver || token_seconds <= 0) return 1;
  return power_of_two_at_most(std::min<double>(LayerStage::kMaxChain, kChainBurst / token_seconds));
}

uint32_t LlamaRunner::decode_chain() const noexcept {
  if (stages_.size() > 1 && !stages_.front()->on_token_ring()) return 0;
  if (options_.decode_chain) return options_.decode_chain;
  return auto_decode_chain(stages_.front()->device().caps().type == vk::DeviceType::Cpu, token_seconds_);
}

uint32_t LlamaRunner::chain_room() const noexcept {
  // Every stage's open segment has the same room (pieces never cross a boundary).
  return std::min(decode_chain(), stages_.front()->chain_room());
}

uint32_t LlamaRunner::chain_steps(int64_t wanted) const noexcept {
  if (wanted < 1) return 0;
  return power_of_two_at_most(double(std::min<int64_t>(chain_room(), wanted)));
}

uint32_t LlamaRunner::chain_steps(int64_t wanted, const Sampler& sampler) const noexcept {
  const std::optional<uint32_t> k = sampler.device_ranking();
  if (!k || (*k == 0 && !draws_rows_ahead())) return wanted < 1 ? 0 : 1;
  return chain_steps(wanted);
}

void LlamaRunner::take_back(uint32_t tokens) {
  // Each stage checks the same allowance; the first refuses before any has moved.
  for (auto& stage : stages_) stage->take_back(tokens);
  tokens_seen_ -= int64_t(tokens);
}

std::vector<float> LlamaRunner::last_logits() const { return stages_.back()->last_logits(); }

void LlamaRunner::took_batched_token() noexcept {
  for (const std::unique_ptr<LayerStage>& s : stages_) s->took_batched_token();
  ++tokens_seen_;
}

void LlamaRunner::run(std::span<const int32_t> tokens, bool all_logits, uint32_t top_k, float* logits,
                      uint32_t* ranked) {
  if (tokens.empty()) throw Error("model: no tokens to feed");
  for (int32_t t : tokens)
    if (t < 0 || t >= config_.vocab)
      throw Error("model: token id " + std::to_string(t) + " is outside the vocabulary of " +
                  std::to_string(config_.vocab));
  const size_t vocab = size_t(config_.vocab);
  // Pieces never cross a segment boundary: every layer's open segment has the same room.
  std::vector<Piece> pieces;
  size_t room = stages_.front()->segment_room();
  for (size_t done = 0; done < tokens.size();) {
    const size_t n = std::min({tokens.size() - done, room, size_t(options_.max_piece)});
    const bool last = done + n == tokens.size();
    Piece p{tokens.subspan(done, n), {}};
    p.head.rows = all_logits ? uint32_t(n) : (last ? 1u : 0u);
    if (p.head.rows) {
      p.head.logits = all_logits ? logits + done * vocab : logits;
      if (last && top_k) {
        p.head.top_k = top_k;
        p.head.ranked = ranked;
      }
    }
    pieces.push_back(p);
    done += n;
    room -= n;
    if (room == 0) room = ops::room_after_fill(options_.infini);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (pipeline_) {
    pipeline_->run(pieces);
  } else {
    for (const Piece& p : pieces) stages_.front()->run(p.tokens, {}, p.head, nullptr);
  }
  if (tokens.size() == 1) token_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tokens_seen_ += int64_t(tokens.size());
}

}  // namespace infini::model
