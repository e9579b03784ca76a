#!/usr/bin/env bash
# The matrix-unit kernels on VK_KHR_cooperative_matrix, which Debian 12's glslang cannot build and
# its lavapipe cannot run: scripts/lavapipe-khr.sh unpacks Debian unstable's glslang and Mesa 26
# lavapipe (8x8x8 fragments, 8-lane subgroups) into a private folder, ./build is rebuilt with that
# glslang for those kernels alone (INFINI_GLSLANG_KHR: a few seconds, only they and the code that
# embeds them), their tests run on that lavapipe, the model tests again with auto on its matrix
# units, with the multi-device ones (that lavapipe also shares sync files, so there the pipeline's
# devices wait for each other on the device: vk/shared_signal.hpp) and the bench CLI's checks, and
# ./build is set back.
# Where Debian unstable cannot be reached it says so and skips.
# Without the validation layer: Debian unstable's crashed at exit after these pipelines, every
# test passed (README, "Matrix units").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$(realpath -m "${INFINI_LAVAPIPE_KHR:-/tmp/lavapipe-khr}")
if ! scripts/lavapipe-khr.sh "$dir" >/dev/null; then
  echo "test-khr: skipped: could not set up lavapipe with VK_KHR_cooperative_matrix from Debian unstable" >&2
  exit 0
fi
# The build is set back to the glslang it had (test.sh has just built it).
before=$(cmake -N -LA build 2>/dev/null | sed -n 's/^INFINI_GLSLANG_KHR:FILEPATH=//p')
restore() {
  cmake -S "$root" -B "$root/build" -DINFINI_GLSLANG_KHR="$before" >/dev/null && cmake --build "$root/build" >/dev/null
}
trap restore EXIT
cmake -S . -B build -DINFINI_GLSLANG_KHR="$dir/glslangValidator" >/dev/null
cmake --build build >/dev/null
cd build
export VK_LOADER_LAYERS_DISABLE='~all~' LP_NUM_THREADS=2 INFINI_CACHE_DIR="$dir/cache" MESA_SHADER_CACHE_DIR="$dir/cache/mesa"
devices=$("$dir/run" ./infini devices)
if ! grep -q "coopmat KHR \[" <<<"$devices"; then
  echo "test-khr: skipped: this Debian unstable's lavapipe offers no cooperative matrices" >&2
  exit 0
fi
"$dir/run" ./infini_tests "[matmul],*coopmat*,*memory kernels*"
INFINI_MATRIX_UNITS=emulate "$dir/run" ./infini_tests "[model],[multi],[pool]"
# The bench CLI's records, the pipeline's per-stage profile among them, with device waits on.
printf '#!/bin/sh\nexec "%s/run" "%s/infini" "$@"\n' "$dir" "$PWD" > "$dir/infini"
chmod +x "$dir/infini"
/usr/bin/python3 "$root/tests/cli/bench_cli.py" "$dir/infini"
