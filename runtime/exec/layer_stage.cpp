#include "exec/layer_stage.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <string_view>

#include "infini/error.hpp"
#include "exec/layer_stage_scratch.hpp"
#include "exec/llama_runner.hpp"
#include "vk/device.hpp"
#include "vk/staged_buffer.hpp"
#include "vk/transfer.hpp"

namespace infini::model {
namespace {

// A chain's draws hold a uniform for each step but the last (whose token the host picks).
static_assert(LayerStage::kMaxChain - 1 <= ops::PickToken::kMaxSteps);

}  // namespace

LayerStage::LayerStage(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
                       const RunnerOptions& options, HiddenSlots slots)
    : device_(device), config_(config), range_(weights->range()), slots_(std::move(slots)),
      max_piece_(options.max_piece),
      time_kernels_(options.time_kernels) {
  if ((embeds() && receives_shared()) || (has_head() && sends_shared()))
    throw Error("model: the first stage receives no hidden states and the last passes none on");
  graph_ = std::make_unique<LlamaGraph>(device, std::move(weights), config_, options, max_piece_);
  if (has_head()) pick_ = std::make_unique<ops::PickToken>(device);
  scratch_ = std::make_unique<Scratch>(device, config_, max_piece_, embeds(), has_head(), slots_, slot_count());
  stream_ = std::make_unique<vk::CommandStream>(device, timestamp_capacity());
}

LayerStage::~LayerStage() = default;

uint32_t LayerStage::timestamp_capacity() const noexcept { return kTimestamps + (time_kernels_ ? kTimedDispatches : 0); }

std::string LayerStage::describe() const {
  return "'" + device_.caps().name + "' (layers " + std::to_string(range_.first) + "-" +
         std::to_string(range_.last - 1) + ")";
}

uint32_t LayerStage::segment_room() const { return graph_->segment_room(); }

PieceIO LayerStage::piece_io(uint32_t slot) const {
  const Scratch& s = *scratch_;
  return {&s.ids_io[slot].device_buffer(), &s.x, &s.position_io[slot].device_buffer(), &s.logits,
          &s.ranked_io.device_buffer()};
}

void LayerStage::reset() {
  last_row_.reset();
  chain_left_ = 0;
  stream_->begin();
  graph_->record_reset(*stream_);
  stream_->end();
  stream_->submit_and_wait();
}

std::vector<ops::LayerSnapshot> LayerStage::snapshot() const { return graph_->snapshot(); }

bool LayerStage::fits(std::span<const ops::LayerSnapshot> layers) const { return graph_->fits(layers); }

void LayerStage::restore(std::span<const ops::LayerSnapshot> layers) {
  last_row_.reset();
  chain_left_ = 0;
  graph_->restore(layers);
}

size_t LayerStage::slot_count() const noexcept { return std::max<size_t>({slots_.in.size(), slots_.out.size(), 1}); }

void LayerStage::run(std::span<const int32_t> tokens, std::span<const float> hidden_in, const HeadOutput& head,
                     std::vector<float>* hidden_out, uint32_t slot) {
  submit(tokens, hidden_in, head, slot);
  finish(hidden_out);
}

void LayerStage::release_next(uint64_t ticket) noexcept {
  if (!slots_.ready_out && !slots_.token_ready_out) return;
  try {
    device_.wait_idle();
  } catch (const std::exception&) {  // a lost device signals nothing more either
  }
  if (slots_.ready_out) slots_.ready_out->release(ticket);
  if (slots_.token_ready_out) slots_.token_ready_out->release(ticket);
}

bool LayerStage::can_submit_ahead() const noexcept {
  if (pending_.empty()) return true;
  // Another piece in flight needs inputs and outputs the host does not touch in between: its own
  // slot of host-written inputs, hidden states through shared memory, and no logits of the
  // piece before still to be read.
  const Pending& last = pending_.back();
  return pending_.size() < slot_count() && (embeds() || receives_shared()) && (has_head() || sends_shared()) &&
         ((last.head.rows == 0 && last.head.top_k == 0) || last.chain_row != 0);
}

vk::SignalToken LayerStage::submit(std::span<const int32_t> tokens, std::span<const float> hidden_in,
                                   const HeadOutput& head, uint32_t slot, uint64_t ticket, vk::SignalToken ready,
                                   ChainStep* chain) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t0 = Clock::now();
  const uint32_t rows = head.rows, top_k = head.top_k;
  if (!can_submit_ahead()) throw Error("model: a piece is still in flight that the next one's inputs would overwrite");
  if ((rows || top_k) && !has_head()) throw Error("model: only the stage with the head computes logits");
  if (top_k && (rows != 1 || top_k > ops::TopK::kMaxK))
    throw Error("model: a device ranking is of the last row's logits, at most " + std::to_string(ops::TopK::kMaxK) +
                " of them");
  const uint32_t n = uint32_t(tokens.size());
  const uint64_t hidden_bytes = uint64_t(n) * uint64_t(config_.embd) * 4;
  if (!embeds() && !receives_shared() && hidden_in.size() != size_t(n) * size_t(config_.embd))
    throw Error("model: " + std::to_string(hidden_in.size()) + " hidden values for a piece of " + std::to_string(n) +
                " tokens");
  if (slot >= slot_count())
    throw Error("model: hand-off slot " + std::to_string(slot) + " of " + std::to_string(slot_count()));
  if ((slots_.ready_in || slots_.ready_out) && ticket == 0)
    throw Error("model: a piece handed on through a shared signal needs its ticket");
  if (slots_.ready_in && ready.ticket() != ticket)
    throw Error("model: piece " + std::to_string(ticket) + " came without the signal of the stage before it");
  // A chain step after the first takes its token from the ring on the embedding stage.
  const bool from_ring = chain && chain->index > 0 && embeds();
  // A chain's head keeps each step's pick (head.ranked), and at its last step the ranking (head.ranked)
  // or, drawing from whole rows (top_k 0), the row (head.logits).
  const bool wants_row = chain && chain->last && top_k == 0;
  if (chain && (n != 1 || (has_head() && (rows != 1 || (wants_row ? !head.logits : !head.ranked))) ||
                chain->index >= kMaxChain ||
                ((embeds() || has_head()) && !on_token_ring())))
    throw Error("model: a chain's step is one token through stages on the token ring, ranked on the head stage");
  if (from_ring && chain->token_ready.ticket() == 0)
    throw Error("model: chain step " + std::to_string(chain->index) + " came without the ring's signal");
  Scratch& s = *scratch_;
  const auto h0 = Clock::now();
  if (embeds()) {
    if (!from_ring) s.ids_io[slot].write(0, tokens.data(), tokens.size_bytes());
  } else if (!receives_shared()) {
    s.x_io.write(0, hidden_in.data(), hidden_bytes);
  }
  const double host_in_s = seconds(h0, Clock::now());
  const ops::InfiniAttentionLayer& first = graph_->first_attention();
  const uint32_t open = first.open_tokens();
  s.position_io[slot].write(0, &open, 4);
  const uint32_t chain_row = chain ? chain->index + 1 : 0;
  const bool chain_last = chain && chain->last;
  const PieceShape shape{n,    rows, top_k, first.segments_written() == 0, n == first.segment_room(), slot, chain_row,
                         chain_last};
  double record_s = 0;
  const auto cached = recorded_.find(shape);
  std::unique_ptr<vk::CommandStream> fresh;
  vk::CommandStream* ran = &recording(cached != recorded_.end() ? cached->second.get() : nullptr,
                                      recorded_.size() < kMaxRecordedPieces ? &fresh : nullptr, n, record_s,
                                      [&](vk::CommandStream& stream) {
    stream.timestamp("start");
    s.position_io[slot].record_upload(stream, 4);
    if (from_ring) record_chain_step_in(stream, chain->index, slot);
    else if (embeds()) s.ids_io[slot].record_upload(stream, uint64_t(n) * 4);
    else record_hidden_in(stream, hidden_bytes, slot);
    stream.timestamp("inputs");
    stream.time_dispatches(time_kernels_);
    graph_->record_piece(stream, piece_io(slot), n, rows, top_k, chain && has_head() ? chain->index : 0);
    stream.time_dispatches(false);
    stream.timestamp("outputs");
    if (chain && has_head()) record_chain_step_out(stream, *chain, slot, top_k);
    else if (top_k) s.ranked_io.record_download(stream, uint64_t(top_k) * 8);
    else if (rows) s.logits_io.record_download(stream, uint64_t(rows) * uint64_t(config_.vocab) * 4);
    if (!has_head()) record_hidden_out(stream, hidden_bytes, slot);
    stream.timestamp("end");
  });
  if (fresh) recorded_.emplace(shape, std::move(fresh));
  // The piece's hidden states come from (and go to) a device that the GPU orders this one after
  // (before): the submission waits for them there, and signals when its own are ready.
  // A chain step's token comes the same way from the head stage round the ring (the embedding
  // stage, which receives no hidden states), and goes back from the head stage (which passes none on).
  vk::SharedSignal* const wait_on = slots_.ready_in ? slots_.ready_in : from_ring ? slots_.token_ready_in : nullptr;
  vk::SharedSignal* const signal_to =
      slots_.ready_out ? slots_.ready_out : chain && has_head() ? slots_.token_ready_out : nullptr;
  std::array<vk::SemaphoreValue, 1> waits, signals;
  const size_t wait_count = wait_on ? 1 : 0, signal_count = signal_to ? 1 : 0;
  if (wait_on) waits[0] = wait_on->wait(slots_.ready_in ? std::move(ready) : std::move(chain->token_ready), slot);
  if (signal_to) signals[0] = signal_to->signal(ticket);
  const auto t_submit = Clock::now();
  ran->submit(std::span(waits).first(wait_count), std::span(signals).first(signal_count));
  const auto t_submitted = Clock::now();
  pending_.push_back({ran, head, n, 0, chain_row, nullptr, chain_last, record_s, host_in_s, seconds(t0, t_submitted),
                      seconds(t_submit, t_submitted), t_submit});
  if (!signal_to) return {};
  try {
    vk::SignalToken handed = signal_to->handed(ticket);
    // Exporting a sync file is submission work too (and some drivers wait for the piece there).
    const auto t_handed = Clock::now();
    pending_.back().before_submit_s = seconds(t0, t_handed);
    pending_.back().submit_s = seconds(t_submit, t_handed);
    return handed;
  } catch (const std::exception&) {
    // Nothing to hand on: the piece goes no further. It runs out, is forgotten (the caller counts
    // it as not submitted), and the signal gets a fresh semaphore, the old one being signalled.
    pending_.pop_back();
    try {
      device_.wait_idle();
      signal_to->renew();
    } catch (const std::exception&) {  // the first failure is the one to report
    }
    throw;
  }
}

