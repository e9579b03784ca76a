// One model streamed over several logical devices (each its own VkDevice, here all on the one
// physical device) as a layer pipeline: the same logits as on one device for prefill and decode,
// with memory on over several segments; state saved on one split restores on any other; splits
// with more devices than layers, explicit splits, and failures naming the device and its layers.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <memory>
#include <span>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "reference/llama_reference.hpp"
#include "exec/layer_split.hpp"
#include "exec/llama_runner.hpp"
#include "support/tiny_llama.hpp"
#include "util/nmse.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"
#include "vk/shared_buffer.hpp"
#include "vk/shared_signal.hpp"
#include "vk/transfer.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;

const std::vector<int32_t> kTokens = {3, 17, 42, 0, 49, 8, 8, 21, 33, 5, 12, 40, 7, 19, 2, 44, 30, 11, 9, 27, 36, 1, 48};

testing::TinyLlamaSpec spec() {
  testing::TinyLlamaSpec s;
  s.layers = 4;
  s.seed = 11;
  return s;
}

model::RunnerOptions options(model::Handoff handoff = model::Handoff::Auto,
                             model::HandoffWait wait = model::HandoffWait::Auto) {
  model::RunnerOptions o;
  o.handoff = handoff;
  o.handoff_wait = wait;
  o.infini.segment = 5;  // 23 tokens: four full segments and an open one
  o.infini.memory = true;
  o.max_piece = 3;       // pieces inside segments: both boundaries exercised
  return o;
}

double err(std::span<const float> got, std::span<const float> want) { return nmse(got, want); }

// `count` logical devices of their own (not the shared test device). `discrete`: they act as
// discrete GPUs, whose memory the host cannot map, so hidden states travel through staging.
std::vector<std::unique_ptr<vk::Device>> logical_devices(size_t count, bool discrete = false) {
  std::vector<std::unique_ptr<vk::Device>> out;
  for (size_t i = 0; i < count; ++i)
    out.push_back(open_second_device({.disk_pipeline_cache = false, .discrete_memory = discrete}));
  return out;
}

std::vector<vk::Device*> raw(const std::vector<std::unique_ptr<vk::Device>>& devices) {
  std::vector<vk::Device*> out;
  for (const auto& d : devices) out.push_back(d.get());
  return out;
}

