#pragma once
// The random models of random_model.hpp as an in-memory GGUF writer, for tests that edit a model
// before writing it.
#include "formats/gguf_writer.hpp"
#include "reference/random_model.hpp"

namespace infini::model {

// Throws infini::Error (one line naming the option) for shapes llama cannot have.
GgufWriter random_llama(const RandomLlamaOptions& options);

}  // namespace infini::model
