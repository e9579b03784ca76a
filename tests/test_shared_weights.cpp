// Sessions of one Model share its weights on the device: the first session uploads them, every
// later one adds only its stream state and activations (the same amount each), the copy lives as
// long as any session holds it, and a session on the shared copy computes bit for bit what a
// session with a copy of its own computes, also while another feeds at the same time.
#include <catch2/catch.hpp>
#include <cstring>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "infini/context.hpp"
#include "infini/model.hpp"
#include "infini/session.hpp"
#include "infini/session_pool.hpp"
#include "support/temp_model.hpp"

namespace infini::test {
namespace {

model::RandomLlamaOptions small_model() {
  model::RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 64;
  o.layers = 3;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 96;
  o.segment = 8;
  return o;
}

std::vector<int32_t> stream_of(int user) {
  std::vector<int32_t> t;
  for (int i = 0; i < 19 + user; ++i) t.push_back((user * 37 + i * 11) % 300);
  return t;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("sessions of one model share one copy of its weights on the device", "[gpu][api][shared]") {
  const TempModel file(small_model(), "infini_shared_weights.gguf");
  Context context;
  const Model model(context, file.path);
  const uint64_t weights = model.info().weight_bytes;
  REQUIRE(weights > 0);
  const uint64_t empty = context.device_memory_bytes();

  auto first = std::make_unique<Session>(model);
  const uint64_t one = context.device_memory_bytes() - empty;
  auto second = std::make_unique<Session>(Model(model));  // a copy of the Model shares too
  const uint64_t two = context.device_memory_bytes() - empty;
  auto third = std::make_unique<Session>(model);
  const uint64_t three = context.device_memory_bytes() - empty;
  INFO("first session " << one << " B, second adds " << two - one << " B, weights " << weights << " B");
  // Each later session adds the same, which is the first's cost less the weights (within the
  // driver's alignment of each weight buffer: 4 norms and 7 matrices a layer, and 3 more).
  CHECK(three - two == two - one);
  CHECK(one - (two - one) >= weights);
  CHECK(one - (two - one) <= weights + 256 * (11 * 3 + 3));

  // The copy lives while any session holds it, whichever was made first: the first session's
  // going frees its own part only.
  first.reset();
  CHECK(context.device_memory_bytes() - empty == three - (two - one));
  second.reset();
  third.reset();
  CHECK(context.device_memory_bytes() == empty);
  Session again(model);  // uploads anew
  CHECK(context.device_memory_bytes() - empty == one);
}

TEST_CASE("a session on shared weights computes what a session with its own copy does, also side by side",
          "[gpu][api][shared]") {
  const TempModel file(small_model(), "infini_shared_weights_logits.gguf");
  Context own_context, shared_context;
  std::vector<std::vector<float>> want;
  {
    const Model own(own_context, file.path);
    Session alone(own);
    for (int user = 0; user < 2; ++user) {
      alone.reset();
      want.push_back(alone.feed_all(stream_of(user)));
    }
  }
  const Model model(shared_context, file.path);
  Session a(model), b(model);
  CHECK(same_bits(a.feed_all(stream_of(0)), want[0]));
  CHECK(same_bits(b.feed_all(stream_of(1)), want[1]));
  // Two threads feeding on the one copy at once.
  a.reset();
  b.reset();
  std::vector<float> got_a, got_b;
  std::thread ta([&] { got_a = a.feed_all(stream_of(0)); });
  std::thread tb([&] { got_b = b.feed_all(stream_of(1)); });
  ta.join();
  tb.join();
  CHECK(same_bits(got_a, want[0]));
  CHECK(same_bits(got_b, want[1]));
}

TEST_CASE("a session pool runs several sessions of one model on one copy of its weights", "[gpu][api][shared][pool]") {
  const TempModel file(small_model(), "infini_shared_weights_pool.gguf");
  Context context;
  const std::vector<Model> models = {Model(context, file.path)};
  std::vector<std::vector<float>> want;
  {
    Session alone(models[0]);
    for (int user = 0; user < 6; ++user) {
      alone.reset();
      want.push_back(alone.feed_all(stream_of(user)));
    }
  }
  const uint64_t empty = context.device_memory_bytes();
  uint64_t with_one = 0;
  {
    SessionPool one(models);
    with_one = context.device_memory_bytes() - empty;
  }
  SessionPool pool(models, 3);
  REQUIRE(pool.workers() == 3);
  const uint64_t with_three = context.device_memory_bytes() - empty;
  CHECK(with_three < 3 * with_one - 2 * models[0].info().weight_bytes + 1);
  std::vector<std::future<std::vector<float>>> replies;
  for (int user = 0; user < 6; ++user)
    replies.push_back(pool.submit([user](Session& s) { return s.feed_all(stream_of(user)); }));
  for (int user = 0; user < 6; ++user) CHECK(same_bits(replies[size_t(user)].get(), want[size_t(user)]));
  CHECK_THROWS_WITH(SessionPool(models, 0), "session pool: sessions per model must be 1 to 256, got 0");
}

TEST_CASE("two sessions of a model split over two devices share each device's layers", "[gpu][api][shared][multi]") {
  const TempModel file(small_model(), "infini_shared_weights_split.gguf");
  Context context(ContextOptions{.devices = {"0", "0"}});
  const Model model(context, file.path);
  Context single;
  const Model alone_model(single, file.path);
  Session alone(alone_model);
  const std::vector<float> want = alone.feed_all(stream_of(2));

  const uint64_t empty = context.device_memory_bytes();
  Session first(model);
  const uint64_t one = context.device_memory_bytes() - empty;
  Session second(model);
  const uint64_t two = context.device_memory_bytes() - empty;
  CHECK(one - (two - one) >= model.info().weight_bytes);
  CHECK(same_bits(second.feed_all(stream_of(2)), want));
  CHECK(same_bits(first.feed_all(stream_of(2)), want));
}

}  // namespace infini::test
