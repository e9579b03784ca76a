#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest; then the fuzz
# targets for a bounded time and the device-free tests under ASan/UBSan (each with clang).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DINFINI_WERROR=ON >/dev/null
(cd build && ctest --output-on-failure -j"$(nproc)")
./scripts/test-fuzz.sh
./scripts/test-sanitize.sh