void LayerStage::finish(std::vector<float>* hidden_out) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  if (pending_.empty()) throw Error("model: no piece in flight to finish");
  if (hidden_out && (has_head() || sends_shared()))
    throw Error("model: this stage passes on no hidden states through the host");
  const Pending p = pending_.front();
  pending_.pop_front();
  const auto t_wait = Clock::now();
  p.stream->wait();
  const auto t_done = Clock::now();
  // The device's time for this piece: from its submission (or, when the piece before still ran
  // then, from that one's end) to the host seeing it done, or less by its timestamps.
  double device_s = seconds(std::max(p.submitted, last_done_), t_done), upload_s = 0, download_s = 0;
  last_done_ = t_done;
  if (const auto samples = p.stream->timestamps(); samples.size() >= kTimestamps) {
    // start, inputs, (a timestamp per dispatch when timing kernels,) outputs, end
    const auto ns_at = [&](std::string_view label) {
      const auto it =
          std::find_if(samples.begin(), samples.end(), [&](const vk::TimestampSample& t) { return t.label == label; });
      return it != samples.end() ? it->ns : 0.0;  // every piece's recording has them; never past the end
    };
    device_s = std::min(device_s, samples.back().ns * 1e-9);
    upload_s = ns_at("inputs") * 1e-9;
    download_s = (samples.back().ns - ns_at("outputs")) * 1e-9;
    if (time_kernels_) dispatch_profile_.add(samples);
  }
  if (timeline_) {
    const double end = std::chrono::duration<double>(t_done.time_since_epoch()).count();
    timeline_->push_back({end - device_s, end});
  }
  const uint32_t rows = p.head.rows, top_k = p.head.top_k;
  if (rows) last_row_ = p.chain ? p.chain - 1 : p.chain_row ? p.chain_row - 1 : rows - 1;
  chain_left_ = p.chain ? p.chain - 1 : 0;
  Scratch& s = *scratch_;
  const auto h1 = Clock::now();
  if (p.chain > 1) s.chain_ranked_io->read(0, p.picks, uint64_t(p.chain - 1) * 8);
  const uint64_t row_bytes = uint64_t(config_.vocab) * 4;
  if (p.chain && top_k == 0) s.logits_io.read((p.chain - 1) * row_bytes, p.head.logits, row_bytes);
  else if (p.chain_row && has_head() && p.chain_last && top_k == 0)
    s.logits_io.read((p.chain_row - 1) * row_bytes, p.head.logits, row_bytes);
  else if (p.chain_row && has_head() && !p.chain_last)
    s.chain_ranked_io->read(uint64_t(p.chain_row - 1) * 8, p.head.ranked, 8);
  else if (top_k) s.ranked_io.read(0, p.head.ranked, uint64_t(top_k) * 8);
  else if (rows) s.logits_io.read(0, p.head.logits, uint64_t(rows) * uint64_t(config_.vocab) * 4);
  if (hidden_out) {
    const uint64_t hidden_bytes = uint64_t(p.n) * uint64_t(config_.embd) * 4;
    hidden_out->resize(size_t(p.n) * size_t(config_.embd));
    s.x_io.read(0, hidden_out->data(), hidden_bytes);
  }
  const auto t_end = Clock::now();
  // wall_s: the host's own time on the piece (before its submission, and from the wait on).
  profile_ += {std::max<int64_t>(p.chain, 1),
               p.before_submit_s + seconds(t_wait, t_end),
               p.record_s,
               p.submit_s + seconds(t_wait, t_done),
               device_s,
               p.host_in_s,
               seconds(h1, t_end),
               upload_s,
               download_s,
               int64_t(p.stream->dispatch_count()),
               int64_t(p.stream->barrier_count())};
}

