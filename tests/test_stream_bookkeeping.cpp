// A stream's host-side bookkeeping does not grow with its length: after 1,000 segments a model
// holds the same recorded command buffers, Vulkan objects, pipelines, device memory and (within a
// small slack for the allocator) host heap as after 10 segments, and the pieces in between made
// no memory allocation and no command stream. Pieces of every size the runtime sees are mixed in:
// one token at a time (decode) and a piece ending each segment (prefill). It runs twice: as the
// device is, and acting as a discrete GPU whose device memory the host cannot map, where every
// piece's inputs and outputs go through staging copies.
#include <malloc.h>

#include <filesystem>

#include "support/gpu_fixture.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "exec/llama_runner.hpp"
#include "reference/random_llama.hpp"
#include "support/temp_path.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::test {
namespace {

struct Bookkeeping {
  size_t recorded_pieces;
  int64_t command_streams, descriptor_pools, query_pools, command_streams_made, memory_allocations_made;
  size_t pipelines;
  uint64_t device_bytes;
  size_t heap_bytes;
};

Bookkeeping count(const model::LlamaRunner& runner, vk::Device& dev) {
  const vk::ObjectCensus& c = vk::object_census();
  return {runner.recorded_pieces(), c.command_streams.load(), c.descriptor_pools.load(), c.query_pools.load(),
          c.command_streams_made.load(), c.memory_allocations_made.load(), dev.pipelines().pipeline_count(), dev.allocated_bytes(), mallinfo2().uordblks};
}

// A small random model's weights (their file is gone, the bytes stay in `file`).
struct SmallModel {
  std::unique_ptr<model::GgufFile> file;
  model::LlamaWeights weights;
  explicit SmallModel(int64_t segment) {
    model::RandomLlamaOptions o;
    o.vocab = 300;
    o.embd = 32;
    o.layers = 2;
    o.heads = 2;
    o.heads_kv = 1;
    o.ffn = 48;
    o.segment = segment;
    const std::filesystem::path path = temp_path("infini-bookkeeping.gguf");
    model::random_llama(o).write(path);
    file = std::make_unique<model::GgufFile>(path);
    weights = model::load_llama(*file);
    std::filesystem::remove(path);
  }
  model::RunnerOptions options() const {
    model::RunnerOptions r;
    r.infini = weights.config.infini;
    return r;
  }
};

// Streams 1,000 segments of a small model on `dev`; returns the last logits.
std::vector<float> check_stream_bookkeeping(vk::Device& dev) {
  constexpr int64_t kSegment = 4;
  const SmallModel small(kSegment);
  model::LlamaRunner runner(dev, small.weights, small.options());

  int32_t next = 1;
  std::vector<float> logits;
  auto stream_segments = [&](int64_t segments) {
    for (int64_t s = 0; s < segments; ++s) {
      // Alternate: a segment token by token, then one fed as 1 + 3 tokens.
      const bool decode = runner.tokens_seen() / kSegment % 2 == 0;
      for (int64_t fed = 0; fed < kSegment;) {
        const int64_t n = decode ? 1 : (fed == 0 ? 1 : kSegment - 1);
        std::vector<int32_t> ids(static_cast<size_t>(n), 0);
        for (int32_t& id : ids) id = next = (next * 31 + 7) % 300;
        logits = runner.forward(ids, false);
        fed += n;
      }
    }
  };
  stream_segments(10);
  const Bookkeeping early = count(runner, dev);
  stream_segments(990);
  const Bookkeeping late = count(runner, dev);

  CHECK(runner.tokens_seen() == 1000 * kSegment);
  CHECK(late.recorded_pieces == early.recorded_pieces);
  CHECK(late.command_streams == early.command_streams);
  CHECK(late.descriptor_pools == early.descriptor_pools);
  CHECK(late.query_pools == early.query_pools);
  CHECK(late.command_streams_made == early.command_streams_made);
  CHECK(late.memory_allocations_made == early.memory_allocations_made);
  CHECK(late.pipelines == early.pipelines);
  CHECK(late.device_bytes == early.device_bytes);
  INFO("host heap in use: " << early.heap_bytes << " B after 10 segments, " << late.heap_bytes << " B after 1000");
  // Growth of 2-6 KB is usual; one clean-clone CI run saw a single block of about 65 KB that the
  // driver's threads usually allocate before segment 10 come after it. 128 KB still catches 32
  // bytes kept per token (4,000 tokens).
  CHECK(late.heap_bytes <= early.heap_bytes + 128 * 1024);
  return logits;
}

TEST_CASE_METHOD(GpuTest, "a stream's bookkeeping is the same after segment 10 and segment 1000", "[gpu][bookkeeping]") {
  const std::vector<float> as_is = check_stream_bookkeeping(dev());
  vk::DeviceOptions discrete;
  discrete.discrete_memory = true;
  const std::unique_ptr<vk::Device> staged = open_second_device(discrete);
  const vk::Buffer probe(*staged, 64, vk::MemoryUse::DeviceLocal, "probe");
  REQUIRE(probe.mapped() == nullptr);  // the staging paths run
  const std::vector<float> through_staging = check_stream_bookkeeping(*staged);
  CHECK(through_staging == as_is);  // same kernels, same device: the same bits
}

TEST_CASE_METHOD(GpuTest, "decode replays one recording at every position of a segment", "[gpu][bookkeeping]") {
  constexpr int64_t kSegment = 64;
  const SmallModel small(kSegment);
  model::LlamaRunner runner(dev(), small.weights, small.options());
  int32_t next = 5;
  auto decode = [&](int64_t tokens) {
    for (int64_t i = 0; i < tokens; ++i) {
      next = (next * 31 + 7) % 300;
      runner.forward(std::span<const int32_t>(&next, 1), false);
    }
  };
  decode(2 * kSegment);  // two segments: the first (M = 0) and a later one, each with its end
  const int64_t made = vk::object_census().command_streams_made.load();
  // One token, with and without the segment's end, in the first segment and after it.
  CHECK(runner.recorded_pieces() == 4);
  decode(3 * kSegment + 7);
  CHECK(runner.recorded_pieces() == 4);
  CHECK(vk::object_census().command_streams_made.load() == made);
}

}  // namespace
}  // namespace infini::test
