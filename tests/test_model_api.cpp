// The public Model and Session objects over a random GGUF file: the same logits as the internal
// runner, save/restore that continues bit-identically, tokenizer round trips, deterministic greedy
// generation, and one-line errors for bad files and foreign states.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/context_access.hpp"
#include "infini/model.hpp"
#include "infini/selfcheck.hpp"
#include "infini/tokenizer.hpp"
#include "infini/session.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "exec/llama_runner.hpp"
#include "sampling/sampler.hpp"
#include "reference/random_llama.hpp"
#include "support/temp_model.hpp"
#include "support/temp_path.hpp"

namespace infini::test {
namespace {

Context& context() {
  static Context c;
  return c;
}

model::RandomLlamaOptions small(int64_t segment = 8) {
  model::RandomLlamaOptions o;
  o.vocab = 400;
  o.embd = 48;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 80;
  o.segment = segment;
  return o;
}

// small(8) with another embedding width: a model whose states must not restore into small(8)'s.
model::RandomLlamaOptions other_shape() {
  model::RandomLlamaOptions o = small(8);
  o.embd = 64;
  return o;
}

const std::vector<int32_t> kTokens = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12, 300, 64, 2, 7, 150};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

int32_t argmax(const std::vector<float>& v) { return int32_t(std::max_element(v.begin(), v.end()) - v.begin()); }

bool one_line(const Error& e) { return std::string(e.what()).find('\n') == std::string::npos; }

// The README's "From C++" example for models, compiled and run here: the same lines, with the
// two file names as variables and std::cout captured.
void readme_example(const std::filesystem::path& gguf, const std::filesystem::path& state) {
  // --- README begins ---
  infini::Context ctx;
  infini::Model model(ctx, gguf);                          // memory and segment from the file
  infini::Session session(model);                          // uploads the weights
  session.feed(model.tokenize("Once upon a time", true));  // any length: memory stays constant
  session.generate(32, {.temperature = 0.7, .seed = 1}, [](int32_t, std::string_view text) {
    std::cout << text << std::flush;
    return true;                                           // false stops early
  });
  session.save(state);                                     // later: session.restore(state)
  // --- README ends ---
}

TEST_CASE("Model opens a GGUF file and resolves its options", "[api][gpu]") {
  TempModel infini_file(small(8), "infini-api-infini.gguf");
  const Model m(context(), infini_file.path);
  const ModelInfo& i = m.info();
  CHECK(i.vocab == 400);
  CHECK(i.embd == 48);
  CHECK(i.layers == 2);
  CHECK(i.heads == 4);
  CHECK(i.heads_kv == 2);
  CHECK(i.head_dim == 12);
  CHECK(i.ffn == 80);
  CHECK(i.segment == 8);
  CHECK(i.memory);
  CHECK(i.has_infini_keys);
  CHECK(i.bos == 1);
  CHECK(i.eos == 2);
  CHECK(m.warnings().empty());
  CHECK(Model(context(), infini_file.path, {.segment = 5, .memory = MemoryMode::Off}).info().segment == 5);
  CHECK_FALSE(Model(context(), infini_file.path, {.memory = MemoryMode::Off}).info().memory);

  model::RandomLlamaOptions plain = small();
  plain.infini = false;
  TempModel plain_file(plain, "infini-api-plain.gguf");
  CHECK_FALSE(Model(context(), plain_file.path).info().memory);
  // A plain file runs as a sliding context of its context_length (4096) with 4 sinks, unless asked.
  CHECK(Model(context(), plain_file.path).info().context == plain.context_length);
  CHECK(Model(context(), plain_file.path).info().segment == plain.context_length);
  CHECK(Model(context(), plain_file.path).info().sinks == kDefaultSinks);
  CHECK(Model(context(), plain_file.path, {.context = 64, .sinks = 2}).info().context == 64);
  CHECK(Model(context(), plain_file.path, {.context = 64, .sinks = 2}).info().sinks == 2);
  CHECK_THROWS_WITH(Model(context(), plain_file.path, {.context = 8, .sinks = 8}),
                    Catch::Contains("8 sinks do not fit a context of 8 tokens"));
  CHECK(Model(context(), infini_file.path, {.context = 64}).info().context == 0);
  CHECK_FALSE(Model(context(), plain_file.path).info().has_infini_keys);
  const Model plain_on(context(), plain_file.path, {.memory = MemoryMode::On});
  CHECK(plain_on.info().memory);
  REQUIRE(plain_on.warnings().size() == 1);
  CHECK_THAT(plain_on.warnings()[0], Catch::Contains("no trained gates") && Catch::Contains("g = 1/2"));
  CHECK(Model(context(), plain_file.path).warnings().empty());
  // An untrained memory changes the outputs from the first token (the first segment mixes the
  // empty memory's zero read in at 1/2).
  const std::vector<int32_t> ids = {1, 5, 9, 17, 33};
  const Model plain_off(context(), plain_file.path);
  CHECK(Session(plain_on).feed(ids) != Session(plain_off).feed(ids));
}

TEST_CASE("Session feeds give the internal runner's logits, bit for bit", "[api][gpu]") {
  TempModel file(small(8), "infini-api-feed.gguf");
  const Model m(context(), file.path);

  const model::GgufFile gguf(file.path);
  const model::LlamaWeights weights = model::load_llama(gguf);
  model::RunnerOptions o;
  o.infini = weights.config.infini;
  model::LlamaRunner runner(ContextAccess::first_device(context()), weights, o);
  const std::vector<float> want = runner.forward(kTokens, true);
  const size_t vocab = size_t(m.info().vocab);

  Session s(m);
  CHECK(same_bits(s.feed_all(kTokens), want));
  CHECK(s.tokens_seen() == int64_t(kTokens.size()));
  s.reset();
  CHECK(s.tokens_seen() == 0);
  // A different split of the same stream, and feed's last-token logits.
  s.feed(std::span(kTokens).first(3));
  const std::vector<float> last = s.feed(std::span(kTokens).subspan(3));
  CHECK(same_bits(last, std::vector<float>(want.end() - std::ptrdiff_t(vocab), want.end())));
  CHECK_THROWS_AS(s.feed(std::vector<int32_t>{400}), Error);
  CHECK(s.tokens_seen() == int64_t(kTokens.size()));
}

TEST_CASE("Session save, restore and continue == never stopping", "[api][gpu]") {
  TempModel file(small(8), "infini-api-state.gguf");
  const Model m(context(), file.path);
  const auto first = std::span(kTokens).first(11), rest = std::span(kTokens).subspan(11);
  Session straight(m);
  straight.feed(first);
  const std::vector<float> want = straight.feed_all(rest);

  const auto state = temp_path("infini-api-state.bin");
  {
    Session saver(m);
    saver.feed(first);
    saver.save(state);
  }
  Session resumed(m);
  resumed.feed(rest);  // unrelated history that the restore replaces
  resumed.restore(state);
  CHECK(resumed.tokens_seen() == 11);
  CHECK(same_bits(resumed.feed_all(rest), want));

  // The state carries the last logits: a restored session generates at once, the same tokens
  // and then the same logits as the session it was saved from; save() bytes restore alike.
  const SamplingOptions sampling{.temperature = 0.9, .top_k = 0, .top_p = 1.0, .seed = 5};
  const std::vector<int32_t> generated = straight.generate(6, sampling);
  const std::vector<std::byte> bytes = straight.save();
  const std::vector<float> after = straight.feed(std::span(kTokens).first(3));
  resumed.restore(state);
  Session from_bytes(m);
  from_bytes.restore(bytes);
  CHECK(from_bytes.tokens_seen() == int64_t(kTokens.size()) + int64_t(generated.size()));
  CHECK(same_bits(from_bytes.feed(std::span(kTokens).first(3)), after));
  Session regenerated(m);
  regenerated.feed(first);
  regenerated.feed_all(rest);
  regenerated.save(state);
  resumed.restore(state);
  CHECK(resumed.generate(6, sampling) == generated);

  // Same shape, other weights: refused by the model digest, naming it.
  model::RandomLlamaOptions reseeded = small(8);
  reseeded.seed = 99;
  TempModel twin_file(reseeded, "infini-api-twin.gguf");
  const Model twin(context(), twin_file.path);
  CHECK(twin.info().digest != m.info().digest);
  Session twin_session(twin);
  try {
    twin_session.restore(bytes);
    FAIL("a state of other weights was restored");
  } catch (const Error& e) {
    CHECK(one_line(e));
    CHECK_THAT(e.what(), Catch::Contains("another model") && Catch::Contains(digest_hex(m.info().digest)));
  }
  CHECK(twin_session.tokens_seen() == 0);

  // A state from a model of another shape is refused and changes nothing.
  TempModel other_file(other_shape(), "infini-api-other.gguf");
  const Model other(context(), other_file.path);
  Session foreign(other);
  foreign.feed(first);
  const auto foreign_state = temp_path("infini-api-foreign.bin");
  foreign.save(foreign_state);
  const int64_t seen = resumed.tokens_seen();
  try {
    resumed.restore(foreign_state);
    FAIL("a foreign state was restored");
  } catch (const Error& e) {
    CHECK(one_line(e));
    CHECK_THAT(e.what(), Catch::Contains("saved state is for"));
  }
  CHECK(resumed.tokens_seen() == seen);
  // ... and so is a state for the same model with another segment length.
  Session other_segment(Model(context(), file.path, {.segment = 4}));
  CHECK_THROWS_AS(other_segment.restore(state), Error);
  std::filesystem::remove(state);
  std::filesystem::remove(foreign_state);
}

TEST_CASE("Session feed with progress: pieces end on segment boundaries, same logits", "[api][gpu]") {
  TempModel file(small(8), "infini-api-progress.gguf");
  const Model m(context(), file.path);
  Session plain(m), stepped(m);
  plain.feed(std::span(kTokens).first(3));
  stepped.feed(std::span(kTokens).first(3));
  const std::vector<float> want = plain.feed(std::span(kTokens).subspan(3));
  std::vector<FeedProgress> seen;
  const std::vector<float> got = stepped.feed(std::span(kTokens).subspan(3), [&](const FeedProgress& p) {
    seen.push_back(p);
    return true;
  });
  CHECK(same_bits(got, want));
  // 17 tokens from position 3 with N = 8: 5 to the boundary at 8, 8 to 16, the last 4.
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].fed == 5);
  CHECK(seen[1].fed == 13);
  CHECK(seen[2].fed == 17);
  CHECK(seen[2].total == 17);
  CHECK(seen[1].tokens_seen == 16);
  CHECK(seen[0].at_segment_boundary);
  CHECK(seen[1].at_segment_boundary);
  CHECK_FALSE(seen[2].at_segment_boundary);
  // Returning false stops after that piece; what was fed stays fed.
  Session stopped(m);
  stopped.feed(kTokens, [](const FeedProgress&) { return false; });
  CHECK(stopped.tokens_seen() == 8);
  CHECK_THROWS_WITH(stopped.feed(std::span<const int32_t>{}, nullptr), Catch::Contains("nothing to feed"));
}

