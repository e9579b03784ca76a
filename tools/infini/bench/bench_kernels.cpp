// Kernel workloads for `infini bench`: the device's peak FMA rate and read bandwidth, and the
// matmul kernels as fractions of them (compute-bound shapes of the first, few-row shapes of the
// second).
#include <algorithm>
#include <random>

#include "bench.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul.hpp"
#include "ops/peak_fma.hpp"
#include "ops/read_bandwidth.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_statistics.hpp"

namespace infini::cli {
namespace {

void bench_peak_fma(BenchRun& run) {
  ops::PeakFma probe(run.device);
  // Enough invocations to fill any GPU; iterations grow until one run takes >= 50 ms.
  const uint32_t workgroups = run.device.caps().is_software() ? 64 : 4096;
  vk::Buffer out(run.device, uint64_t(workgroups) * probe.workgroup_size() * 4, vk::MemoryUse::DeviceLocal, "peak");
  vk::CommandStream stream(run.device, 2);
  uint32_t iterations = 256;
  std::vector<double> ms;
  for (;;) {
    stream.begin();
    stream.timestamp("start");
    probe.record(stream, vk::BufferRange::whole(out), workgroups, iterations);
    stream.timestamp("end");
    stream.end();
    ms = run.time_ms(stream, 1);
    if (ms[0] >= 50 || iterations >= (1u << 24)) break;
    iterations *= 2;
  }
  ms = run.time_ms(stream, run.options.repeat);
  std::vector<double> gflops;
  for (double t : ms) gflops.push_back(probe.flops(workgroups, iterations) / (t * 1e6));
  const Stats s = stats_of(gflops);
  const Stats t = stats_of(ms);
  run.peak_gflops = s.max;  // the best run is the closest to the true peak
  run.emit({{"workload", "peak_fma"}, {"repeats", ms.size()}, {"ms_median", t.median}, {"ms_min", t.min},
            {"ms_max", t.max}, {"gflops", s.median}, {"gflops_min", s.min}, {"gflops_max", s.max}});
}

void bench_bandwidth(BenchRun& run) {
  const vk::Capabilities& caps = run.device.caps();
  ops::ReadBandwidth probe(run.device, caps.is_software());
  // Far larger than any cache (an H100's L2 is 50 MB), within every buffer limit.
  const uint64_t bytes = std::min<uint64_t>({uint64_t(256) << 20, caps.max_storage_buffer_range,
                                             caps.max_memory_allocation_size}) / 16 * 16;
  const uint32_t workgroups = caps.is_software() ? 64 : 8192;
  vk::Buffer in(run.device, bytes, vk::MemoryUse::DeviceLocal, "bandwidth in");
  vk::Buffer out(run.device, uint64_t(workgroups) * probe.workgroup_size() * 4, vk::MemoryUse::DeviceLocal,
                 "bandwidth out");
  vk::CommandStream stream(run.device, 2);
  stream.begin();
  stream.fill(vk::BufferRange::whole(in), 0);  // defined contents, once
  stream.end();
  stream.submit_and_wait();
  stream.begin();
  stream.timestamp("start");
  probe.record(stream, vk::BufferRange::whole(in), vk::BufferRange::whole(out), workgroups);
  stream.timestamp("end");
  stream.end();
  run.time_ms(stream, 1);  // warm-up
  const auto ms = run.time_ms(stream, run.options.repeat);
  std::vector<double> gbps;
  for (double t : ms) gbps.push_back(double(bytes) / (t * 1e6));
  const Stats s = stats_of(gbps);
  const Stats t = stats_of(ms);
  run.bandwidth_gbps = s.max;  // the best run is the closest to what the memory delivers
  run.emit({{"workload", "bandwidth"}, {"bytes", bytes}, {"pattern", probe.contiguous() ? "contiguous" : "interleaved"}, {"repeats", ms.size()}, {"ms_median", t.median},
            {"ms_min", t.min}, {"ms_max", t.max}, {"gbytes_per_s", s.median}, {"gbytes_per_s_min", s.min},
            {"gbytes_per_s_max", s.max}});
}

// Which tiling a timed call used: the matrix kernel's, the matrix-vector kernel's, or neither.
enum class TilingUsed { None, Matrix, Vector };

// One matmul shape, one storage type pair, one kernel: a record with GFLOP/s and the peak fraction.
// Returns the tiling the call used (so that the others of its list are worth timing).
TilingUsed time_matmul(BenchRun& run, const std::vector<float>& a, const std::vector<float>& b, const std::string& dtype,
                       ops::MatmulKernel kernel, const ops::MatrixTiles& matrix_tiles, const ops::VectorTiles& vector_tiles) {
  const auto& o = run.options;
  // "A-B": A (activations) and B (weights) of different types; else both the same.
  const size_t dash = dtype.find('-');
  const ElementType type_a = *element_type_from_name(dtype.substr(0, dash));
  const ElementType type_b = *element_type_from_name(dash == std::string::npos ? dtype : dtype.substr(dash + 1));
  vk::Buffer da = ops::upload_tensor(run.device, a, type_a, "A");
  vk::Buffer db = ops::upload_tensor(run.device, b, type_b, "B");
  vk::Buffer dc(run.device, size_t(o.m) * o.n * 4, vk::MemoryUse::DeviceLocal, "C");
  ops::Matmul matmul(run.device, type_a, type_b, {}, kernel, matrix_tiles, vector_tiles);
  vk::CommandStream stream(run.device, 2);
  stream.begin();
  stream.timestamp("start");
  const ops::MatmulArgs args{o.m, o.n, o.k, vk::BufferRange::whole(da), vk::BufferRange::whole(db),
                             vk::BufferRange::whole(dc)};
  matmul.record(stream, args);
  stream.timestamp("end");
  stream.end();
  run.time_ms(stream, 1);  // warm-up
  const auto ms = run.time_ms(stream, o.repeat);
  std::vector<double> gflops, gbps;
  // Bytes a call must move at least: A and B read once, C written once.
  const double bytes = double(*element_bytes(type_a, uint64_t(o.m) * o.k)) +
                       double(*element_bytes(type_b, uint64_t(o.n) * o.k)) + 4.0 * o.m * o.n;
  for (double t : ms) {
    gflops.push_back(ops::Matmul::flops(o.m, o.n, o.k) / (t * 1e6));
    gbps.push_back(bytes / (t * 1e6));
  }
  const Stats s = stats_of(gflops);
  const Stats t = stats_of(ms);
  const Stats g = stats_of(gbps);
  nlohmann::json record{{"workload", "matmul"}, {"dtype", dtype},     {"kernel", ops::matmul_kernel_name(matmul.kernel())},
                        {"m", o.m},             {"n", o.n},           {"k", o.k},
                        {"repeats", ms.size()}, {"ms_median", t.median}, {"ms_min", t.min},
                        {"ms_max", t.max},      {"gflops", s.median}, {"gflops_min", s.min},
                        {"gflops_max", s.max}};
  const auto& tiles = matmul.tiles();
  record["tiles"] = {tiles.bm, tiles.bn, tiles.bk, tiles.tm, tiles.tn};
  const ops::MatmulKernel ran = matmul.kernel_for_call(args);
  record["ran"] = ops::matmul_kernel_name(ran);  // after any fallback for this shape
  const bool matrix = ran == ops::MatmulKernel::Matrix || ran == ops::MatmulKernel::MatrixEmulated;
  const bool vector = ran == ops::MatmulKernel::Vector || ran == ops::MatmulKernel::VectorShared;
  if (matrix) {
    record["matrix_tiles"] = matmul.matrix_tiles().name();
    if (matmul.matrix_tiles().adapt) record["matrix_tiles_ran"] = matmul.matrix_tiles_for_call(args).name();
  }
  if (vector) record["vector_tiles"] = matmul.vector_tiles().name();
  // What the driver compiled the kernel into (INFINI_PIPELINE_STATISTICS=1, where it says).
  const std::vector<vk::PipelineStatistic> compiled = vk::pipeline_statistics(run.device, matmul.pipeline_for_call(args));
  for (const vk::PipelineStatistic& st : compiled) record["pipeline_statistics"][st.executable][st.name] = st.value;
  record["gbytes_per_s"] = g.median;
  if (run.peak_gflops > 0) record["fraction_of_peak"] = s.median / run.peak_gflops;
  if (run.bandwidth_gbps > 0) record["fraction_of_bandwidth"] = g.median / run.bandwidth_gbps;
  run.emit(record);
  return matrix ? TilingUsed::Matrix : vector ? TilingUsed::Vector : TilingUsed::None;
}

void bench_matmul(BenchRun& run) {
  const auto& o = run.options;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(size_t(o.m) * o.k), b(size_t(o.n) * o.k);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  // Each kernel once with the first tilings; again with each other tiling of the kind it used.
  const ops::MatrixTiles& matrix = o.matrix_tiles.front();
  const ops::VectorTiles& vector = o.vector_tiles.front();
  for (const std::string& dtype : o.dtypes)
    for (const ops::MatmulKernel kernel : o.matmul_kernels) {
      const TilingUsed used = time_matmul(run, a, b, dtype, kernel, matrix, vector);
      if (used == TilingUsed::Matrix)
        for (size_t i = 1; i < o.matrix_tiles.size(); ++i) time_matmul(run, a, b, dtype, kernel, o.matrix_tiles[i], vector);
      if (used == TilingUsed::Vector)
        for (size_t i = 1; i < o.vector_tiles.size(); ++i) time_matmul(run, a, b, dtype, kernel, matrix, o.vector_tiles[i]);
    }
}

const RegisterWorkload peak{"peak_fma", 0, bench_peak_fma};
const RegisterWorkload bandwidth{"bandwidth", 1, bench_bandwidth};
const RegisterWorkload matmul{"matmul", 10, bench_matmul};

}  // namespace
}  // namespace infini::cli
