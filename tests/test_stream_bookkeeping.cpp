// A stream's host-side bookkeeping does not grow with its length: after 1,000 segments a model
// holds the same recorded command buffers, Vulkan objects, pipelines, device memory and (within a
// small slack for the allocator) host heap as after 10 segments. Pieces of every size the runtime
// sees are mixed in: one token at a time (decode) and a piece ending each segment (prefill).
#include <malloc.h>

#include <filesystem>

#include "gpu_fixture.hpp"
#include "model/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "model/llama_runner.hpp"
#include "reference/random_llama.hpp"
#include "temp_path.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::test {
namespace {

struct Bookkeeping {
  size_t recorded_pieces;
  int64_t command_streams, descriptor_pools, query_pools;
  size_t pipelines;
  uint64_t device_bytes;
  size_t heap_bytes;
};

Bookkeeping count(const model::LlamaRunner& runner, vk::Device& dev) {
  const vk::ObjectCensus& c = vk::object_census();
  return {runner.recorded_pieces(), c.command_streams.load(), c.descriptor_pools.load(), c.query_pools.load(),
          dev.pipelines().pipeline_count(), dev.allocated_bytes(), mallinfo2().uordblks};
}

TEST_CASE_METHOD(GpuTest, "a stream's bookkeeping is the same after segment 10 and segment 1000", "[gpu][bookkeeping]") {
  constexpr int64_t kSegment = 4;
  model::RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 32;
  o.layers = 2;
  o.heads = 2;
  o.heads_kv = 1;
  o.ffn = 48;
  o.segment = kSegment;
  const std::filesystem::path path = temp_path("infini-bookkeeping.gguf");
  model::random_llama(o).write(path);
  const model::GgufFile file(path);
  const model::LlamaWeights weights = model::load_llama(file);
  model::RunnerOptions options;
  options.infini = weights.config.infini;
  model::LlamaRunner runner(dev(), weights, options);

  int32_t next = 1;
  auto stream_segments = [&](int64_t segments) {
    for (int64_t s = 0; s < segments; ++s) {
      // Alternate: a segment token by token, then one fed as 1 + 3 tokens.
      const bool decode = runner.tokens_seen() / kSegment % 2 == 0;
      for (int64_t fed = 0; fed < kSegment;) {
        const int64_t n = decode ? 1 : (fed == 0 ? 1 : kSegment - 1);
        std::vector<int32_t> ids(static_cast<size_t>(n), 0);
        for (int32_t& id : ids) id = next = (next * 31 + 7) % 300;
        runner.forward(ids, false);
        fed += n;
      }
    }
  };
  stream_segments(10);
  const Bookkeeping early = count(runner, dev());
  stream_segments(990);
  const Bookkeeping late = count(runner, dev());
  std::filesystem::remove(path);

  CHECK(runner.tokens_seen() == 1000 * kSegment);
  CHECK(late.recorded_pieces == early.recorded_pieces);
  CHECK(late.command_streams == early.command_streams);
  CHECK(late.descriptor_pools == early.descriptor_pools);
  CHECK(late.query_pools == early.query_pools);
  CHECK(late.pipelines == early.pipelines);
  CHECK(late.device_bytes == early.device_bytes);
  INFO("host heap in use: " << early.heap_bytes << " B after 10 segments, " << late.heap_bytes << " B after 1000");
  CHECK(late.heap_bytes <= early.heap_bytes + 64 * 1024);
}

}  // namespace
}  // namespace infini::test