TEST_CASE("Session snapshots restore in memory exactly as state files do", "[api][gpu]") {
  TempModel file(small(8), "infini-api-snapshot.gguf");
  const Model m(context(), file.path);
  const auto first = std::span(kTokens).first(8), rest = std::span(kTokens).subspan(8);
  Session session(m);
  session.feed(first);
  const SessionSnapshot at8 = session.snapshot();
  CHECK(at8.tokens_seen() == 8);
  CHECK(at8.bytes() > 0);
  const std::vector<float> want = session.feed_all(rest);
  session.restore(at8);
  CHECK(session.tokens_seen() == 8);
  CHECK(same_bits(session.feed_all(rest), want));
  // A snapshot of another model shape is refused and changes nothing.
  TempModel other_file(other_shape(), "infini-api-snapshot-other.gguf");
  Session foreign(Model(context(), other_file.path));
  foreign.feed(first);
  CHECK_THROWS_AS(session.restore(foreign.snapshot()), Error);
  CHECK(session.tokens_seen() == int64_t(kTokens.size()));
  CHECK_THROWS_WITH(session.restore(SessionSnapshot{}), Catch::Contains("empty"));
}

TEST_CASE("Session stages and the context's layer split", "[api][gpu]") {
  TempModel file(small(8), "infini-api-stages.gguf");
  const Model m(context(), file.path);
  const Session session(m);
  const std::vector<SessionStage> stages = session.stages();
  REQUIRE(stages.size() == 1);
  CHECK(stages[0].first_layer == 0);
  CHECK(stages[0].layers == m.info().layers);
  CHECK(stages[0].device.name == context().device().name);
  CHECK(session.segment() == 8);
  const std::vector<double> shares{1.0};
  CHECK(context().layers_per_device(5, shares) == std::vector<int64_t>{5});
  CHECK(context().layers_per_device(7) == std::vector<int64_t>{7});
  const std::vector<double> two{1.0, 1.0};
  CHECK_THROWS_AS(context().layers_per_device(5, two), Error);
  CHECK(memory_mode_from_name("off") == MemoryMode::Off);
  CHECK(memory_mode_name(MemoryMode::Auto) == "auto");
  CHECK_FALSE(memory_mode_from_name("sometimes"));
}

