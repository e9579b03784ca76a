#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest; then the
# matrix-unit kernels on VK_KHR_cooperative_matrix on Mesa 26's lavapipe (scripts/test-khr.sh); the fuzz
# targets for a bounded time and the device-free tests under ASan/UBSan (each with clang); last,
# an arm64 cross-build tested under qemu (scripts/test-arm64.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DINFINI_WERROR=ON >/dev/null
(cd build && ctest --output-on-failure -j"$(nproc)")
./scripts/test-khr.sh
./scripts/test-fuzz.sh
./scripts/test-sanitize.sh
./scripts/test-arm64.sh
