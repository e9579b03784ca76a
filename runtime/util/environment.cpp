#include "util/environment.hpp"

#include <array>
#include <cstdlib>

namespace infini::env {
namespace {

constexpr std::array kVariables{
    VariableInfo{Variable::Devices, "INFINI_DEVICES", "the devices a Context opens when given none"},
    VariableInfo{Variable::Device, "INFINI_DEVICE", "the one device picked when none is named"},
    VariableInfo{Variable::DeviceProfile, "INFINI_DEVICE_PROFILE", "the kernel rules of a named device class"},
    VariableInfo{Variable::Quirks, "INFINI_QUIRKS", "driver workarounds switched on or off"},
    VariableInfo{Variable::MatrixUnits, "INFINI_MATRIX_UNITS", "off, or emulate the matrix-unit kernels"},
    VariableInfo{Variable::Validation, "INFINI_VALIDATION", "the Khronos validation layer"},
    VariableInfo{Variable::CacheDir, "INFINI_CACHE_DIR", "where pipeline caches are kept"},
    VariableInfo{Variable::PipelineStatistics, "INFINI_PIPELINE_STATISTICS", "the driver's per-pipeline statistics"},
    VariableInfo{Variable::WaitSpinUs, "INFINI_WAIT_SPIN_US", "how long a host wait spins before it sleeps"},
    VariableInfo{Variable::Handoff, "INFINI_HANDOFF", "how activations pass between devices"},
    VariableInfo{Variable::HandoffWait, "INFINI_HANDOFF_WAIT", "who orders two devices' work on a piece"},
    VariableInfo{Variable::Tune, "INFINI_TUNE", "whether the matmul kernels are chosen by measurement"},
    VariableInfo{Variable::XdgCacheHome, "XDG_CACHE_HOME", "the cache's base where INFINI_CACHE_DIR is unset"},
    VariableInfo{Variable::Home, "HOME", "the cache's base where neither is set"},
};

constexpr bool in_enum_order() {
  for (size_t i = 0; i < kVariables.size(); ++i)
    if (static_cast<size_t>(kVariables[i].variable) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kVariables lists the variables in the enum's order");

}  // namespace

std::span<const VariableInfo> variables() { return kVariables; }

const char* name(Variable variable) { return kVariables[static_cast<size_t>(variable)].name; }

std::optional<std::string> value(Variable variable) {
  const char* text = std::getenv(name(variable));
  if (!text || !*text) return std::nullopt;
  return std::string(text);
}

}  // namespace infini::env