TEST_CASE("Model tokenize and detokenize round trip plain text", "[api][gpu]") {
  TempModel file(small(), "infini-api-tok.gguf");
  const Model m(context(), file.path);
  for (const std::string text : {"Hello world, the quick brown fox.", "a", "  two  spaces\tand tab\n", "x+y=42!"}) {
    INFO(text);
    const std::vector<int32_t> with_bos = m.tokenize(text, true);
    REQUIRE(!with_bos.empty());
    CHECK(with_bos.front() == m.info().bos);
    CHECK(m.detokenize(with_bos) == text);
    CHECK(m.detokenize(m.tokenize(text, false)) == text);
    std::string pieces;
    for (int32_t t : m.tokenize(text, false)) pieces += m.piece(t);
    CHECK(pieces == " " + text);  // the dummy-prefix space stays in the raw pieces
  }
  CHECK(m.tokenize("", true) == std::vector<int32_t>{m.info().bos});
  CHECK_THROWS_AS(m.piece(400), Error);
}

TEST_CASE("A byte-level BPE model tokenizes as infini::Tokenizer does and generates text", "[api][gpu][bpe]") {
  model::RandomLlamaOptions o = small();
  o.tokenizer = "gpt2";  // llama-bpe: BOS by default
  TempModel file(o, "infini-api-bpe.gguf");
  const Model m(context(), file.path);
  const Tokenizer alone(file.path);
  CHECK(alone.kind() == "gpt2");
  CHECK(m.info().add_bos);
  const std::string text = "Hello world! The stream's memory: 2024 tokens.\n\tCafé 日本語 🙂";
  const std::vector<int32_t> ids = m.tokenize(text, true);
  CHECK(ids == alone.encode(text, true));
  CHECK(ids.front() == alone.bos());
  CHECK(m.detokenize(ids) == text);
  Session s(m);
  s.feed(ids);
  std::string generated;
  const std::vector<int32_t> got = s.generate(6, {.temperature = 0}, [&](int32_t, std::string_view piece) {
    generated += piece;
    return true;
  });
  CHECK(!got.empty());
  CHECK(generated == m.detokenize(got));
}