std::vector<float> decode_all(LlamaRunner& runner, std::span<const int32_t> tokens) {
  std::vector<float> out;
  for (int32_t t : tokens) {
    const std::vector<float> l = runner.forward(std::span<const int32_t>(&t, 1), false);
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

TEST_CASE_METHOD(GpuTest, "a model over 1, 2 and 3 devices gives the same logits, prefill and decode, on every hand-off",
                 "[gpu][model][multi]") {
  testing::TinyLlama tiny(spec());
  const std::vector<double> reference = model::LlamaReference(tiny.weights, [] {
    model::RunnerOptions o = options();
    return o.infini;
  }()).prefill(kTokens);
  LlamaRunner one(dev(), tiny.weights, options());
  const std::vector<float> want = one.forward(kTokens, true);
  CHECK(nmse(std::span<const float>(want), std::span<const double>(reference)) <= 1e-5);
  one.reset();
  const std::vector<float> want_decode = decode_all(one, kTokens);

  const size_t count = GENERATE(2, 3);
  const model::Handoff handoff = GENERATE(model::Handoff::Host, model::Handoff::HostMemory, model::Handoff::DeviceMemory);
  const model::HandoffWait wait = GENERATE(model::HandoffWait::Host, model::HandoffWait::Timeline, model::HandoffWait::SyncFile);
  const bool discrete = count == 3;
  INFO(count << " devices" << (discrete ? ", acting as discrete GPUs" : "") << ", hand-off " << model::handoff_name(handoff)
             << ", waits " << model::handoff_wait_name(wait));
  auto devices = logical_devices(count, discrete);
  const auto sharing = model::sharing_of(handoff);
  if (sharing && !vk::can_share(*sharing, *devices[0], *devices[1])) {
    CHECK_THROWS_WITH(LlamaRunner(raw(devices), tiny.weights, options(handoff)),
                      Catch::Contains("is not possible") && Catch::Contains(model::handoff_name(handoff)));
    WARN("this driver cannot hand off through " << model::handoff_name(handoff) << ": path not run");
    return;
  }
  // The devices wait for each other on the GPU only for pieces handed on through shared memory.
  const auto signal = model::signal_of(wait);
  if (signal && (!sharing || !vk::can_share_signal(*signal, *devices[0], *devices[1]))) {
    CHECK_THROWS_WITH(LlamaRunner(raw(devices), tiny.weights, options(handoff, wait)),
                      Catch::Contains("is not possible") && Catch::Contains(model::handoff_wait_name(wait)));
    if (sharing) WARN("this driver cannot share a " << vk::signal_kind_name(*signal) << " signal: path not run");
    return;
  }
  LlamaRunner split(raw(devices), tiny.weights, options(handoff, wait));
  REQUIRE(split.stages().size() == count);
  CHECK(split.handoffs() == std::vector<model::Handoff>(count - 1, handoff));
  CHECK(split.handoff_waits() == std::vector<model::HandoffWait>(count - 1, wait));
  CHECK(split.stages().front().layers.first == 0);
  CHECK(split.stages().back().layers.last == 4);
  CHECK(err(split.forward(kTokens, true), want) <= 1e-7);
  // The first stage takes its next piece onto the device while the one before still runs
  // wherever nothing of either passes through the host: its own inputs (token ids) and its
  // outputs through shared memory.
  const int64_t ahead = split.handoff_profiles().front().submitted_ahead;
  if (sharing) CHECK(ahead > 0);
  else CHECK(ahead == 0);
  // Where the devices wait for each other, every later stage receives every piece as soon as the
  // stage before has submitted it (23 tokens in pieces of at most 3 inside segments of 5: four
  // times 3 + 2, then 3, so 9 pieces).
  for (size_t s = 1; s < count; ++s) CHECK(split.handoff_profiles()[s].device_waits == (signal ? 9 : 0));
  split.reset();
  // Later pieces of a prefill that does not want every row's logits.
  const std::vector<float> last = split.forward(kTokens, false);
  CHECK(err(last, std::span<const float>(want).last(50)) <= 1e-7);
  split.reset();
  CHECK(err(decode_all(split, kTokens), want_decode) <= 1e-7);
  CHECK(split.tokens_seen() == int64_t(kTokens.size()));
  if (signal) CHECK(split.handoff_profiles().back().device_waits == 9 + 9 + int64_t(kTokens.size()));
}

TEST_CASE_METHOD(GpuTest, "state saved on a 2-device split restores on 1 and on 3 devices and continues",
                 "[gpu][model][multi]") {
  testing::TinyLlama tiny(spec());
  const std::span<const int32_t> all(kTokens);
  const size_t cut = 12;  // inside the third segment: open tokens in the state
  LlamaRunner straight(dev(), tiny.weights, options());
  const std::vector<float> want = straight.forward(all, true);
  const std::span<const float> want_rest = std::span<const float>(want).subspan(cut * 50);

  auto two = logical_devices(2);
  LlamaRunner first(raw(two), tiny.weights, options());
  first.forward(all.first(cut), false);
  const stream::SessionState saved = first.save_state();

  for (size_t count : {1, 3}) {
    INFO("restored on " << count << " devices");
    auto devices = logical_devices(count);
    LlamaRunner resumed(raw(devices), tiny.weights, options());
    resumed.restore_state(saved);
    CHECK(resumed.tokens_seen() == int64_t(cut));
    CHECK(err(resumed.forward(all.subspan(cut), true), want_rest) <= 1e-7);
  }
}

TEST_CASE_METHOD(GpuTest, "hand-offs: auto takes device memory on one physical device; bad names are refused",
                 "[gpu][model][multi]") {
  auto devices = logical_devices(2);
  const bool fds = vk::can_share(vk::SharingKind::DeviceMemory, *devices[0], *devices[1]);
  const bool host = vk::can_share(vk::SharingKind::HostMemory, *devices[0], *devices[1]);
  const model::Handoff best = fds ? model::Handoff::DeviceMemory : host ? model::Handoff::HostMemory : model::Handoff::Host;
  // Unless INFINI_HANDOFF forces a kind for the whole run.
  if (!std::getenv("INFINI_HANDOFF")) CHECK(model::choose_handoff(model::Handoff::Auto, *devices[0], *devices[1]) == best);
  // Two logical devices of one physical device are one device by their UUIDs wherever fds exist.
  CHECK(fds == devices[0]->caps().external_memory_fd);
  CHECK(model::parse_handoff("host-memory") == model::Handoff::HostMemory);
  CHECK_THROWS_WITH(model::parse_handoff("pcie"), Catch::Contains("unknown hand-off kind 'pcie'") &&
                                                      Catch::Contains("device-memory"));
}

TEST_CASE_METHOD(GpuTest, "shared memory: what one device writes the other reads, and nothing is left over",
                 "[gpu][multi]") {
  auto devices = logical_devices(2, true);
  const vk::SharingKind kind = GENERATE(vk::SharingKind::HostMemory, vk::SharingKind::DeviceMemory);
  INFO(vk::sharing_kind_name(kind));
  if (!vk::can_share(kind, *devices[0], *devices[1])) {
    WARN("this driver cannot share " << vk::sharing_kind_name(kind) << ": not run");
    return;
  }
  const uint64_t before_0 = devices[0]->allocated_bytes(), before_1 = devices[1]->allocated_bytes();
  {
    const std::vector<float> values = {1.5f, -2.0f, 3.25f, 1e-3f, 7.0f};
    const uint64_t bytes = values.size() * 4;
    vk::SharedBuffer shared(*devices[0], *devices[1], bytes, kind, "test");
    // Device memory counts once, on the device that made it; host memory on neither.
    CHECK(devices[1]->allocated_bytes() == before_1);
    if (kind == vk::SharingKind::DeviceMemory) CHECK(devices[0]->allocated_bytes() >= before_0 + bytes);
    else CHECK(devices[0]->allocated_bytes() == before_0);
    vk::Buffer source(*devices[0], bytes, vk::MemoryUse::DeviceLocal, "source");
    vk::upload(source, std::span<const float>(values));
    vk::CommandStream produce(*devices[0]);
    produce.begin();
    produce.copy(vk::BufferRange::whole(source), vk::BufferRange::whole(shared.producer_side()));
    produce.release_external(vk::BufferRange::whole(shared.producer_side()));
    produce.end();
    produce.submit_and_wait();
    vk::Buffer sink(*devices[1], bytes, vk::MemoryUse::DeviceLocal, "sink");
    vk::CommandStream consume(*devices[1]);
    consume.begin();
    consume.acquire_external(vk::BufferRange::whole(shared.consumer_side()));
    consume.copy(vk::BufferRange::whole(shared.consumer_side()), vk::BufferRange::whole(sink));
    consume.end();
    consume.submit_and_wait();
    std::vector<float> got(values.size());
    vk::download(sink, 0, got.data(), bytes);
    CHECK(got == values);
  }
  CHECK(devices[0]->allocated_bytes() == before_0);
  CHECK(devices[1]->allocated_bytes() == before_1);
}

// Open file descriptors of this process (sync files are fds): none may be left over.
size_t open_fds() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

TEST_CASE_METHOD(GpuTest, "shared signals: one device's work waits for another's on the device, no host wait between",
                 "[gpu][multi]") {
  auto devices = logical_devices(2, true);
  vk::Device &producer = *devices[0], &consumer = *devices[1];
  const vk::SignalKind kind = GENERATE(vk::SignalKind::Timeline, vk::SignalKind::SyncFile);
  INFO(vk::signal_kind_name(kind));
  if (std::string why; !vk::can_share_signal(kind, producer, consumer, &why)) {
    CHECK_THROWS_WITH(vk::SharedSignal(producer, consumer, kind, 2), Catch::Contains("shared signal") && Catch::Contains(why));
    WARN("this driver cannot share a " << vk::signal_kind_name(kind) << " signal: not run");
    return;
  }
  std::optional<vk::SharingKind> memory;
  for (vk::SharingKind k : {vk::SharingKind::DeviceMemory, vk::SharingKind::HostMemory})
    if (!memory && vk::can_share(k, producer, consumer)) memory = k;
  if (!memory) {
    WARN("this driver shares no memory: not run");
    return;
  }
  const size_t fds_before = open_fds();
  {
    // Each round the producer fills all of a large shared buffer with the round's number (it takes
    // a while) and the consumer, submitted at once, with no host wait for the producer, copies its
    // last word out. With no signal at all it reads the round before's number, or zero (seen on
    // lavapipe). A timeline's producer also waits for a gate the host opens only once the
    // consumer is submitted, so there only the consumer device's wait can give the right number.
    // (A sync file cannot be gated so: it is exported before the host could open the gate, and
    // Mesa 26's lavapipe finishes the producer's work when it exports one, so there this shows
    // the signal's plumbing; on GPUs the wait is the consumer device's.)
    constexpr uint64_t kBytes = uint64_t(32) << 20;
    constexpr uint32_t kSlots = 2, kRounds = 6;
    vk::SharedSignal signal(producer, consumer, kind, kSlots);
    CHECK(signal.kind() == kind);
    // One shared buffer per slot, as the pipeline has: a slot is written again only once the
    // consumer that read it last is done (the host waits for that here, as the pipeline does).
    std::vector<std::unique_ptr<vk::SharedBuffer>> slots;
    for (uint32_t i = 0; i < kSlots; ++i)
      slots.push_back(std::make_unique<vk::SharedBuffer>(producer, consumer, kBytes, *memory, "test"));
    vk::Buffer sink(consumer, kRounds * 4, vk::MemoryUse::DeviceLocal, "sink");
    const bool gated = kind == vk::SignalKind::Timeline;
    VkSemaphore gate = VK_NULL_HANDLE;
    if (gated) {
      VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
      type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
      VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
      info.pNext = &type;
      REQUIRE(vkCreateSemaphore(producer.handle(), &info, nullptr, &gate) == VK_SUCCESS);
    }
    std::vector<std::unique_ptr<vk::CommandStream>> produce, consume;
    for (uint32_t i = 0; i < kSlots; ++i) {
      produce.push_back(std::make_unique<vk::CommandStream>(producer));
      consume.push_back(std::make_unique<vk::CommandStream>(consumer));
    }
    for (uint32_t round = 1; round <= kRounds; ++round) {
      const uint32_t slot = round % kSlots;
      vk::CommandStream &p = *produce[slot], &c = *consume[slot];
      const vk::SharedBuffer& shared = *slots[slot];
      c.wait();   // the slot's last reader is done
      p.begin();  // waits for this slot's previous round on the producer
      p.fill(vk::BufferRange::whole(shared.producer_side()), round);
      p.release_external(vk::BufferRange::whole(shared.producer_side()));
      p.end();
      const vk::SemaphoreValue gates[] = {{gate, round}}, signals[] = {signal.signal(round)};
      p.submit(std::span(gates).first(gated ? 1 : 0), signals);
      vk::SignalToken token = signal.handed(round);
      CHECK(token.ticket() == round);
      CHECK(token.carries_fd() == (kind == vk::SignalKind::SyncFile));
      c.begin();  // and on the consumer
      c.acquire_external(vk::BufferRange::whole(shared.consumer_side()));
      c.copy({&shared.consumer_side(), kBytes - 4, 4}, {&sink, (round - 1) * 4, 4});
      c.end();
      const vk::SemaphoreValue waits[] = {signal.wait(std::move(token), slot)};
      c.submit(waits);
      if (gated) {
        VkSemaphoreSignalInfo open{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        open.semaphore = gate;
        open.value = round;
        REQUIRE(vkSignalSemaphore(producer.handle(), &open) == VK_SUCCESS);
      }
    }
    for (auto& c : consume) c->wait();
    for (auto& p : produce) p->wait();
    if (gate) vkDestroySemaphore(producer.handle(), gate, nullptr);
    std::vector<uint32_t> got(kRounds), want(kRounds);
    vk::download(sink, 0, got.data(), kRounds * 4);
    for (uint32_t r = 0; r < kRounds; ++r) want[r] = r + 1;
    CHECK(got == want);

    // A token nobody waits for closes its sync file.
    vk::CommandStream& p = *produce[0];
    p.begin();
    p.fill(vk::BufferRange::whole(slots[0]->producer_side()), 0);
    p.end();
    const vk::SemaphoreValue signals[] = {signal.signal(kRounds + 1)};
    p.submit({}, signals);
    { const vk::SignalToken dropped = signal.handed(kRounds + 1); }
    p.wait();

    // A timeline's consumer waiting for a ticket the producer will never signal (its device
    // failed) is let go by release().
    if (kind == vk::SignalKind::Timeline) {
      vk::CommandStream& c = *consume[0];
      c.begin();
      c.fill(vk::BufferRange::whole(sink), 7);
      c.end();
      const vk::SemaphoreValue waits[] = {signal.wait(vk::SignalToken(100, std::nullopt), 0)};
      c.submit(waits);
      signal.release(100);
      c.wait();
      uint32_t first = 0;
      vk::download(sink, 0, &first, 4);
      CHECK(first == 7);
    }
  }
  CHECK(open_fds() == fds_before);
}

TEST_CASE_METHOD(GpuTest, "splits: explicit counts, more devices than layers, bad counts", "[gpu][model][multi]") {
  testing::TinyLlama tiny(spec());
  LlamaRunner one(dev(), tiny.weights, options());
  const std::vector<float> want = one.forward(kTokens, true);

  auto devices = logical_devices(3);
  const std::vector<int64_t> uneven = {3, 0, 1};  // the middle device gets nothing and is left out
  LlamaRunner skewed(raw(devices), tiny.weights, options(), uneven);
  REQUIRE(skewed.stages().size() == 2);
  CHECK(skewed.stages()[0].layers.count() == 3);
  CHECK(skewed.stages()[1].device == devices[2].get());
  CHECK(err(skewed.forward(kTokens, true), want) <= 1e-7);

  CHECK(model::split_layers(2, std::vector<double>{1, 1, 1}) == std::vector<int64_t>{1, 1, 0});
  CHECK(model::split_layers(8, std::vector<double>{3, 1}) == std::vector<int64_t>{6, 2});
  CHECK(model::split_layers(4, std::vector<double>{1, 1, 1}) == std::vector<int64_t>{2, 1, 1});
  CHECK_THROWS_WITH(LlamaRunner(raw(devices), tiny.weights, options(), std::vector<int64_t>{2, 1}),
                    Catch::Contains("the model has 4 layers and 3 devices"));
  CHECK_THROWS_WITH(LlamaRunner(raw(devices), tiny.weights, options(), std::vector<int64_t>{2, 3, -1}),
                    Catch::Contains("layers"));
}

TEST_CASE_METHOD(GpuTest, "a device that cannot hold its layers is named with the layers", "[gpu][model][multi]") {
  testing::TinyLlama tiny(spec());
  auto roomy = open_second_device({.disk_pipeline_cache = false});
  auto tiny_heap = open_second_device({.disk_pipeline_cache = false, .max_heap_bytes = 4096});
  const std::vector<vk::Device*> devices = {roomy.get(), tiny_heap.get()};
  CHECK_THROWS_WITH(LlamaRunner(devices, tiny.weights, options(), std::vector<int64_t>{2, 2}),
                    Catch::Contains("device '" + tiny_heap->caps().name + "' (layers 2-3)") &&
                        Catch::Contains("heap"));
}

}  // namespace
}  // namespace infini::test
