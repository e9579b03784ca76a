// LayerStage's decode chains: the commands of a chain in one submission (the whole model on one
// device) and of a chain's steps over several stages (the token ring).
#include "exec/layer_stage.hpp"

#include "exec/layer_stage_scratch.hpp"
#include "infini/error.hpp"

namespace infini::model {

uint32_t LayerStage::chain_room() const noexcept {
  const uint32_t room = segment_room();
  // Timing every kernel takes a timestamp per dispatch of every step: shorter chains then (a
  // layer records at most kMostLayerDispatches for a token, the head a few).
  const uint32_t timed = uint32_t(kTimedDispatches / (kMostLayerDispatches * graph_->layer_count() + 8));
  const uint32_t most = time_kernels_ ? std::clamp(timed, 1u, kMaxChain) : kMaxChain;
  return room <= 1 ? 0 : std::min({most, max_piece_, room - 1});
}

void LayerStage::submit_chain(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws, uint32_t k,
                              uint32_t* picks, uint32_t* ranked, float* last_row) {
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t0 = Clock::now();
  if (!embeds() || !has_head()) throw Error("model: a chain in one submission needs the whole model on one device");
  if (steps == 0 || steps > chain_room())
    throw Error("model: a chain of " + std::to_string(steps) + " steps; " + describe() + " takes 1.." +
                std::to_string(chain_room()) + " now");
  if (k > ops::TopK::kMaxK || (k == 0 && (!last_row || config_.vocab > ops::PickToken::kMaxRow)))
    throw Error("model: a chain's steps rank 1.." + std::to_string(ops::TopK::kMaxK) +
                " logits, or draw from whole rows of at most " + std::to_string(ops::PickToken::kMaxRow) + "; got k " +
                std::to_string(k) + " of " + std::to_string(config_.vocab));
  if (!pending_.empty()) throw Error("model: a chain starts with no piece in flight");
  Scratch& s = *scratch_;
  const ops::InfiniAttentionLayer& layer0 = graph_->first_attention();
  const uint32_t open = layer0.open_tokens();
  const auto h0 = Clock::now();
  s.ids_io[0].write(0, &first, 4);
  s.position_io[0].write(0, &open, 4);
  s.chain_draws_io->write(0, &draws, sizeof draws);
  const double host_in_s = seconds(h0, Clock::now());
  const ChainShape shape{steps, layer0.segments_written() == 0, k};
  double record_s = 0;
  const auto cached = chains_.find(shape);
  std::unique_ptr<vk::CommandStream> fresh;
  vk::CommandStream& ran =
      recording(cached != chains_.end() ? cached->second.get() : nullptr,
                chains_.size() < kMaxRecordedPieces ? &fresh : nullptr, steps, record_s,
                [&](vk::CommandStream& stream) { record_chain(stream, steps, k); });
  if (fresh) chains_.emplace(shape, std::move(fresh));
  const auto t_submit = Clock::now();
  ran.submit();
  const auto t_submitted = Clock::now();
  pending_.push_back({&ran, HeadOutput{1, last_row, k, ranked}, 1, steps, 0, picks, false, record_s, host_in_s,
                      seconds(t0, t_submitted), seconds(t_submit, t_submitted), t_submit});
}

void LayerStage::take_back(uint32_t tokens) {
  if (!pending_.empty()) throw Error("model: tokens are taken back with no piece in flight");
  if (tokens > chain_left_)
    throw Error("model: cannot take back " + std::to_string(tokens) + " tokens; the last decode chain left " +
                std::to_string(chain_left_));
  graph_->take_back(tokens);
  chain_left_ -= tokens;
  if (last_row_) *last_row_ -= tokens;  // the head stage's
}


void LayerStage::record_chain(vk::CommandStream& stream, uint32_t steps, uint32_t k) {
  Scratch& s = *scratch_;
  const vk::Buffer& ranked = s.ranked_io.device_buffer();
  const ops::PickToken::Feed feed{whole(s.ids_io[0].device_buffer()), whole(s.position_io[0].device_buffer())};
  stream.timestamp("start");
  s.position_io[0].record_upload(stream, 4);
  s.ids_io[0].record_upload(stream, 4);
  s.chain_draws_io->record_upload(stream, sizeof(ops::PickToken::Draws));
  stream.timestamp("inputs");
  stream.time_dispatches(time_kernels_);
  // Each step is a decode piece of one token (the same commands as submit()'s), its logits in a
  // row of their own (so that take_back can go back to any of them) and ranked; pick_token then
  // picks the next step's token from that ranking and moves the position on (the last step's
  // ranking goes to the host, which picks the token after the chain itself).
  // (k = 0: the next token is drawn from the step's whole row of logits, and the last row goes to
  // the host.)
  const vk::BufferRange draws = whole(s.chain_draws_io->device_buffer()), picks = whole(s.chain_ranked_io->device_buffer());
  const uint64_t vocab = uint64_t(config_.vocab);
  for (uint32_t i = 0; i < steps; ++i) {
    graph_->record_piece(stream, piece_io(0), 1, 1, k, i);
    if (i + 1 == steps) break;
    if (k) pick_->record(stream, whole(ranked), k, draws, i, picks, &feed);
    else pick_->record_row(stream, s.logits, i * vocab, uint32_t(vocab), draws, i, picks, &feed);
  }
  stream.time_dispatches(false);
  stream.timestamp("outputs");
  if (steps > 1) s.chain_ranked_io->record_download(stream, uint64_t(steps - 1) * 8);
  if (k) s.ranked_io.record_download(stream, uint64_t(k) * 8);
  else s.logits_io.record_download(stream, vocab * 4, (steps - 1) * vocab * 4);
  stream.timestamp("end");
}

void LayerStage::record_chain_step_in(vk::CommandStream& stream, uint32_t index, uint32_t slot) {
  // The head stage's best id of the step before, from the ring slot it used, as this step's token.
  const vk::Buffer& token = *slots_.token_in[(index - 1) % slots_.token_in.size()];
  stream.acquire_external(whole(token));
  stream.copy({&token, 0, 4}, {&scratch_->ids_io[slot].device_buffer(), 0, 4});
}

void LayerStage::set_chain_draws(const ops::PickToken::Draws& draws) {
  if (!has_head()) throw Error("model: only the head stage picks a chain's tokens");
  scratch_->chain_draws_io->write(0, &draws, sizeof draws);
}

void LayerStage::record_chain_step_out(vk::CommandStream& stream, const ChainStep& step, uint32_t slot,
                                       uint32_t top_k) {
  // The step's pick kept for the host and its id sent round the ring to the next step; the last
  // step's ranking (top_k 0: its row) goes to the host instead, which picks the token after the chain.
  Scratch& s = *scratch_;
  const vk::Buffer& ranked = s.ranked_io.device_buffer();
  const vk::Buffer& picks = s.chain_ranked_io->device_buffer();
  const vk::Buffer& token = *slots_.token_out[slot % slots_.token_out.size()];
  const uint64_t vocab = uint64_t(config_.vocab);
  if (step.last) {
    if (top_k) s.ranked_io.record_download(stream, uint64_t(top_k) * 8);
    else s.logits_io.record_download(stream, vocab * 4, step.index * vocab * 4);
    stream.copy({&ranked, 4, 4}, {&token, 0, 4});  // nothing takes it: the ring's slot stays handed over
  } else {
    if (step.index == 0) s.chain_draws_io->record_upload(stream, sizeof(ops::PickToken::Draws));
    const uint64_t at = uint64_t(step.index) * 8;
    const vk::BufferRange draws = whole(s.chain_draws_io->device_buffer());
    if (top_k) pick_->record(stream, whole(ranked), top_k, draws, step.index, whole(picks));
    else pick_->record_row(stream, s.logits, step.index * vocab, uint32_t(vocab), draws, step.index, whole(picks));
    s.chain_ranked_io->record_download(stream, 8, at);
    stream.copy({&picks, at + 4, 4}, {&token, 0, 4});
  }
  stream.release_external(whole(token));
}

}  // namespace infini::model
