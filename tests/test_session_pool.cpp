// The public SessionPool: jobs on two devices (two logical devices of the one test device) give
// exactly the logits of the same work done one at a time on one session; both workers run jobs;
// a job's exception reaches its future; a stream saved by a job on one worker continues on the
// other; and a Session over a two-device Context equals one over a single device.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "infini/model.hpp"
#include "infini/session.hpp"
#include "infini/session_pool.hpp"
#include "reference/random_llama.hpp"
#include "support/temp_path.hpp"

namespace infini::test {
namespace {

std::filesystem::path write_model() {
  model::RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 48;
  o.layers = 3;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 80;
  o.segment = 6;
  const std::filesystem::path path = temp_path("infini_session_pool.gguf");
  model::random_llama(o).write(path);
  return path;
}

std::vector<int32_t> stream_of(int user) {
  std::vector<int32_t> t;
  for (int i = 0; i < 17 + user; ++i) t.push_back((user * 31 + i * 7) % 300);
  return t;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_CASE("a session pool runs independent streams on two devices, as one session would", "[gpu][api][pool]") {
  const std::filesystem::path path = write_model();
  Context a, b;  // two logical devices
  const std::vector<Model> models = {Model(a, path), Model(b, path)};
  Session alone(models[0]);
  std::vector<std::vector<float>> want;
  for (int user = 0; user < 6; ++user) {
    alone.reset();
    want.push_back(alone.feed_all(stream_of(user)));
  }

  std::vector<std::future<std::vector<float>>> replies;
  {
    SessionPool pool(models);
    REQUIRE(pool.workers() == 2);
    for (int user = 0; user < 6; ++user)
      replies.push_back(pool.submit([user](Session& s) { return s.feed_all(stream_of(user)); }));
    auto failing = pool.submit([](Session& s) -> int {
      s.feed(std::vector<int32_t>{1, 2, 3});
      throw std::runtime_error("job failed");
    });
    CHECK_THROWS_WITH(failing.get(), "job failed");
    for (int user = 0; user < 6; ++user) CHECK(same_bits(replies[size_t(user)].get(), want[size_t(user)]));
    const std::vector<size_t> runs = pool.jobs_run();
    CHECK(runs[0] + runs[1] >= 6);

    // A stream saved by a job continues in another job, whichever worker runs it.
    const std::filesystem::path state = temp_path("infini_session_pool.state");
    const std::vector<int32_t> all = stream_of(9);
    const std::vector<int32_t> head(all.begin(), all.begin() + 12), tail(all.begin() + 12, all.end());  // at a segment end
    pool.submit([&](Session& s) {
          s.feed(head);
          s.save(state);
          return 0;
        })
        .get();
    const std::vector<float> continued = pool.submit([&](Session& s) {
                                               s.restore(state);
                                               return s.feed_all(tail);
                                             })
                                             .get();
    alone.reset();
    const std::vector<float> straight = alone.feed_all(all);
    CHECK(same_bits(continued, std::vector<float>(straight.end() - std::ptrdiff_t(continued.size()), straight.end())));
    std::filesystem::remove(state);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a session over a two-device context equals one over a single device", "[gpu][api][multi]") {
  const std::filesystem::path path = write_model();
  Context one, two({.devices = {"0", "0"}});
  REQUIRE(two.devices().size() == 2);
  Session s1(Model(one, path)), s2(Model(two, path, {.split = {1, 2}}));
  const std::vector<int32_t> tokens = stream_of(4);
  CHECK(same_bits(s1.feed_all(tokens), s2.feed_all(tokens)));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace infini::test
