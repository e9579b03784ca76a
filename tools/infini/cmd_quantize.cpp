// infini quantize: re-encodes a GGUF model's weight matrices in a quantized type (include/
// infini/quantize.hpp). Prints one line: tensors quantized and kept, and the sizes. Takes the
// type as --type or, as llama-quantize does, as a third argument; refuses to overwrite its input
// and, without --allow-requantize, to quantize a file that is quantized already.
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "command.hpp"
#include "infini/quantize.hpp"
#include "option_checks.hpp"
#include "text_file.hpp"

namespace infini::cli {
namespace {

struct QuantizeArgs {
  std::string in, out;
  QuantScheme scheme = QuantScheme::Q8_0;
  bool type_given = false;
  unsigned threads = 0;
  bool allow_requantize = false;
};

// Whether `a` and `b` name the same file (an existing one through any path or link).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec, ec_a, ec_b;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ec_a), cb = std::filesystem::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && ca == cb;
}

int run_quantize(QuantizeArgs& args) {
  if (!args.type_given) throw UsageError("give the type: --type TYPE, or as the third argument (quantize IN OUT TYPE)");
  if (same_file(args.in, args.out))
    throw UsageError(args.out + " is the input file; write the quantized model to another file");
  check_output_path(args.out, "out");
  if (const std::optional<QuantizedTensor> q = first_quantized_tensor(args.in); q && !args.allow_requantize)
    throw UsageError(args.in + " is quantized already (tensor '" + q->name + "' is " + std::string(element_name(q->type)) +
                     "): quantizing it again loses precision twice; quantize the f32/f16 file, or pass "
                     "--allow-requantize");
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
      app.add_option("out", args->out, "Output .gguf file (written atomically; not the input)")->required();
      std::vector<std::pair<std::string, QuantScheme>> schemes;
      for (QuantScheme s : quant_schemes()) schemes.emplace_back(std::string(quant_scheme_name(s)), s);
      const std::string help =
          "Scheme, in any case: q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl|iq4_xs|q6_k (every matrix), q4_k_m|q5_k_m (Q4_K/Q5_K with Q6_K for "
          "the output and some attn_v/ffn_down)";
      auto* type = add_choice_option(app, "type", args->scheme, schemes, help + "; or as --type");
      auto* named = add_choice_option(app, "--type", args->scheme, schemes, help)->excludes(type);
      app.add_flag("--allow-requantize", args->allow_requantize,
                   "Quantize a file whose tensors are quantized already (each rounded twice)");
      app.add_option("-t,--threads", args->threads,
                     "Threads that encode the large matrices (0: one per core); the file is the same for any count")
          ->capture_default_str()
          ->check(integer_range(0u, 1024u));
      return [args, type, named] {
        args->type_given = type->count() + named->count() > 0;
        return run_quantize(*args);
      };
    }};

}  // namespace
}  // namespace infini::cli
