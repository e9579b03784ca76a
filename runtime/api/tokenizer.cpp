#include "infini/tokenizer.hpp"

#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "text/tokenizer.hpp"

namespace infini {

struct Tokenizer::Impl {
  std::unique_ptr<const model::Tokenizer> tokenizer;
};

Tokenizer::Tokenizer(const std::filesystem::path& gguf) : impl_(std::make_unique<Impl>()) {
  const model::GgufFile file(gguf);
  try {
    impl_->tokenizer = model::make_tokenizer(model::load_vocabulary(file));
  } catch (const Error& e) {
    const std::string what = e.what();
    throw Error(what.starts_with(file.name()) ? what : file.name() + ": " + what);
  }
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  return impl_->tokenizer->encode(text, add_bos, parse_special);
}
std::string Tokenizer::decode(std::span<const int32_t> tokens) const { return impl_->tokenizer->decode(tokens); }
std::string Tokenizer::piece(int32_t token) const { return impl_->tokenizer->piece(token); }
bool Tokenizer::add_bos() const { return impl_->tokenizer->add_bos(); }
int32_t Tokenizer::bos() const { return impl_->tokenizer->bos(); }
int32_t Tokenizer::eos() const { return impl_->tokenizer->eos(); }
size_t Tokenizer::size() const { return impl_->tokenizer->size(); }
std::string Tokenizer::kind() const { return std::string(impl_->tokenizer->kind()); }

}  // namespace infini