TEST_CASE("Session greedy generation is the argmax chain", "[api][gpu]") {
  TempModel file(small(8), "infini-api-gen.gguf");
  const Model m(context(), file.path);
  const std::vector<int32_t> prompt = m.tokenize("Once upon a time", true);

  Session s(m);
  s.feed(prompt);
  std::string text;
  std::vector<int32_t> seen;
  const std::vector<int32_t> got = s.generate(12, {.temperature = 0}, [&](int32_t t, std::string_view piece) {
    seen.push_back(t);
    text += piece;
    return true;
  });
  CHECK(!got.empty());
  CHECK(seen == got);
  std::string want_text;
  for (int32_t t : got) want_text += m.piece(t);
  CHECK(text == want_text);
  CHECK(s.tokens_seen() == int64_t(prompt.size() + got.size()));

  // The same chain by hand: each token the argmax of the logits before it.
  Session by_hand(m);
  std::vector<float> logits = by_hand.feed(prompt);
  std::vector<int32_t> chain;
  while (chain.size() < 12) {
    const int32_t next = argmax(logits);
    if (next == m.info().eos) break;
    chain.push_back(next);
    logits = by_hand.feed(std::span(&next, 1));
  }
  CHECK(got == chain);

  // Again from the start: the same tokens; a callback returning false stops after that token.
  s.reset();
  s.feed(prompt);
  CHECK(s.generate(12, {.temperature = 0}) == got);
  s.reset();
  s.feed(prompt);
  const auto stopped = s.generate(12, {.temperature = 0}, [](int32_t, std::string_view) { return false; });
  CHECK(stopped.size() == std::min<size_t>(1, got.size()));
  // Sampling with a seed repeats itself.
  s.reset();
  s.feed(prompt);
  const auto a = s.generate(8, {.temperature = 1.0, .seed = 7});
  s.reset();
  s.feed(prompt);
  CHECK(s.generate(8, {.temperature = 1.0, .seed = 7}) == a);
  CHECK_THROWS_AS(s.generate(-1), Error);

  // Top-k sampling draws from the ranking the device reads back; the host sampler drawing from
  // whole rows gives the same tokens. A later call that needs whole rows (top-k 0) gets the last
  // one read back from the device.
  s.reset();
  s.feed(prompt);
  const std::vector<int32_t> drawn = s.generate(8, {.temperature = 0.9, .top_k = 40, .top_p = 0.9, .seed = 3});
  const std::vector<int32_t> more = s.generate(4, {.temperature = 0.9, .top_k = 0, .seed = 4});
  Session host(m);
  std::vector<float> row = host.feed(prompt);
  auto draw_by_hand = [&](const model::SamplerOptions& options, size_t count) {
    model::Sampler sampler(options);
    std::vector<int32_t> out;
    while (out.size() < count) {
      const int32_t next = sampler.sample(row);
      if (next == m.info().eos) break;
      out.push_back(next);
      row = host.feed(std::span(&next, 1));
    }
    return out;
  };
  CHECK(drawn == draw_by_hand({0.9, 40, 0.9, 3}, 8));
  CHECK(more == draw_by_hand({0.9, 0, 0.95, 4}, 4));
}

