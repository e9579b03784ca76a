// Greedy decoding ahead on the device (LlamaRunner::forward_greedy): a chain of tokens, each the
// argmax of the logits before it, fed in one submission, against token-by-token decode with the
// ranking read back (forward_ranked, itself tested against whole rows): the same ids and the same
// logits bit for bit, across segment boundaries, with the host's memory mapped and staged; and
// take_back, which must leave the stream exactly as if the tokens taken back had never been fed;
// and Session::generate on chains, which must stop where token by token stops.
#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "support/chained_generation.hpp"
#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "exec/llama_runner.hpp"
#include "support/tiny_llama.hpp"
#include "vk/shared_buffer.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;
using model::RunnerOptions;
using testing::TinyLlama;
using testing::TinyLlamaSpec;

const std::vector<int32_t> kPrompt = {3, 17, 42, 0, 49};

RunnerOptions chain_options(uint32_t chain) {
  RunnerOptions o;
  o.infini.segment = 12;  // chains of 8, 2 and 1 at the segment's start, and crossings
  o.infini.memory = true;
  o.decode_chain = chain;
  return o;
}

TinyLlamaSpec spec() {
  TinyLlamaSpec s;
  s.type = ElementType::F16;
  s.seed = 11;
  return s;
}

// `count` greedy tokens after the prompt, token by token: each step's best (logit, id).
std::vector<ops::RankedLogit> step_by_step(LlamaRunner& runner, int32_t first, size_t count) {
  std::vector<ops::RankedLogit> out;
  int32_t next = first;
  while (out.size() < count) {
    out.push_back(runner.forward_ranked(std::span<const int32_t>(&next, 1), 1).at(0));
    next = out.back().id;
  }
  return out;
}

