#include "support/chained_generation.hpp"

#include <catch2/catch.hpp>
#include <string_view>
#include <vector>

#include "infini/context.hpp"
#include "infini/model.hpp"
#include "support/temp_model.hpp"

namespace infini::test {

void check_chained_generation(const SamplingOptions& sampling, const char* file_name) {
  Context context;
  const std::vector<int32_t> prompt = {1, 5, 9};
  const std::vector<int32_t> after = {7, 3, 11, 4, 20, 6, 8, 13, 9, 10, 12, 5, 14};  // crosses a boundary
  bool stopped_at_eos = false;
  for (uint64_t seed = 1; seed <= 40 && !stopped_at_eos; ++seed) {
    model::RandomLlamaOptions o;
    o.vocab = 24;  // the end-of-sequence token (2) comes up within a few dozen tokens for some seed
    o.embd = 32;
    o.ffn = 64;
    o.segment = 12;
    o.seed = seed;
    TempModel file(o, file_name);
    const Model by_token(context, file.path, {.decode_chain = 1});
    const Model chained(context, file.path, {.decode_chain = 8});
    Session a(by_token), b(chained);
    a.feed(prompt);
    b.feed(prompt);
    const std::vector<int32_t> want = a.generate(30, sampling);
    std::vector<int32_t> seen;
    const std::vector<int32_t> got = b.generate(30, sampling, [&](int32_t t, std::string_view) {
      seen.push_back(t);
      return true;
    });
    INFO("seed " << seed);
    CHECK(got == want);
    CHECK(seen == got);
    CHECK(b.tokens_seen() == a.tokens_seen());
    CHECK(b.feed_all(after) == a.feed_all(after));
    stopped_at_eos = want.size() >= 2 && want.size() < 30;
    if (!stopped_at_eos) continue;
    // A callback stopping after each of the tokens: that token is the last fed, in both, and
    // what is generated next (from the logits a stop leaves) is the same too.
    for (size_t stop = 1; stop <= want.size(); ++stop) {
      INFO("stopping after " << stop);
      a.reset();
      b.reset();
      a.feed(prompt);
      b.feed(prompt);
      auto stop_after = [&, n = size_t(0)](int32_t, std::string_view) mutable { return ++n < stop; };
      const std::vector<int32_t> a_got = a.generate(30, sampling, stop_after);
      CHECK(b.generate(30, sampling, stop_after) == a_got);
      CHECK(a_got.size() == stop);
      CHECK(b.tokens_seen() == a.tokens_seen());
      CHECK(b.generate(6, sampling) == a.generate(6, sampling));
      CHECK(b.feed_all(after) == a.feed_all(after));
    }
  }
  CHECK(stopped_at_eos);
}

}  // namespace infini::test
