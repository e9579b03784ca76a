// Sampled decoding ahead on the device (LlamaRunner::forward_sampled): a chain of tokens, each
// drawn on the device (ops::PickToken) from the k best logits before it with the uniform the host
// sampler would have used, against token-by-token decode drawn on the host (forward_ranked and
// model::Sampler): the same tokens, the same logits and rankings bit for bit, the sampler's random
// stream left where token by token leaves it, across segment boundaries, with host memory mapped
// and staged; and Session::generate with temperature, which must give and stop where token by
// token does, and go on the same after a stop.
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "support/chained_generation.hpp"
#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "exec/llama_runner.hpp"
#include "sampling/sampler.hpp"
#include "support/tiny_llama.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;
using model::RunnerOptions;
using model::Sampler;
using model::SamplerOptions;
using testing::TinyLlama;
using testing::TinyLlamaSpec;

const std::vector<int32_t> kPrompt = {3, 17, 42, 0, 49};

RunnerOptions chain_options(uint32_t chain) {
  RunnerOptions o;
  o.infini.segment = 12;  // chains of 4, 2 and single steps, and boundary crossings
  o.infini.memory = true;
  o.decode_chain = chain;
  return o;
}

TinyLlama tiny_model() {
  TinyLlamaSpec s;
  s.type = ElementType::F16;
  s.seed = 23;
  return TinyLlama(s);
}

// Decodes `count` tokens after the prompt on `chained` in the chains it offers (the device
// drawing inside each chain, the host the token after it) and token by token on `by_token` (the
// host drawing each from the ranking of the one before, or from its whole row with top-k off):
// the same tokens, rankings or rows, and logits, bit for bit, and both samplers at the same point
// of their random stream.
void sample_in_chains(LlamaRunner& chained, LlamaRunner& by_token, const SamplerOptions& sampling, size_t count) {
  Sampler chained_sampler(sampling), token_sampler(sampling);
  const bool whole_row = chained_sampler.draws_whole_row();
  const uint32_t k = whole_row ? 0 : chained_sampler.ranked_needed();
  REQUIRE(k == uint32_t(sampling.top_k));
  chained.forward(kPrompt, false);
  const std::vector<float> prompt_logits = by_token.forward(kPrompt, false);
  int32_t next = chained_sampler.sample(prompt_logits);
  CHECK(token_sampler.sample(prompt_logits) == next);
  // Token by token: each step's ranking (or row) and the token drawn from it.
  std::vector<int32_t> want;
  std::vector<std::vector<ops::RankedLogit>> rankings;
  std::vector<std::vector<float>> rows;
  for (int32_t t = next; want.size() < count;) {
    const std::span<const int32_t> token(&t, 1);
    if (whole_row) {
      rows.push_back(by_token.forward(token, false));
      rankings.push_back({ops::RankedLogit{0, int32_t(std::max_element(rows.back().begin(), rows.back().end()) - rows.back().begin())}});
      want.push_back(t = token_sampler.sample(rows.back()));
    } else {
      rankings.push_back(by_token.forward_ranked(token, k));
      want.push_back(t = token_sampler.sample_ranked(rankings.back()));
    }
  }
  std::vector<int32_t> got;
  size_t chains = 0, not_best = 0;
  while (got.size() < count) {
    const uint32_t steps = chained.chain_steps(int64_t(count - got.size()));
    REQUIRE(steps >= 1);
    std::vector<ops::RankedLogit> last;
    std::vector<float> last_row;
    if (steps > 1) {
      LlamaRunner::ChainPicks picks = chained.forward_sampled(next, steps, chained_sampler.device_draws(steps - 1), k);
      REQUIRE(picks.picks.size() == steps - 1);
      for (const ops::RankedLogit& pick : picks.picks) got.push_back(chained_sampler.take_drawn(pick));
      last = std::move(picks.last);
      last_row = std::move(picks.last_row);
      ++chains;
    } else if (whole_row) {
      last_row = chained.forward(std::span<const int32_t>(&next, 1), false);
    } else {
      last = chained.forward_ranked(std::span<const int32_t>(&next, 1), k);
    }
    if (whole_row) {
      CHECK(last_row == rows.at(got.size()));
      got.push_back(next = chained_sampler.sample(last_row));
      continue;
    }
    const std::vector<ops::RankedLogit>& same_step = rankings.at(got.size());
    REQUIRE(last.size() == same_step.size());
    for (size_t i = 0; i < last.size(); ++i) {
      CHECK(last[i].id == same_step[i].id);
      CHECK(last[i].logit == same_step[i].logit);
    }
    got.push_back(next = chained_sampler.sample_ranked(last));
  }
  REQUIRE(got.size() == count);
  for (size_t i = 0; i < count; ++i) {
    INFO("token " << i);
    CHECK(got[i] == want[i]);
    not_best += want[i] != rankings[i][0].id ? 1 : 0;
  }
  CHECK(chains >= 4);
  if (k != 1) CHECK(not_best >= 5);  // the draws are draws, not the argmax
  CHECK(chained.tokens_seen() == by_token.tokens_seen());
  CHECK(chained.last_logits() == by_token.last_logits());
  CHECK(chained_sampler.next_uniform() == token_sampler.next_uniform());
}

