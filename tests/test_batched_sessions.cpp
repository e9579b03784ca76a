// Sessions of one model generating at the same time, each on its own thread, decode in batched
// steps (exec/step_batcher.hpp): each gives the tokens it gives generating alone, greedy and
// sampled, on Infini files with memory and on plain files with a sliding context, f16 and
// quantized, across segment ends and the slide, on one device and over two; the model counts the steps; a session whose
// caller fails mid-generation fails alone while the others go on.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "infini/context.hpp"
#include "infini/error.hpp"
#include "infini/model.hpp"
#include "infini/session.hpp"
#include "support/temp_model.hpp"

namespace infini::test {
namespace {

constexpr int kUsers = 4;
constexpr int64_t kTokens = 24;

std::vector<int32_t> prompt_of(int user) {
  std::vector<int32_t> t;
  for (int i = 0; i < 5 + 3 * user; ++i) t.push_back(int32_t((user * 41 + i * 13 + 2) % 300));
  return t;
}

// User 0 greedy, 1 and 2 sampled from their top 5 and 3 from the whole row (top-k off, top-p
// 0.9: the host's draw over the row), with seeds of their own.
SamplingOptions sampling_of(int user) {
  SamplingOptions o;
  o.temperature = user == 0 ? 0.0 : 0.9;
  o.top_k = user == 3 ? 0 : 5;
  o.top_p = user == 3 ? 0.9 : 0.95;
  o.seed = uint64_t(user);
  return o;
}

std::vector<int32_t> generate_for(Session& s, int user) {
  s.feed(prompt_of(user));
  return s.generate(kTokens, sampling_of(user));
}

model::RandomLlamaOptions file_of(const std::string& arch, bool infini, std::optional<QuantScheme> scheme,
                                  ElementType dtype) {
  model::RandomLlamaOptions o;
  o.arch = arch;
  o.vocab = 300;
  o.embd = 64;
  o.layers = 2;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 96;
  o.infini = infini;
  o.segment = 8;         // Infini files: every user crosses a few segment ends
  o.context_length = 16;  // plain files: the context slides during generation
  o.scheme = scheme;
  o.dtype = dtype;
  return o;
}

}  // namespace

TEST_CASE("sessions generating together give the tokens each gives alone", "[gpu][api][batch]") {
  struct Case {
    const char* name;
    model::RandomLlamaOptions file;
    std::vector<std::string> devices;
  };
  const Case cases[] = {
      {"llama, q8_0, memory", file_of("llama", true, QuantScheme::Q8_0, ElementType::F32), {}},
      {"qwen2, f16, sliding context", file_of("qwen2", false, std::nullopt, ElementType::F16), {}},
      {"qwen3, q4_k_m, sliding context", file_of("qwen3", false, QuantScheme::Q4_K_M, ElementType::F32), {}},
      {"llama, f32, memory, over two devices", file_of("llama", true, std::nullopt, ElementType::F32), {"0", "0"}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const TempModel file(c.file, "infini_batched_sessions.gguf");
      Context context(ContextOptions{.devices = c.devices});
      ModelOptions alone_options;
      alone_options.max_batch = 1;
      std::vector<std::vector<int32_t>> want;
      {
        const Model alone(context, file.path, alone_options);
        Session s(alone);
        for (int user = 0; user < kUsers; ++user) {
          s.reset();
          want.push_back(generate_for(s, user));
        }
      }
      REQUIRE(want[0].size() == size_t(kTokens));  // a stream long enough to cross segments and slide
      const Model model(context, file.path);
      std::vector<Session> sessions;
      for (int user = 0; user < kUsers; ++user) sessions.emplace_back(model);
      std::vector<std::vector<int32_t>> got(kUsers);
      std::vector<std::thread> threads;
      for (int user = 0; user < kUsers; ++user)
        threads.emplace_back([&, user] { got[size_t(user)] = generate_for(sessions[size_t(user)], user); });
      for (std::thread& t : threads) t.join();
      for (int user = 0; user < kUsers; ++user) {
        INFO("user " << user);
        CHECK(got[size_t(user)] == want[size_t(user)]);
      }
      const DecodeBatchStats stats = model.decode_batches();
      INFO(stats.steps << " steps, " << stats.tokens << " tokens, largest " << stats.largest);
      CHECK(stats.steps > 0);
      CHECK(stats.tokens <= uint64_t(kUsers * kTokens));
      CHECK(stats.largest >= 2);
      CHECK(stats.largest <= uint32_t(kUsers));
      CHECK(stats.generating == 0);
      CHECK(stats.waiting == 0);
      // A session goes on alone from where its batched steps left it.
      Session& first = sessions[0];
      const std::vector<int32_t> more = first.generate(4, sampling_of(0));
      Session check(model);
      std::vector<int32_t> stream = prompt_of(0);
      stream.insert(stream.end(), want[0].begin(), want[0].end());
      check.feed(stream);
      CHECK(check.generate(4, sampling_of(0)) == more);
    }
  }
}

TEST_CASE("a session's failing request leaves the others generating together", "[gpu][api][batch]") {
  const TempModel file(file_of("llama", true, std::nullopt, ElementType::F32), "infini_batched_failure.gguf");
  Context context;
  const Model model(context, file.path);
  Session good(model), bad(model), alone(model);
  std::vector<int32_t> want;
  {
    alone.feed(prompt_of(1));
    want = alone.generate(kTokens, sampling_of(1));
  }
  std::vector<int32_t> got;
  std::string error;
  std::thread t1([&] { got = generate_for(good, 1); });
  // The other session's caller fails mid-generation (a client gone, say): its generate() throws
  // out of the batched decode, and the first session's goes on, batched or alone.
  std::thread t2([&] {
    try {
      bad.feed(prompt_of(2));
      int seen = 0;
      const std::vector<int32_t> out = bad.generate(kTokens, sampling_of(2), [&](int32_t, std::string_view) -> bool {
        if (++seen == 5) throw Error("client gone");
        return true;
      });
      error = "returned " + std::to_string(out.size());
    } catch (const Error& e) {
      error = e.what();
    }
  });
  t1.join();
  t2.join();
  CHECK(error == "client gone");
  CHECK(got == want);
  CHECK(model.decode_batches().generating == 0);
  ModelOptions wrong;
  wrong.max_batch = 0;
  CHECK_THROWS_WITH(Model(context, file.path, wrong), Catch::Contains("max_batch must be 1..256, got 0"));
}

}  // namespace infini::test
