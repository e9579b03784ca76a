// infini attention: one Infini-attention layer over a whole stream given as .npy files
// (docs/design.md §1, §5.3). Q [T,Hq,D], K [T,Hkv,D], V [T,Hkv,Dv], beta [Hq] in; A [T,Hq,Dv] out,
// and optionally the final memory M [Hkv,D,Dv] and norm z [Hkv,D].
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "command.hpp"
#include "memory_options.hpp"
#include "option_checks.hpp"
#include "infini/infini_attention.hpp"
#include "infini/npy.hpp"
#include "rope_options.hpp"

namespace infini::cli {
namespace {

struct AttentionArgs {
  std::string q, k, v, beta, out, memory_out, norm_out, device;
  InfiniOptions options;
  std::string memory = "on";
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void require_rank(const NpyArray& a, size_t rank, const std::string& name, const char* layout) {
  if (a.shape.size() != rank)
    throw Error(name + " must have shape " + layout + ", got " + shape_text(a.shape));
}

int fits_int(int64_t v, const std::string& what) {
  if (v < 1 || v > (int64_t(1) << 20)) throw Error(what + " must be in 1..1048576, got " + std::to_string(v));
  return int(v);
}

template <typename T>
std::vector<T> elements_as(const NpyArray& a) {
  std::vector<T> out(a.bytes.size() / sizeof(T));
  if (!a.bytes.empty()) std::memcpy(out.data(), a.bytes.data(), out.size() * sizeof(T));
  return out;
}

int run_attention(AttentionArgs& args) {
  const NpyArray q = read_npy(args.q), k = read_npy(args.k), v = read_npy(args.v),
                     beta = read_npy(args.beta);
  require_rank(q, 3, args.q, "[T,Hq,D]");
  require_rank(k, 3, args.k, "[T,Hkv,D]");
  require_rank(v, 3, args.v, "[T,Hkv,Dv]");
  const GateShape gates = args.options.gate_shape;
  require_rank(beta, gates == GateShape::PerHeadValue ? 2 : 1, args.beta,
               gates == GateShape::PerHeadValue ? "[Hq,Dv] (--gate-shape head_value)"
               : gates == GateShape::PerLayer   ? "[1] (--gate-shape layer)"
                                                : "[Hq]");
  const int64_t tokens = q.shape[0];
  if (k.shape[0] != tokens || v.shape[0] != tokens)
    throw Error("Q, K and V must have the same number of tokens, got T = " + std::to_string(tokens) + ", " +
                std::to_string(k.shape[0]) + ", " + std::to_string(v.shape[0]));
  if (tokens == 0) throw Error("the stream is empty (T = 0)");
  const AttentionShape shape{fits_int(q.shape[1], "Hq"), fits_int(k.shape[1], "Hkv"), fits_int(q.shape[2], "D"),
                             fits_int(v.shape[2], "Dv")};
  if (k.shape[2] != q.shape[2])
    throw Error("K's head dim " + std::to_string(k.shape[2]) + " differs from Q's " + std::to_string(q.shape[2]));
  if (v.shape[1] != k.shape[1])
    throw Error("V has " + std::to_string(v.shape[1]) + " heads, K has " + std::to_string(k.shape[1]));
  if (shape.heads_q % shape.heads_kv != 0)
    throw Error("Hq = " + std::to_string(shape.heads_q) + " is not a multiple of Hkv = " + std::to_string(shape.heads_kv));
  if (gates == GateShape::PerLayer ? beta.shape[0] != 1 : beta.shape[0] != q.shape[1])
    throw Error("beta has " + std::to_string(beta.shape[0]) + (gates == GateShape::PerLayer ? " values, expected 1" : " rows, Q has Hq = " + std::to_string(q.shape[1])));
  if (gates == GateShape::PerHeadValue && beta.shape[1] != v.shape[2])
    throw Error("beta has " + std::to_string(beta.shape[1]) + " columns, V has Dv = " + std::to_string(v.shape[2]));
  args.options.memory = args.memory == "on";

  Context context({.device = args.device});
  const bool f16 = q.dtype == ElementType::F16 && k.dtype == ElementType::F16 && v.dtype == ElementType::F16;
  const auto beta_values = beta.to_floats();
  InfiniAttention layer(context, shape, args.options, beta_values, f16 ? ElementType::F16 : ElementType::F32);
  const std::vector<float> out =
      f16 ? layer.process(elements_as<uint16_t>(q), elements_as<uint16_t>(k), elements_as<uint16_t>(v), tokens)
          : layer.process(q.to_floats(), k.to_floats(), v.to_floats(), tokens);
  layer.finish();

  const int64_t out_shape[] = {tokens, shape.heads_q, shape.value_dim};
  write_npy_f32(args.out, out, out_shape);
  if (!args.memory_out.empty()) {
    const int64_t m_shape[] = {shape.heads_kv, shape.head_dim, shape.value_dim};
    write_npy_f32(args.memory_out, layer.memory(), m_shape);
  }
  if (!args.norm_out.empty()) {
    const int64_t z_shape[] = {shape.heads_kv, shape.head_dim};
    write_npy_f32(args.norm_out, layer.norm(), z_shape);
  }
  std::fprintf(stderr, "infini attention: %lld tokens, %lld segments of %lld on %s\n", (long long)tokens,
               (long long)layer.segments_written(), (long long)args.options.segment, context.device().name.c_str());
  return 0;
}

const RegisterCommand registration{
    "attention", "Run one Infini-attention layer over a stream given as .npy files", [](CLI::App& app) {
      auto args = std::make_shared<AttentionArgs>();
      app.add_option("--q", args->q, "Queries [T,Hq,D], float32 or float16 .npy")->required();
      app.add_option("--k", args->k, "Keys [T,Hkv,D]")->required();
      app.add_option("--v", args->v, "Values [T,Hkv,Dv]")->required();
      app.add_option("--beta", args->beta, "Gate logits [Hq] (or as --gate-shape says)")->required();
      app.add_option("--out", args->out, "Output A [T,Hq,Dv] float32 .npy")->required();
      app.add_option("--memory-out", args->memory_out, "Final memory M [Hkv,D,Dv]");
      app.add_option("--norm-out", args->norm_out, "Final normaliser z [Hkv,D]");
      app.add_option("--segment", args->options.segment, "Segment length N")->capture_default_str()->check(
          integer_range(int64_t(1), kMaxSegment));
      add_choice_option(app, "--update", args->options.update,
                        {{"linear", UpdateRule::Linear}, {"delta", UpdateRule::Delta}},
                        "Memory update rule (default delta)");
      add_choice_option(app, "--first-segment", args->options.first_segment,
                        {{"mix", FirstSegment::Mix}, {"local", FirstSegment::Local}},
                        "First segment output: mix = (1-g) A_dot, local = A_dot (default mix)");
      add_choice_option(app, "--gate-sign", args->options.gate_sign,
                        {{"memory", GateSign::Memory}, {"local", GateSign::Local}},
                        "What sigmoid(beta) weights: memory (default) or local");
      // The memory's conventions of the public implementations (docs/design.md §1.8).
      InfiniOptions& o = args->options;
      add_memory_convention_options(
          app, {o.memory_positions, o.memory_head_map, o.gate_shape, o.memory_z_init, o.memory_eps, o.memory_eps_mode});
      app.add_option("--memory", args->memory, "Compressive memory on|off")->check(CLI::IsMember({"on", "off"}))
          ->capture_default_str();
      add_rope_options(app, args->options.rope);
      app.add_option("--device", args->device, "Device index or name substring");
      return [args] { return run_attention(*args); };
    }};

}  // namespace
}  // namespace infini::cli
