#pragma once
// Random-weight Llama models of any shape, written as GGUF files: test and benchmark models that
// need no download (`infini make-model`). Weights come from a seeded PRNG per tensor (the same
// seed gives the same file; a tensor's values do not depend on which other tensors exist) and are
// scaled like a freshly initialised transformer (std 0.02, output projections 0.02 / sqrt(2 *
// layers), norm weights near 1), so activations stay finite over many layers. The vocabulary is
// a synthetic SentencePiece one (synthetic_vocab.hpp). This header needs only the public API.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/element_type.hpp"
#include "infini/quantize.hpp"

namespace infini::model {

struct RandomLlamaOptions {
  int64_t vocab = 512;
  int64_t embd = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t heads_kv = 2;
  int64_t ffn = 172;
  int64_t head_dim = 0;  // 0: embd / heads; otherwise written as attention.key_length
  int64_t context_length = 4096;
  ElementType dtype = ElementType::F32;  // of the matrices; norms and gates are always f32
  std::optional<QuantScheme> scheme;     // when set, the matrices' types come from it (not dtype)
  std::string arch = "llama";  // general.architecture: llama, qwen2 (Q/K/V biases) or qwen3 (Q/K norms); NEOX RoPE for both
  std::string tokenizer = "spm";         // "spm" (SentencePiece) or "gpt2" (byte-level BPE, vocab >= 260)
  std::string pre = "llama-bpe";         // tokenizer.ggml.pre of a gpt2 vocabulary
  std::string chat_template;             // tokenizer.chat_template, written when not empty
  uint64_t seed = 1;
  bool tied = false;                   // no output.weight: the output reuses token_embd
  bool infini = true;                  // infini.* keys and blk.N.attn_mem_gate tensors
  int64_t segment = kDefaultSegment;
  UpdateRule update = UpdateRule::Delta;
  FirstSegment first_segment = FirstSegment::Mix;
  // The memory's other conventions (docs/design.md §1.8): infini.* keys written where they are not
  // the defaults; gate_shape also shapes blk.N.attn_mem_gate.
  MemoryPositions memory_positions = MemoryPositions::Unrotated;
  MemoryHeadMap memory_head_map = MemoryHeadMap::Grouped;
  GateShape gate_shape = GateShape::PerHead;
  GateSign gate_sense = GateSign::Memory;
  float memory_z_init = 0.0f;
  float memory_eps = kMemoryEps;
  EpsMode memory_eps_mode = EpsMode::Clamp;
  double rope_base = 10000.0;
  float rms_eps = 1e-5f;
};

struct RandomModelFile {
  uint64_t bytes = 0;       // size of the file written
  uint64_t parameters = 0;  // values in its tensors
};

// What write_random_llama would write, known before anything is made (no vocabulary, no
// values): the bytes of the tensors' data, which the file adds only its metadata and vocabulary
// to, and the parameter count (both saturate at UINT64_MAX). Throws as write_random_llama does
// for shapes llama cannot have.
struct RandomModelSize {
  uint64_t data_bytes = 0;
  uint64_t parameters = 0;
};
RandomModelSize random_llama_size(const RandomLlamaOptions& options);

// The architectures a random model can have (model/architecture.hpp's rows), e.g. for --arch.
std::vector<std::string> random_model_architectures();

// Bytes done of all (the tensors made, then written), called after each tensor and each piece
// written.
using RandomModelProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes the model to `path` atomically (the whole file is built in memory first). Throws
// infini::Error (one line naming the option or the file) for shapes llama cannot have and for I/O
// failures. The file's bytes do not depend on `progress`.
RandomModelFile write_random_llama(const RandomLlamaOptions& options, const std::filesystem::path& path,
                                   const RandomModelProgress& progress = {});

}  // namespace infini::model