TEST_CASE_METHOD(GpuTest, "sampled chains on the device draw what the host draws token by token, bit for bit",
                 "[gpu][model][sampler]") {
  TinyLlama tiny = tiny_model();
  const bool staged = GENERATE(false, true);
  const SamplerOptions sampling = GENERATE(SamplerOptions{1.3, 40, 0.95, 5}, SamplerOptions{0.7, 7, 1.0, 6},
                                           SamplerOptions{2.0, 1, 1.0, 7}, SamplerOptions{1.0, 0, 1.0, 8});
  INFO("staged host memory: " << staged << ", T " << sampling.temperature << ", top-k " << sampling.top_k);
  vk::DeviceOptions options;
  options.discrete_memory = staged;
  const std::unique_ptr<vk::Device> device = open_second_device(options);
  LlamaRunner chained(*device, tiny.weights, chain_options(8));
  LlamaRunner by_token(dev(), tiny.weights, chain_options(1));
  sample_in_chains(chained, by_token, sampling, 40);
}

std::vector<vk::Device*> raw(const std::vector<std::unique_ptr<vk::Device>>& devices) {
  std::vector<vk::Device*> out;
  for (const auto& d : devices) out.push_back(d.get());
  return out;
}

// Over several devices the head stage draws each step's token and sends it round the token ring
// (where the driver shares memory and signals between the devices: Mesa 26's lavapipe).
TEST_CASE_METHOD(GpuTest, "sampled chains over several devices draw what the host draws", "[gpu][multi][sampler]") {
  TinyLlamaSpec sp;
  sp.type = ElementType::F16;
  sp.seed = 29;
  sp.layers = 3;
  TinyLlama tiny(sp);
  const size_t count = GENERATE(2u, 3u);
  const bool discrete = count == 3;
  INFO(count << " devices" << (discrete ? ", acting as discrete GPUs" : ""));
  std::vector<std::unique_ptr<vk::Device>> devices;
  for (size_t i = 0; i < count; ++i)
    devices.push_back(open_second_device({.disk_pipeline_cache = false, .discrete_memory = discrete}));
  RunnerOptions o = chain_options(8);
  LlamaRunner chained(raw(devices), tiny.weights, o);
  o.decode_chain = 1;
  LlamaRunner by_token(raw(devices), tiny.weights, o);
  REQUIRE(chained.stages().size() == count);
  if (chained.handoff_waits().front() == model::HandoffWait::Host) {
    chained.forward(kPrompt, false);
    CHECK(chained.chain_steps(8) == 1);
    CHECK_THROWS_WITH(chained.forward_sampled(1, 2, Sampler({}).device_draws(1), 40), Catch::Contains("pass tokens back"));
    WARN("this driver shares no signal between these devices: chains over them not run");
    return;
  }
  const SamplerOptions sampling = GENERATE(SamplerOptions{1.1, 24, 0.9, 8}, SamplerOptions{1.0, 0, 1.0, 9});
  INFO("top-k " << sampling.top_k);
  sample_in_chains(chained, by_token, sampling, 30);
}

TEST_CASE_METHOD(GpuTest, "sampled chains refuse what they cannot do", "[gpu][model][sampler]") {
  TinyLlama tiny = tiny_model();
  LlamaRunner chained(dev(), tiny.weights, chain_options(8));
  chained.forward(kPrompt, false);
  const Sampler sampler({0.8, 10, 0.9, 1});
  CHECK(chained.chain_room() == 6);
  CHECK_THROWS_WITH(chained.forward_sampled(3, 7, sampler.device_draws(6), 10), Catch::Contains("takes 1..6"));
  CHECK_THROWS_WITH(chained.forward_sampled(3, 2, sampler.device_draws(1), 65), Catch::Contains("rank 1..64"));
  CHECK_THROWS_WITH(chained.forward_sampled(50, 2, sampler.device_draws(1), 10), Catch::Contains("outside the vocabulary"));
  CHECK_THROWS_WITH(sampler.device_draws(17), Catch::Contains("at most 16"));
  CHECK(chained.tokens_seen() == int64_t(kPrompt.size()));
}

TEST_CASE("sampled generation in chains gives and stops what token by token does", "[api][gpu][sampler]") {
  // The last: an OpenAI-style request's defaults (no top-k, top-p 1), drawn from whole rows.
  const SamplingOptions sampling = GENERATE(SamplingOptions{0.9, 20, 0.95, 3}, SamplingOptions{1.5, 64, 0.8, 4},
                                            SamplingOptions{1.0, 0, 1.0, 5});
  check_chained_generation(sampling, "infini-sampled-chain-generate.gguf");
}

}  // namespace
}  // namespace infini::test