int32_t best_of(const std::vector<float>& logits) {
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// Decodes `count` tokens from `first` on `chained` in the chains it offers (chain_steps), and
// the same token by token on `by_token`: the same ids and logits, bit for bit, and the same
// stream length after each chain. Returns the next token and how many chains ran.
std::pair<int32_t, size_t> decode_in_chains(LlamaRunner& chained, LlamaRunner& by_token, int32_t first, size_t count) {
  const std::vector<ops::RankedLogit> want = step_by_step(by_token, first, count);
  int32_t next = first;
  size_t done = 0, chains = 0;
  while (done < count) {
    const uint32_t steps = chained.chain_steps(int64_t(count - done));
    REQUIRE(steps >= 1);
    CHECK((steps == 1 || steps <= chained.chain_room()));
    CHECK((steps & (steps - 1)) == 0);  // powers of two: a stream replays a few recordings
    std::vector<ops::RankedLogit> got;
    if (steps > 1) {
      got = chained.forward_greedy(next, steps);
      ++chains;
    } else {
      got = chained.forward_ranked(std::span<const int32_t>(&next, 1), 1);
    }
    REQUIRE(got.size() == steps);
    for (uint32_t i = 0; i < steps; ++i) {
      INFO("token " << done + i);
      CHECK(got[i].id == want[done + i].id);
      CHECK(got[i].logit == want[done + i].logit);
    }
    done += steps;
    next = got.back().id;
    CHECK(chained.tokens_seen() == by_token.tokens_seen() - int64_t(count - done));
  }
  return {next, chains};
}

TEST_CASE_METHOD(GpuTest, "greedy chains on the device decode as token by token does, bit for bit", "[gpu][model]") {
  TinyLlama tiny(spec());
  LlamaRunner by_token(dev(), tiny.weights, chain_options(1));
  // Where device memory is not mapped, the chain's inputs and rankings are staged.
  const bool staged = GENERATE(false, true);
  INFO("staged host memory: " << staged);
  vk::DeviceOptions options;
  options.discrete_memory = staged;
  const std::unique_ptr<vk::Device> device = open_second_device(options);
  LlamaRunner chained(*device, tiny.weights, chain_options(8));

  const int32_t first = best_of(by_token.forward(kPrompt, false));
  CHECK(best_of(chained.forward(kPrompt, false)) == first);
  // Three segment boundaries: chains of 4 and 2 and single steps.
  CHECK(decode_in_chains(chained, by_token, first, 40).second >= 4);
  CHECK(chained.last_logits() == by_token.last_logits());
  // What comes after: the same stream state (memory written at each boundary from the cache).
  CHECK(chained.forward(kPrompt, true) == by_token.forward(kPrompt, true));
}

TEST_CASE_METHOD(GpuTest, "taking back a chain's last tokens leaves the stream as if never fed", "[gpu][model]") {
  TinyLlama tiny(spec());
  LlamaRunner chained(dev(), tiny.weights, chain_options(8));
  LlamaRunner by_token(dev(), tiny.weights, chain_options(1));
  const int32_t first = best_of(chained.forward(kPrompt, false));
  by_token.forward(kPrompt, false);
  REQUIRE(chained.chain_room() == 6);  // 12 - 5 tokens, less the one a chain never takes
  CHECK(chained.chain_steps(100) == 4);
  const std::vector<ops::RankedLogit> got = chained.forward_greedy(first, 6);
  const uint32_t keep = GENERATE(1u, 3u, 6u);
  INFO("keeping " << keep << " of 6");
  chained.take_back(6 - keep);
  CHECK(chained.tokens_seen() == int64_t(kPrompt.size() + keep));
  // By token: the chain's first `keep` tokens.
  const std::vector<ops::RankedLogit> want = step_by_step(by_token, first, keep);
  CHECK(want.back().id == got[keep - 1].id);
  CHECK(chained.last_logits() == by_token.last_logits());
  CHECK_THROWS_WITH(chained.take_back(6), Catch::Contains("cannot take back"));
  // Then other tokens, across two segment boundaries: the taken-back cache rows are overwritten.
  std::vector<int32_t> more(20);
  for (size_t i = 0; i < more.size(); ++i) more[i] = int32_t((i * 7 + 3) % tiny.weights.config.vocab);
  CHECK(chained.forward(more, true) == by_token.forward(more, true));
  CHECK(chained.tokens_seen() == by_token.tokens_seen());
  // Only a chain's own tokens, with nothing fed since, can be taken back.
  CHECK_THROWS_WITH(chained.take_back(1), Catch::Contains("cannot take back"));
}

TEST_CASE_METHOD(GpuTest, "greedy chains refuse what they cannot do", "[gpu][model]") {
  TinyLlama tiny(spec());
  LlamaRunner chained(dev(), tiny.weights, chain_options(8));
  chained.forward(kPrompt, false);
  CHECK_THROWS_WITH(chained.forward_greedy(3, 7), Catch::Contains("takes 1..6"));
  CHECK_THROWS_WITH(chained.forward_greedy(3, 0), Catch::Contains("takes 1..6"));
  CHECK_THROWS_WITH(chained.forward_greedy(-1, 2), Catch::Contains("outside the vocabulary"));
  CHECK(chained.tokens_seen() == int64_t(kPrompt.size()));
  CHECK_THROWS_WITH(LlamaRunner(dev(), tiny.weights, chain_options(17)), Catch::Contains("decode_chain"));
  // The device's own choice: a token per submission on CPU drivers; on GPUs chains of what the
  // last decode step's time allows in kChainBurst (50 ms), at most 16, a power of two.
  CHECK(model::auto_decode_chain(true, 1e-4) == 1);
  CHECK(model::auto_decode_chain(false, 0) == 1);  // no decode step yet
  CHECK(model::auto_decode_chain(false, 6e-4) == 16);
  CHECK(model::auto_decode_chain(false, 0.01) == 4);
  CHECK(model::auto_decode_chain(false, 0.03) == 1);
  CHECK(model::auto_decode_chain(false, 0.1) == 1);
  LlamaRunner automatic(dev(), tiny.weights, chain_options(0));
  automatic.forward(kPrompt, false);
  CHECK(automatic.decode_chain() == 1);
  automatic.forward_ranked(std::span<const int32_t>(kPrompt.data(), 1), 1);  // a decode step, timed
  const uint32_t chosen = automatic.decode_chain();
  CHECK((chosen >= 1 && chosen <= 16 && (chosen & (chosen - 1)) == 0));
  if (dev().caps().type == vk::DeviceType::Cpu) CHECK(chosen == 1);
  // Near the segment's end a chain has no room: the segment's last token is fed alone.
  std::vector<int32_t> fill(6, 5);
  chained.forward(fill, false);
  CHECK(chained.chain_room() == 0);
  CHECK(chained.chain_steps(10) == 1);
  CHECK(chained.chain_steps(0) == 0);
}

std::vector<vk::Device*> raw(const std::vector<std::unique_ptr<vk::Device>>& devices) {
  std::vector<vk::Device*> out;
  for (const auto& d : devices) out.push_back(d.get());
  return out;
}

// Over several devices, each step's best id goes back from the head's device to the embedding's
// through shared memory and a shared signal (the token ring), where the driver shares both (Mesa
// 26's lavapipe: sync files); elsewhere decode goes token by token and chains are refused.
TEST_CASE_METHOD(GpuTest, "greedy chains over several devices pass each token back on the devices", "[gpu][multi]") {
  TinyLlamaSpec sp = spec();
  sp.layers = 3;
  TinyLlama tiny(sp);
  const size_t count = GENERATE(2u, 3u);
  const bool discrete = count == 3;  // staged host memory: each step's ranking downloaded at its own offset
  // The ring shares what the hand-offs share: the GPU's memory, or a host buffer both map.
  const model::Handoff handoff = GENERATE(model::Handoff::DeviceMemory, model::Handoff::HostMemory);
  INFO(count << " devices" << (discrete ? ", acting as discrete GPUs" : "") << ", hand-off "
             << model::handoff_name(handoff));
  std::vector<std::unique_ptr<vk::Device>> devices;
  for (size_t i = 0; i < count; ++i)
    devices.push_back(open_second_device({.disk_pipeline_cache = false, .discrete_memory = discrete}));
  RunnerOptions o = chain_options(8);
  o.handoff = handoff;
  if (!vk::can_share(*model::sharing_of(handoff), *devices[0], *devices[1])) {
    WARN("this driver cannot hand off through " << model::handoff_name(handoff) << ": path not run");
    return;
  }
  LlamaRunner chained(raw(devices), tiny.weights, o);
  o.decode_chain = 1;
  LlamaRunner by_token(raw(devices), tiny.weights, o);
  REQUIRE(chained.stages().size() == count);
  const int32_t first = best_of(chained.forward(kPrompt, false));
  CHECK(best_of(by_token.forward(kPrompt, false)) == first);
  const bool device_waits = chained.handoff_waits().front() != model::HandoffWait::Host;
  if (!device_waits) {
    CHECK(chained.decode_chain() == 0);
    CHECK(chained.chain_steps(8) == 1);
    CHECK_THROWS_WITH(chained.forward_greedy(first, 2), Catch::Contains("pass tokens back"));
    WARN("this driver shares no signal between these devices: chains over them not run");
    return;
  }
  REQUIRE(chained.decode_chain() == 8);
  // Across segment boundaries: chains of 4 and 2 and single steps.
  const auto [next, chains] = decode_in_chains(chained, by_token, first, 30);
  CHECK(chains >= 4);
  CHECK(chained.last_logits() == by_token.last_logits());
  // A chain taken back in part on every stage, then more tokens: the same stream.
  const std::span<const int32_t> one(kPrompt.data(), 1);
  while (chained.chain_room() < 4) {
    chained.forward(one, false);
    by_token.forward(one, false);
  }
  const std::vector<ops::RankedLogit> ahead = chained.forward_greedy(next, chained.chain_room());
  const uint32_t keep = 2;
  chained.take_back(uint32_t(ahead.size()) - keep);
  CHECK(step_by_step(by_token, next, keep).back().id == ahead[keep - 1].id);
  CHECK(chained.last_logits() == by_token.last_logits());
  CHECK(chained.forward(kPrompt, true) == by_token.forward(kPrompt, true));
  CHECK(chained.tokens_seen() == by_token.tokens_seen());
}

// Greedy generation through the API with chains of up to 8 and with one token per submission:
// the same tokens, the same stops (at the end-of-sequence token, found by trying seeds of a
// small vocabulary, and at each place a callback can stop), and the same stream after them.
TEST_CASE("greedy generation in chains stops where token by token stops", "[api][gpu]") {
  check_chained_generation({.temperature = 0}, "infini-chain-generate.gguf");
}

}  // namespace
}  // namespace infini::test
