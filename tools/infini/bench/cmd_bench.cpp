// infini bench: throughput and memory figures as JSON lines. Figures are meant to be compared
// as ratios within one run (e.g. against the device's measured peak), never across runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "bench.hpp"
#include "exec/handoff.hpp"
#include "exec/layer_stage.hpp"
#include "command.hpp"
#include "split_list.hpp"
#include "infini/context.hpp"
#include "model_options.hpp"
#include "option_checks.hpp"
#include "api/context_access.hpp"
#include "vk/device.hpp"

namespace infini::cli {

std::vector<WorkloadEntry>& workloads() {
  static std::vector<WorkloadEntry> all;
  return all;
}

Stats stats_of(std::vector<double> s) {
  if (s.empty()) return {};
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  const double median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  return {median, s.front(), s.back()};
}

namespace {
// A "Key:   N kB" line of /proc/self/status, in bytes; 0 where there is none (not Linux).
uint64_t proc_status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  return 0;
}
}  // namespace

uint64_t host_peak_rss_bytes() { return proc_status_bytes("VmHWM:"); }
uint64_t host_rss_bytes() { return proc_status_bytes("VmRSS:"); }

void BenchRun::emit(nlohmann::json record) const {
  const auto& caps = device.caps();
  nlohmann::json line{{"device", caps.name}, {"driver", caps.driver_name + " " + caps.driver_info}};
  line.update(record);
  line["peak_device_bytes"] = vk::peak_allocated_bytes(devices);
  line["host_rss_bytes"] = host_peak_rss_bytes();
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

std::vector<double> BenchRun::time_ms(vk::CommandStream& stream, int repeats) const {
  std::vector<double> out;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    stream.submit_and_wait();
    const auto t1 = std::chrono::steady_clock::now();
    const auto ts = stream.timestamps();
    if (ts.size() >= 2)
      out.push_back((ts.back().ns - ts.front().ns) * 1e-6);
    else
      out.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

namespace {

struct Args {
  BenchOptions options;
  std::string workloads = "peak_fma,matmul";
  std::string dtypes = "f32,f16";
  std::string matmul_kernels = "auto";
  std::string matrix_tiles = ops::kAutoMatrixTiles.name();
  std::string vector_tiles = "auto";
  std::string attention_kernels = "auto";
  std::string fused_steps = "on";
  std::string decode_chains = "auto";
  std::string tokens = "65536";
  ModelArgs devices;  // --device, --devices, --split
};

// Each comma-separated name of `text` through `parse`; a name it does not take is the one-line
// error `usage`, naming it.
template <typename T, typename Parse>
std::vector<T> parse_each(const std::string& text, Parse parse, const std::string& usage) {
  std::vector<T> out;
  for (const auto& name : split_list(text)) {
    const std::optional<T> value = parse(name);
    if (!value) throw Error(usage + ", not '" + name + "'");
    out.push_back(*value);
  }
  return out;
}

// The weight types f32-TYPE takes: every element type but f32, from the one table.
std::string weight_type_names() {
  std::string names;
  for (const ElementTraits& e : kElementTypes)
    if (e.type != ElementType::F32) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

int run_bench(Args& args) {
  args.options.dtypes = split_list(args.dtypes);
  for (const auto& d : args.options.dtypes)
    if (d != "f32" && d != "f16" && !(d.starts_with("f32-") && d != "f32-f32" && element_type_from_name(d.substr(4))))
      throw Error("--dtype takes f32, f16 and/or f32-TYPE for weights of TYPE " + weight_type_names() + ", not '" + d + "'");
  args.options.matmul_kernels = parse_each<ops::MatmulKernel>(args.matmul_kernels, ops::matmul_kernel_named,
      "--matmul-kernel takes auto, tiled, tiled-half, registers, lanes, vector, vector-shared, coopmat and/or coopmat-emulated");
  args.options.matrix_tiles = parse_each<ops::MatrixTiles>(args.matrix_tiles, ops::matrix_tiles_named,
      "--matrix-tiles takes auto or tilings written WMxWNxFMxFNxBK (warps, fragments per warp, k per step), such as 2x2x4x4x32, "
      "or WMxWNxFMxFNxBKx2 for two tile buffers");
  args.options.vector_tiles = parse_each<ops::VectorTiles>(args.vector_tiles, ops::vector_tiles_named,
      "--vector-tiles takes auto, WGxCOLS or WGxCOLSxWORDS (invocations per workgroup, a power of two from 16; columns "
      "per workgroup, 1 to 4; loads of each column in flight per invocation, 2 to 8), such as 128x2 or 128x2x4");
  args.options.attention_kernels = parse_each<ops::AttentionKernel>(args.attention_kernels, ops::attention_kernel_named,
      "--attention-kernel takes auto, tiled, rows, coopmat and/or coopmat-emulated");
  args.options.fused_steps = parse_each<bool>(
      args.fused_steps,
      [](std::string_view v) { return v == "on" || v == "off" ? std::optional<bool>(v == "on") : std::nullopt; },
      "--fused-steps takes on and/or off");
  args.options.decode_chains = parse_each<uint32_t>(
      args.decode_chains,
      [](std::string_view v) -> std::optional<uint32_t> {
        if (v == "auto") return 0u;
        for (uint32_t n = 1; n <= model::LayerStage::kMaxChain; ++n)
          if (v == std::to_string(n)) return n;
        return std::nullopt;
      },
      "--decode-chain takes auto and/or tokens per submission from 1 to " + std::to_string(model::LayerStage::kMaxChain));
  args.options.tokens.clear();
  for (const auto& t : split_list(args.tokens)) {
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > (1ll << 40)) throw Error("--tokens takes positive token counts, not '" + t + "'");
    args.options.tokens.push_back(v);
  }
  // An empty list would time nothing and say nothing.
  for (const auto& [flag, empty] : {std::pair{"--dtype", args.options.dtypes.empty()},
                                    std::pair{"--matmul-kernel", args.options.matmul_kernels.empty()},
                                    std::pair{"--matrix-tiles", args.options.matrix_tiles.empty()},
                                    std::pair{"--vector-tiles", args.options.vector_tiles.empty()},
                                    std::pair{"--attention-kernel", args.options.attention_kernels.empty()},
                                    std::pair{"--fused-steps", args.options.fused_steps.empty()},
                                    std::pair{"--decode-chain", args.options.decode_chains.empty()},
                                    std::pair{"--tokens", args.options.tokens.empty()},
                                    std::pair{"--vocab", args.options.vocabs.empty()}})
    if (empty) throw Error(std::string(flag) + " needs at least one value");
  auto wanted = split_list(args.workloads);
  if (wanted.empty()) throw Error("--workload needs at least one value");
  auto& all = workloads();
  for (const auto& w : wanted)
    if (std::none_of(all.begin(), all.end(), [&](const WorkloadEntry& e) { return e.name == w; })) {
      std::string names;
      for (const auto& e : all) names += (names.empty() ? "" : ", ") + e.name;
      throw Error("unknown workload '" + w + "' (have: " + names + ")");
    }
  std::sort(all.begin(), all.end(), [](const WorkloadEntry& a, const WorkloadEntry& b) { return a.order < b.order; });

  const std::unique_ptr<Context> context = open_context(args.devices);
  const std::vector<vk::Device*> devices = ContextAccess::devices(*context);
  BenchRun run{*devices.front(), args.options, devices, args.devices.options.split};
  for (const auto& w : all)
    if (std::find(wanted.begin(), wanted.end(), w.name) != wanted.end()) w.run(run);
  return 0;
}

// A CLI check that passes what `parse` accepts and gives its error for the rest.
template <typename Parse>
auto accepted_by(Parse parse) {
  return [parse](const std::string& v) {
    try {
      parse(v);
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
}

const RegisterCommand registration{
    "bench", "Measure throughput and memory; prints one JSON object per line", [](CLI::App& app) {
      auto args = std::make_shared<Args>();
      app.add_option("--workload", args->workloads, "Comma-separated workloads (peak_fma, bandwidth, matmul, attention, model, batch, pipeline, sampler)")
          ->capture_default_str();
      app.add_option("--repeat", args->options.repeat, "Timed runs per measurement")
          ->check(integer_range(1, 1000))
          ->capture_default_str();
      app.add_option("--m", args->options.m, "matmul rows of A and C")->check(integer_range(1u, 1u << 16))->capture_default_str();
      app.add_option("--n", args->options.n, "matmul rows of B, columns of C")->check(integer_range(1u, 1u << 16))->capture_default_str();
      app.add_option("--k", args->options.k, "matmul inner dimension")->check(integer_range(1u, 1u << 16))->capture_default_str();
      app.add_option("--dtype", args->dtypes, "Input storage types: f32, f16 (both operands), f32-f16 (A f32, B f16: f16 weights), f32-bf16, f32-q8_0, f32-q4_0, f32-q4_1, f32-q5_0, f32-q5_1, f32-iq4_nl, f32-iq4_xs, f32-q2_k, f32-q3_k, f32-q4_k, f32-q5_k, f32-q6_k (bf16 and quantized weights)")
          ->capture_default_str();
      app.add_option("--matmul-kernel", args->matmul_kernels, "matmul, and model (its projections; vector also runs the norms, SwiGLU and biases in their passes for decode): kernels to time in the same run: auto, tiled, tiled-half (f16 arithmetic, f16 weights), registers, lanes, vector, vector-shared, coopmat (matrix units), coopmat-emulated (its tiling without them; slow)")
          ->capture_default_str();
      app.add_option("--matrix-tiles", args->matrix_tiles, "matmul and model: tilings of the matrix-unit kernel (coopmat, coopmat-emulated) to time in the same run, each WMxWNxFMxFNxBK: warps per workgroup down and across, 16x16 fragments per warp down and across, values of k per step (a multiple of 16), and x2 at the end for two tile buffers (one barrier per step, twice the shared memory), used for every call; auto: 2x2x4x4x32, and 2x2x2x2x32 for calls whose grid of those would have fewer than 128 workgroups")
          ->capture_default_str();
      app.add_option("--vector-tiles", args->vector_tiles, "matmul and model: shapes of the matrix-vector kernel (vector, vector-shared; decode's few rows) to time in the same run, each WGxCOLS[xWORDS]: invocations per workgroup (a power of two, they split K), columns of C per workgroup (1 to 4) and loads of each column an invocation has in flight (1 to 8, default 1); auto: the defaults")
          ->capture_default_str();
      app.add_option("--attention-kernel", args->attention_kernels, "attention, and model (its attention layers): kernels to time in the same run: auto, tiled, rows, coopmat (matrix units), coopmat-emulated (slow)")
          ->capture_default_str();
      app.add_option("--fused-steps", args->fused_steps, "model: on, off or both: decode on the vector kernel runs the norms, the SwiGLU and the biases inside the projections' passes, and on the tiled attention RoPE, the cache append and the merge inside the attention's, or all as dispatches of their own (timed in the same run)")
          ->capture_default_str();
      app.add_option("--decode-chain,--greedy-chain", args->decode_chains, "model: decode's most tokens per device submission, each fed from the one before on the device, to time in the same run: auto (on GPUs as many as decode in about 50 ms, up to 16; 1 on CPU drivers) and/or 1 to 16 (1: a submission and a read-back per token, as llama.cpp's tg does)")
          ->capture_default_str();
      app.add_option("--temperature", args->options.temperature,
                     "model and pipeline: decode draws its tokens at this temperature (with --top-k and --top-p), "
                     "as infini run does (chains draw on the device); 0: greedy")
          ->check(number_range(0.0, 100.0))->capture_default_str();
      app.add_option("--top-k", args->options.top_k, "model and pipeline, with --temperature: keep the k most likely tokens (0: all)")
          ->check(integer_range(0, 1 << 24))->capture_default_str();
      app.add_option("--top-p", args->options.top_p, "model and pipeline, with --temperature: keep the smallest set reaching this probability")
          ->check(number_range(0.0, 1.0, true))->capture_default_str();
      app.add_option("--vocab", args->options.vocabs, "sampler: lengths of the rows of logits drawn from (the host's cost per token)")
          ->delimiter(',')->check(integer_range(int64_t(1), int64_t(1) << 24))->capture_default_str();
      app.add_option("--tokens", args->tokens, "attention: comma-separated stream lengths")->capture_default_str();
      app.add_option("--segment", args->options.segment, "attention: segment length N")
          ->check(integer_range(int64_t(1), int64_t(1) << 20))->capture_default_str();
      app.add_option("--heads", args->options.heads_q, "attention: query heads")->check(integer_range(1, 1024))->capture_default_str();
      app.add_option("--kv-heads", args->options.heads_kv, "attention: key/value heads")->check(integer_range(1, 1024))->capture_default_str();
      app.add_option("--head-dim", args->options.head_dim, "attention: head dim")->check(integer_range(1, 256))->capture_default_str();
      app.add_option("-m,--model", args->options.model, "model: GGUF file (see infini make-model)");
      app.add_option("--reference-model", args->options.reference_model,
                     "model: a GGUF file of the same shape (the f16 model a quantized one came from) whose logits for the "
                     "same prompt the model's are compared with (logit_nmse_vs_reference)");
      app.add_option("--streams", args->options.streams,
                     "batch: comma-separated numbers of streams decoding together in batched steps, each prefilled "
                     "with --prefill tokens of its own, then --decode steps")
          ->delimiter(',')
          ->check(integer_range(1u, kMostMaxBatch))
          ->capture_default_str();
      app.add_option("--prefill", args->options.prefill, "model: prompt tokens to prefill")
          ->check(integer_range(int64_t(1), kMaxSegment))->capture_default_str();
      app.add_option("--decode", args->options.decode, "model: tokens to decode one at a time (batch: steps)")
          ->check(integer_range(int64_t(0), kMaxSegment))->capture_default_str();
      app.add_option("--stream", args->options.stream_tokens, "model: comma-separated stream lengths to time")
          ->delimiter(',');
      app.add_flag("--interleave", args->options.interleave,
                   "model: after each --stream, alternate segments of that stream and of a fresh one, so both see "
                   "the same machine load, and report their tokens/s ratio");
      app.add_flag("--kernel-times", args->options.kernel_times,
                   "model: also time every kernel of the prefill and of the decode (one record each, most time first); "
                   "the kernels then run one at a time, so that run's tokens/s are not throughput figures");
      add_memory_option(app, args->options.memory);
      app.add_option("--model-segment", args->options.model_segment, "model: segment length (0: the file's)")
          ->check(integer_range(int64_t(0), kMaxSegment));
      app.add_option("--device-sets", args->options.device_sets,
                     "pipeline: device sets to compare, separated by '/' (devices in a set by ',')")
          ->capture_default_str();
      app.add_option("--handoffs", args->options.handoffs,
                     "pipeline: comma-separated hand-off kinds to compare on every set of several devices: auto, host, "
                     "host-memory, device-memory")
          ->delimiter(',')
          ->check(accepted_by(model::parse_handoff))
          ->capture_default_str();
      app.add_option("--handoff-waits", args->options.handoff_waits,
                     "pipeline: comma-separated ways to order each hand-off to compare: auto, host (the host waits for "
                     "the device before), timeline, sync-file (the device waits for the one before on the GPU)")
          ->delimiter(',')
          ->check(accepted_by(model::parse_handoff_wait))
          ->capture_default_str();
      add_device_options(app, args->devices);
      add_threads_option(app, args->devices.threads);
      app.footer("On lavapipe give -t (or LP_NUM_THREADS) the number of cores.");
      return [args] { return run_bench(*args); };
    }};

}  // namespace
}  // namespace infini::cli
