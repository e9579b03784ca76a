// Session state files: save, restore into a fresh runner and continue gives bit-identical logits
// to never stopping; damaged, truncated, foreign or mismatched files are refused with one line
// and leave the session as it was.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "exec/llama_runner.hpp"
#include "formats/session_state.hpp"
#include "support/tiny_llama.hpp"
#include "support/temp_path.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;
using model::RunnerOptions;

const std::vector<int32_t> kTokens = {3, 17, 42, 0, 49, 8, 8, 21, 33, 5, 12, 40, 7, 19, 2, 44, 30, 1, 9, 11};

RunnerOptions options(int64_t segment) {
  RunnerOptions o;
  o.infini.segment = segment;
  return o;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST_CASE_METHOD(GpuTest, "session state: save, restore elsewhere, continue == never stopping", "[gpu][state]") {
  testing::TinyLlama tiny({});
  const auto first = std::span<const int32_t>(kTokens).first(11), rest = std::span<const int32_t>(kTokens).subspan(11);
  LlamaRunner straight(dev(), tiny.weights, options(4));
  straight.forward(first, false);
  const std::vector<float> want = straight.forward(rest, true);

  const auto path = temp_path("infini-test-state.bin");
  {
    LlamaRunner saver(dev(), tiny.weights, options(4));
    saver.forward(first, false);
    stream::write_session_state(path, saver.save_state());
  }
  LlamaRunner resumed(dev(), tiny.weights, options(4));
  resumed.forward(rest, false);  // some unrelated history that the restore must replace
  resumed.restore_state(stream::read_session_state(path));
  CHECK(resumed.tokens_seen() == 11);
  CHECK(same_bits(resumed.forward(rest, true), want));
  std::filesystem::remove(path);
}

TEST_CASE_METHOD(GpuTest, "session state: damaged and foreign files are refused", "[gpu][state]") {
  testing::TinyLlama tiny({});
  LlamaRunner runner(dev(), tiny.weights, options(4));
  runner.forward(std::span<const int32_t>(kTokens).first(6), false);
  const std::vector<std::byte> good = stream::encode_session_state(runner.save_state());

  auto refused = [&](const std::vector<std::byte>& bytes, const char* words) {
    INFO(words);
    try {
      stream::decode_session_state(bytes, "state.bin");
      FAIL("accepted");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find(words) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
  };
  int cases = 0;
  for (size_t cut : {size_t(0), size_t(5), size_t(20), good.size() / 2, good.size() - 9, good.size() - 1}) {
    refused(std::vector<std::byte>(good.begin(), good.begin() + std::ptrdiff_t(cut)), "state.bin");
    ++cases;
  }
  for (size_t at = 12; at < good.size(); at += 97) {  // one flipped bit anywhere after the version
    std::vector<std::byte> bad = good;
    bad[at] ^= std::byte{0x10};
    refused(bad, "checksum");
    ++cases;
  }
  std::vector<std::byte> magic = good;
  magic[0] = std::byte{'X'};
  refused(magic, "bad magic");
  std::vector<std::byte> version = good;
  version[8] = std::byte{9};
  refused(version, "version 9");
  CHECK(cases >= 10);

  // A valid file of another model or segment length: refused, and the session is untouched.
  testing::TinyLlamaSpec other_spec;
  other_spec.ffn = 40;
  testing::TinyLlama other(other_spec);
  LlamaRunner foreign(dev(), other.weights, options(4));
  CHECK_THROWS_WITH(foreign.restore_state(stream::decode_session_state(good, "state.bin")),
                    Catch::Contains("ffn 48") && Catch::Contains("ffn 40"));
  LlamaRunner other_segment(dev(), tiny.weights, options(5));
  CHECK_THROWS_WITH(other_segment.restore_state(stream::decode_session_state(good, "state.bin")),
                    Catch::Contains("segment 4"));
  CHECK(other_segment.tokens_seen() == 0);
}

}  // namespace
}  // namespace infini::test
