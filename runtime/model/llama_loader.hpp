#pragma once
// Fills the LlamaWeights contract (llama_weights.hpp) from a GGUF file written with llama.cpp's
// keys and tensor names for the llama, qwen2 and qwen3 architectures, plus the Infini-attention additions
// (infini.segment_length, infini.memory_update, infini.first_segment, blk.N.attn_mem_gate).
//
// Every hyperparameter is range-checked and every tensor's shape checked against them; failures
// throw infini::Error with one line naming the file, the key or tensor, what was found and what
// was expected. Things that do not stop the model from running (NaN/Inf weights, tensors the
// model does not use, out-of-range special token ids, fewer tokenizer tokens than embedding rows)
// are returned as warnings; the library never prints.
//
// The views in the result point into `file`'s bytes: keep the GgufFile (or its storage()) alive.
#include <string>
#include <vector>

#include "formats/gguf_file.hpp"
#include "model/llama_weights.hpp"

namespace infini::model {

LlamaWeights load_llama(const GgufFile& file, std::vector<std::string>& warnings);
LlamaWeights load_llama(const GgufFile& file);  // warnings are dropped
// Only the tokenizer.ggml.* keys (a file may hold a vocabulary and no tensors).
Vocabulary load_vocabulary(const GgufFile& file);

}  // namespace infini::model
