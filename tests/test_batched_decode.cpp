// A batched decode step (exec/batch_decoder.hpp) against each stream decoding alone: streams of
// one model on one copy of its weights, each at its own position, give the same rankings, the
// same last logits and the same saved state as the same streams fed token by token on their own,
// when they join and leave mid-stream, cross segment ends (memory writes) or slide a sliding
// context at different steps, for f32 and f16 weights, on one device and over two (quantized ones: test_batched_sessions.cpp); and the step refuses what it cannot
// run, having fed nothing.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "exec/batch_decoder.hpp"
#include "exec/llama_runner.hpp"
#include "exec/step_batcher.hpp"
#include "formats/session_state.hpp"
#include "graph/device_weights.hpp"
#include "infini/error.hpp"
#include "support/gpu_fixture.hpp"
#include "support/tiny_llama.hpp"

namespace infini::test {
namespace {

using model::BatchDecoder;
using model::LlamaRunner;
using model::RunnerOptions;
using testing::TinyLlama;
using testing::TinyLlamaSpec;

constexpr int kStreams = 4;

std::vector<int32_t> prompt_of(int stream, int64_t vocab) {
  std::vector<int32_t> t;
  for (int i = 0; i < 3 + 2 * stream; ++i) t.push_back(int32_t((stream * 13 + i * 7 + 1) % vocab));
  return t;
}

// How far two rankings may differ: nothing where the batch's projections run the kernel a lone
// token runs (GPUs' vector kernel); elsewhere (CPU drivers) a lone token's one-row kernel and
// the batch's block kernel sum in another order, so within f32 rounding of the sums.
constexpr float kBound = 2e-5f;

float worst_difference(const std::vector<ops::RankedLogit>& a, const std::vector<ops::RankedLogit>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i].logit - b[i].logit));
  return worst;
}

struct Case {
  const char* name;
  ElementType type;
  RunnerOptions options;
  bool two_devices;  // the layers split over two logical devices, hidden states through the host
};

RunnerOptions infini_options() {
  RunnerOptions o;
  o.infini.segment = 6;  // the streams cross segment ends at different steps
  o.infini.memory = true;
  o.decode_chain = 1;
  return o;
}

RunnerOptions sliding_options() {
  RunnerOptions o;
  o.infini.memory = false;
  o.infini.sliding = true;
  o.infini.segment = 8;  // C
  o.infini.sinks = 2;
  o.decode_chain = 1;
  return o;
}

}  // namespace

