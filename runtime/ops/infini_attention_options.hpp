#pragma once
// Moved to the public API.
#include "infini/attention_options.hpp"
