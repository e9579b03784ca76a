#include "text/tokenizer.hpp"

#include "infini/error.hpp"
#include "text/bpe_tokenizer.hpp"
#include "text/spm_tokenizer.hpp"

namespace infini::model {

std::unique_ptr<const Tokenizer> make_tokenizer(const Vocabulary& vocab) {
  if (vocab.model.empty() || vocab.model == "llama") return std::make_unique<SpmTokenizer>(vocab);
  if (vocab.model == "gpt2") return std::make_unique<BpeTokenizer>(vocab);
  throw Error("vocabulary: tokenizer model '" + vocab.model + "' is not supported ('llama' SentencePiece or 'gpt2' byte-level BPE)");
}

}  // namespace infini::model
