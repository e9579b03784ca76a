#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan into ./build-fuzz and fuzzes each
# for a bounded time on a scratch copy of its seed corpus (INFINI_FUZZ_SECONDS, default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DINFINI_FUZZ=ON -DINFINI_BUILD_TESTS=OFF \
  -DINFINI_FUZZ_SECONDS="${INFINI_FUZZ_SECONDS:-20}" >/dev/null
# Only the fuzz targets: the library and the program are built (and tested) by test.sh already.
cmake --build build-fuzz --target fuzz_npy fuzz_gguf fuzz_state >/dev/null
cd build-fuzz
ctest --output-on-failure -L fuzz -j"$(nproc)"
