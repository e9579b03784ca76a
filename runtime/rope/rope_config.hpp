#pragma once
// Moved to the public API.
#include "infini/rope_config.hpp"
