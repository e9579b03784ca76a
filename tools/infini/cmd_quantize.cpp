// infini quantize: re-encodes a GGUF model's weight matrices in a quantized type (include/
// infini/quantize.hpp). Prints one line: tensors quantized and kept, and the sizes.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "command.hpp"
#include "infini/quantize.hpp"

namespace infini::cli {
namespace {

struct QuantizeArgs {
  std::string in, out;
  QuantScheme scheme = QuantScheme::Q8_0;
  unsigned threads = 0;
};

int run_quantize(QuantizeArgs& args) {
  const QuantizeReport r = quantize_model(args.in, args.out, args.scheme, args.threads);
  std::string notes;
  if (r.fell_back > 0) notes += "; " + std::to_string(r.fell_back) + " in q8_0: rows not whole 256-value blocks";
  if (r.kept_unfit > 0) notes += "; " + std::to_string(r.kept_unfit) + " matrices kept: rows not whole blocks";
  std::printf("%s: %" PRId64 " of %" PRId64 " tensors quantized as %s%s, %" PRIu64 " -> %" PRIu64 " bytes\n",
              args.out.c_str(), r.quantized, r.tensors, quant_scheme_name(args.scheme).data(), notes.c_str(), r.bytes_in,
              r.bytes_out);
  return 0;
}

const RegisterCommand registration{
    "quantize", "Re-encode a GGUF model's weight matrices in a quantized type (round to nearest)",
    [](CLI::App& app) {
      auto args = std::make_shared<QuantizeArgs>();
      app.add_option("in", args->in, "Input .gguf file")->required();
      app.add_option("out", args->out, "Output .gguf file (written atomically)")->required();
      std::map<std::string, QuantScheme> schemes;
      for (QuantScheme s : {QuantScheme::Q8_0, QuantScheme::Q4_0, QuantScheme::Q4_K_M, QuantScheme::Q5_K_M, QuantScheme::Q6_K})
        schemes.emplace(std::string(quant_scheme_name(s)), s);
      app.add_option("--type", args->scheme,
                     "Scheme: q8_0|q4_0|q6_k (every matrix), q4_k_m|q5_k_m (Q4_K/Q5_K with Q6_K for the output and "
                     "some attn_v/ffn_down)")
          ->required()
          ->transform(CLI::CheckedTransformer(schemes));
      app.add_option("--threads", args->threads,
                     "Threads that encode the large matrices (0: one per core); the file is the same for any count")
          ->capture_default_str()
          ->check(CLI::Range(0u, 1024u));
      return [args] { return run_quantize(*args); };
    }};

}  // namespace
}  // namespace infini::cli
