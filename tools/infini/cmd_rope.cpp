// infini rope: the RoPE analyses (docs/design.md §2.5). Each analysis is its own subcommand,
// registered as "rope NAME" in cmd_rope_NAME.cpp; this file only names the group.
#include "command.hpp"

namespace infini::cli {
namespace {

const RegisterCommand registration{
    "rope", "RoPE analyses: frequencies of every variant, period coverage, context extension, base bound", nullptr};

}  // namespace
}  // namespace infini::cli
