#pragma once
// `infini bench` workloads. Each bench_*.cpp registers its workloads with RegisterWorkload;
// every workload prints one JSON object per measurement through BenchRun::emit.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/model.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matmul.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
}

namespace infini::cli {

struct BenchOptions {
  int repeat = 5;
  uint32_t m = 1024, n = 1024, k = 1024;
  std::vector<std::string> dtypes{"f32", "f16"};
  // matmul: kernels to time in the same run.
  std::vector<ops::MatmulKernel> matmul_kernels{ops::MatmulKernel::Auto};
  // model: decode's norms, SwiGLU and biases inside the projections' passes (RunnerOptions::fused_steps), or not.
  std::vector<bool> fused_steps{true};
  // matmul: tilings of the matrix-unit kernel to time, for calls that run it.
  std::vector<ops::MatrixTiles> matrix_tiles{ops::kAutoMatrixTiles};
  // matmul: shapes of the matrix-vector kernel to time, for calls that run it.
  std::vector<ops::VectorTiles> vector_tiles{ops::VectorTiles{}};
  std::vector<ops::AttentionKernel> attention_kernels{ops::AttentionKernel::Auto};
  // model: decode's most tokens per submission (RunnerOptions::decode_chain; 0: the device's choice).
  std::vector<uint32_t> decode_chains{0};
  // model and pipeline: decode's sampling temperature (0: greedy), top-k (0: off) and top-p, as infini run's.
  double temperature = 0;
  int top_k = 40;
  double top_p = 0.95;
  // sampler: rows of logits of these lengths.
  std::vector<int64_t> vocabs{32000, 151936};
  // attention: one layer over streams of these lengths.
  std::vector<int64_t> tokens{65536};
  int64_t segment = kDefaultSegment;
  int heads_q = 16, heads_kv = 4, head_dim = 128;
  // model: a GGUF file; prefill and decode counts; streams of these lengths (memory on).
  std::string model;
  std::string reference_model;  // model: logits of the same prompt compared with this file's (NMSE)
  int64_t prefill = 512, decode = 128;
  std::vector<int64_t> stream_tokens;
  std::vector<uint32_t> streams{1, 4, 16, 64};  // batch: streams decoding together
  bool interleave = false;  // model: also compare late-stream segments with fresh-stream ones, alternating
  bool kernel_times = false;  // model: time every kernel of the prefill and of decode (RunnerOptions::time_kernels)
  MemoryMode memory = MemoryMode::Auto;
  int64_t model_segment = 0;  // 0: the file's
  // pipeline: device sets separated by '/', devices in a set by ',' ("0/0,0").
  std::string device_sets = "0/0,0";
  // pipeline: hand-off kinds to compare on each set of several devices (exec/handoff.hpp).
  std::vector<std::string> handoffs{"auto"};
  std::vector<std::string> handoff_waits{"auto"};
};

struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats_of(std::vector<double> samples);

struct BenchRun {
  vk::Device& device;  // the first of `devices`: kernel workloads run here
  const BenchOptions& options;
  std::vector<vk::Device*> devices;  // the model workload splits its layers over these
  std::vector<double> split;         // --split shares (empty: by device memory)
  double peak_gflops = 0;     // measured by the peak_fma workload earlier in the same run
  double bandwidth_gbps = 0;  // measured by the bandwidth workload earlier in the same run
  // Adds device, memory (summed over `devices`) and RSS fields and prints the object as one line.
  void emit(nlohmann::json record) const;
  // Submits a recorded stream (which must hold timestamps "start" and "end") `repeats` times
  // and returns the device time of each run in milliseconds (wall clock if no timestamps).
  std::vector<double> time_ms(vk::CommandStream& stream, int repeats) const;
};

using Workload = std::function<void(BenchRun&)>;

struct WorkloadEntry {
  std::string name;
  int order;  // run order: the peak probe first so later workloads can report fractions
  Workload run;
};
std::vector<WorkloadEntry>& workloads();

struct RegisterWorkload {
  RegisterWorkload(std::string name, int order, Workload run) {
    workloads().push_back({std::move(name), order, std::move(run)});
  }
};

uint64_t host_peak_rss_bytes();  // the process's resident set: at most so far
uint64_t host_rss_bytes();       // and now

}  // namespace infini::cli
