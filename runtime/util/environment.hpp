#pragma once
// Every environment variable the library reads, read here and nowhere else: environment.cpp's
// table names each with what it does (docs/devices.md, "Environment variables"), and each reader
// parses its own value.

#include <optional>
#include <span>
#include <string>

namespace infini::env {

enum class Variable {
  Devices,
  Device,
  DeviceProfile,
  Quirks,
  MatrixUnits,
  Validation,
  CacheDir,
  PipelineStatistics,
  WaitSpinUs,
  Handoff,
  HandoffWait,
  Tune,
  XdgCacheHome,
  Home,
};

struct VariableInfo {
  Variable variable;
  const char* name;
  const char* meaning;
};

// The variables above, in that order, with their names and a line on what each does.
std::span<const VariableInfo> variables();

const char* name(Variable variable);

// The variable's value, or nothing where it is unset or empty (both mean "not asked for").
std::optional<std::string> value(Variable variable);

}  // namespace infini::env