const vk::Buffer& LayerStage::logits_buffer() const {
  if (!has_head()) throw Error("model: only the stage with the head has logits");
  return scratch_->logits;
}

std::vector<float> LayerStage::last_logits() const {
  if (!has_head() || !last_row_) throw Error("model: no logits computed yet");
  const uint64_t vocab = uint64_t(config_.vocab);
  std::vector<float> out(vocab);
  // A rare read (after a ranking-only decode): a one-off staging copy where memory is not mapped.
  vk::download(scratch_->logits, *last_row_ * vocab * 4, out.data(), vocab * 4);
  return out;
}

void LayerStage::record_hidden_in(vk::CommandStream& stream, uint64_t bytes, uint32_t slot) {
  if (!receives_shared()) return scratch_->x_io.record_upload(stream, bytes);
  const vk::Buffer& in = *slots_.in[slot];
  stream.acquire_external(whole(in));
  stream.copy({&in, 0, bytes}, {&scratch_->x, 0, bytes});
}

void LayerStage::record_hidden_out(vk::CommandStream& stream, uint64_t bytes, uint32_t slot) {
  if (!sends_shared()) return scratch_->x_io.record_download(stream, bytes);
  const vk::Buffer& out = *slots_.out[slot];
  stream.copy({&scratch_->x, 0, bytes}, {&out, 0, bytes});
  stream.release_external(whole(out));
}

}  // namespace infini::model
