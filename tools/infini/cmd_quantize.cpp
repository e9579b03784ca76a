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
  ElementType type = ElementType::Q8_0;
};

int run_quantize(QuantizeArgs& args) {
  const QuantizeReport r = quantize_model(args.in, args.out, args.type);
  std::printf("%s: %" PRId64 " of %" PRId64 " tensors in %s (%" PRId64 " matrices kept: rows not whole blocks), %" PRIu64
              " -> %" PRIu64 " bytes\n",
              args.out.c_str(), r.quantized, r.tensors, element_name(args.type).data(), r.kept_unfit, r.bytes_in,
              r.bytes_out);
  return 0;
}

const RegisterCommand registration{
    "quantize", "Re-encode a GGUF model's weight matrices in a quantized type (round to nearest)",
    [](CLI::App& app) {
      auto args = std::make_shared<QuantizeArgs>();
      app.add_option("in", args->in, "Input .gguf file")->required();
      app.add_option("out", args->out, "Output .gguf file (written atomically)")->required();
      const std::map<std::string, ElementType> types{{"q8_0", ElementType::Q8_0}, {"q4_0", ElementType::Q4_0}};
      app.add_option("--type", args->type, "Target type: q8_0|q4_0")->required()->transform(CLI::CheckedTransformer(types));
      return [args] { return run_quantize(*args); };
    }};

}  // namespace
}  // namespace infini::cli