TEST_CASE("Model and Session errors are one line", "[api][gpu]") {
  auto fails = [](const std::filesystem::path& p, const char* what) {
    try {
      Model m(context(), p);
      FAIL("opened " << p);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(one_line(e));
      CHECK_THAT(e.what(), Catch::Contains(p.filename().string()));
      CHECK_THAT(e.what(), Catch::Contains(what, Catch::CaseSensitive::No));
    }
  };
  fails(temp_path("infini-api-no-such-file.gguf"), "");
  const auto junk = temp_path("infini-api-junk.gguf");
  std::ofstream(junk, std::ios::binary) << "this is not a GGUF file at all, just text";
  fails(junk, "magic");
  std::filesystem::remove(junk);

  TempModel file(small(), "infini-api-errors.gguf");
  Session s(Model(context(), file.path));  // the session keeps the model alive
  CHECK_THROWS_WITH(s.generate(1), Catch::Contains("feed at least one token"));
  CHECK_THROWS_AS(s.feed(std::vector<int32_t>{}), Error);
  const auto damaged = temp_path("infini-api-damaged.bin");
  std::ofstream(damaged, std::ios::binary) << "garbage";
  try {
    s.restore(damaged);
    FAIL("restored garbage");
  } catch (const Error& e) {
    CHECK(one_line(e));
  }
  std::filesystem::remove(damaged);
  CHECK_THROWS_AS(s.restore(temp_path("infini-api-no-such-state.bin")), Error);
}

TEST_CASE("The README's model example runs", "[api][gpu]") {
  TempModel file(small(8), "infini-api-readme.gguf");
  const auto state = temp_path("infini-api-readme.bin");
  std::ostringstream story;
  std::streambuf* const cout = std::cout.rdbuf(story.rdbuf());
  try {
    readme_example(file.path, state);
  } catch (...) {
    std::cout.rdbuf(cout);
    throw;
  }
  std::cout.rdbuf(cout);
  CHECK(std::filesystem::exists(state));
  Session s(Model(context(), file.path));
  s.restore(state);
  CHECK(s.tokens_seen() > 0);
  CHECK(!story.str().empty());
  std::filesystem::remove(state);
}

TEST_CASE("selfcheck passes on the device for every storage pair, quantized ones included", "[api][gpu]") {
  const std::vector<SelfcheckResult> results = selfcheck(context());
  std::set<std::string> pairs;
  for (const SelfcheckResult& r : results) {
    INFO(r.name << ": max error " << r.max_error);
    CHECK(r.passed);
    CHECK(r.max_error == 0);
    pairs.insert(r.name.substr(r.name.find(" A ")));
  }
  // Weights of every element type against f32 activations, and f16 against f16.
  std::set<std::string> want{" A f16 B f16"};
  for (const ElementTraits& e : kElementTypes) want.insert(" A f32 B " + std::string(e.name));
  CHECK(pairs == want);
}

}  // namespace
}  // namespace infini::test