TEST_CASE_METHOD(GpuTest, "a batched decode step gives each stream what decoding alone gives it", "[gpu][batch]") {
  const Case cases[] = {{"f32, memory", ElementType::F32, infini_options(), false},
                        {"f16, sliding context", ElementType::F16, sliding_options(), false},
                        {"f32, memory, two devices", ElementType::F32, infini_options(), true}};
  const std::unique_ptr<vk::Device> second = open_second_device();
  for (const Case& c : cases) {
    SECTION(c.name) {
      TinyLlamaSpec spec;
      spec.type = c.type;
      spec.embd = 64;
      spec.ffn = 96;
      spec.vocab = 64;
      spec.seed = 5;
      TinyLlama tiny(spec);
      std::vector<vk::Device*> devices = {&dev()};
      std::vector<int64_t> split;
      if (c.two_devices) {
        devices.push_back(second.get());
        split = {1, 1};
      }
      model::DeviceWeightCache shared;
      std::vector<std::unique_ptr<LlamaRunner>> batched, alone;
      for (int s = 0; s < kStreams; ++s) {
        batched.push_back(std::make_unique<LlamaRunner>(devices, tiny.weights, c.options, split, &shared));
        alone.push_back(std::make_unique<LlamaRunner>(dev(), tiny.weights, c.options));
      }
      REQUIRE(batched[0]->stage_count() == devices.size());
      BatchDecoder decoder(model::stage_weights(*batched[0]), tiny.weights.config, c.options, kStreams);
      std::vector<int32_t> next(kStreams);
      for (int s = 0; s < kStreams; ++s) {
        const std::vector<int32_t> p = prompt_of(s, spec.vocab);
        batched[size_t(s)]->forward(p, false);
        next[size_t(s)] = alone[size_t(s)]->forward_ranked(p, 1).at(0).id;
      }
      float worst = 0;
      // 20 steps; stream s sits out the steps where (step + s) % 5 == 4 (joining and leaving).
      for (int step = 0; step < 20; ++step) {
        std::vector<BatchDecoder::Entry> entries;
        std::vector<int> who;
        for (int s = 0; s < kStreams; ++s) {
          if ((step + s) % 5 == 4) continue;
          entries.push_back({batched[size_t(s)].get(), next[size_t(s)]});
          who.push_back(s);
        }
        const std::vector<std::vector<ops::RankedLogit>> got = decoder.step(entries, 3);
        REQUIRE(got.size() == who.size());
        for (size_t i = 0; i < who.size(); ++i) {
          const size_t s = size_t(who[i]);
          const std::vector<ops::RankedLogit> want =
              alone[s]->forward_ranked(std::span<const int32_t>(&next[s], 1), 3);
          INFO("step " << step << ", stream " << s);
          REQUIRE(got[i].size() == 3);
          CHECK(got[i][0].id == want[0].id);
          worst = std::max(worst, worst_difference(got[i], want));
          next[s] = want[0].id;
        }
      }
      INFO("largest logit difference " << worst);
      CHECK(worst <= kBound);
      for (int s = 0; s < kStreams; ++s) {
        LlamaRunner& b = *batched[size_t(s)];
        LlamaRunner& a = *alone[size_t(s)];
        CHECK(b.tokens_seen() == a.tokens_seen());
        // The last logits are where the stream reads them, and a stream goes on alone from its state.
        const std::vector<float> lb = b.last_logits(), la = a.last_logits();
        float diff = 0;
        for (size_t i = 0; i < la.size(); ++i) diff = std::max(diff, std::fabs(lb[i] - la[i]));
        CHECK(diff <= kBound);
        // The saved states: the same encoding, last logits included, wherever the kernels agree
        // (on lavapipe, bit for bit); and a state saved from a batched stream runs on alone.
        const stream::SessionState sb = b.save_state(), sa = a.save_state();
        REQUIRE(sb.layers.size() == sa.layers.size());
        for (size_t l = 0; l < sa.layers.size(); ++l) {
          CHECK(sb.layers[l].open == sa.layers[l].open);
          CHECK(sb.layers[l].segments_written == sa.layers[l].segments_written);
        }
        if (worst == 0) CHECK(stream::encode_session_state(sb) == stream::encode_session_state(sa));
        if (s == 0) {
          LlamaRunner restored(dev(), tiny.weights, c.options);
          restored.restore_state(sb);
          const int32_t t = 2;
          const std::vector<ops::RankedLogit> gr = restored.forward_ranked(std::span<const int32_t>(&t, 1), 2);
          LlamaRunner original(dev(), tiny.weights, c.options);
          original.restore_state(sa);
          const std::vector<ops::RankedLogit> go = original.forward_ranked(std::span<const int32_t>(&t, 1), 2);
          CHECK(gr[0].id == go[0].id);
          CHECK(worst_difference(gr, go) <= kBound);
        }
        const int32_t t = 1;
        const std::vector<ops::RankedLogit> gb = b.forward_ranked(std::span<const int32_t>(&t, 1), 2),
                                            ga = a.forward_ranked(std::span<const int32_t>(&t, 1), 2);
        CHECK(gb[0].id == ga[0].id);
        CHECK(worst_difference(gb, ga) <= kBound);
      }
      // And the other way: a state saved from a stream decoding alone, restored into a stream of
      // the batch, decodes in a batched step as the original goes on alone.
      batched[1]->restore_state(alone[3]->save_state());
      const int32_t t = 4;
      const std::vector<BatchDecoder::Entry> one = {{batched[1].get(), t}};
      const std::vector<ops::RankedLogit> got = decoder.step(one, 2).at(0);
      const std::vector<ops::RankedLogit> want = alone[3]->forward_ranked(std::span<const int32_t>(&t, 1), 2);
      CHECK(got[0].id == want[0].id);
      CHECK(worst_difference(got, want) <= kBound);
    }
  }
}

TEST_CASE_METHOD(GpuTest, "a batched decode step refuses what it cannot run, feeding nothing", "[gpu][batch]") {
  TinyLlamaSpec spec;
  TinyLlama tiny(spec);
  vk::Device* devices[] = {&dev()};
  model::DeviceWeightCache shared;
  const RunnerOptions options = infini_options();
  LlamaRunner a(devices, tiny.weights, options, {}, &shared), b(devices, tiny.weights, options, {}, &shared);
  LlamaRunner other(dev(), tiny.weights, options);  // its own copy of the weights
  const std::vector<int32_t> p = {1, 2, 3};
  a.forward(p, false);
  b.forward(p, false);
  other.forward(p, false);
  BatchDecoder decoder(model::stage_weights(a), tiny.weights.config, options, 2);
  LlamaRunner* sa = &a;
  LlamaRunner* sb = &b;
  const uint32_t open = a.stage(0).graph().first_attention().open_tokens();
  CHECK_THROWS_WITH(decoder.step(std::vector<BatchDecoder::Entry>{{sa, 1}, {sb, int32_t(spec.vocab)}}, 1),
                    "model: token id 50 is outside the vocabulary of 50");
  CHECK_THROWS_WITH(decoder.step(std::vector<BatchDecoder::Entry>{{sa, 1}, {sa, 2}}, 1),
                    "model: a stream joins a batched step twice");
  CHECK_THROWS_WITH(decoder.step(std::vector<BatchDecoder::Entry>{{sa, 1}, {&other, 2}}, 1),
                    "model: a batched step's streams must run its weights on its devices");
  CHECK_THROWS_WITH(decoder.step(std::vector<BatchDecoder::Entry>{{sa, 1}, {sb, 2}, {sb, 3}}, 1),
                    "model: a batched step of 3 streams; it takes 1..2");
  CHECK_THROWS_WITH(decoder.step(std::vector<BatchDecoder::Entry>{{sa, 1}}, 0),
                    "model: a device ranking takes 1..64 logits, got 0");
  CHECK(a.stage(0).graph().first_attention().open_tokens() == open);
  CHECK(b.stage(0).graph().first_attention().open_tokens() == open);
  CHECK(a.tokens_seen() == 3);
}

}  // namespace infini::test
