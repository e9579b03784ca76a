#include "model/architecture.hpp"

namespace infini::model {

std::optional<Architecture> find_architecture(std::string_view name) noexcept {
  for (const Architecture& a : kArchitectures)
    if (a.name == name) return a;
  return std::nullopt;
}

std::string architecture_names() {
  std::string out;
  for (const Architecture& a : kArchitectures) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

}  // namespace infini::model
