#!/usr/bin/env bash
# Prepares, in folders git ignores, what a lent GPU machine needs from this one; carry them there
# (together well under the 64 MiB a device call takes):
#   build-gpu/  this build's infini and infini_tests, and in lib/ the shared libraries they load
#               beyond glibc, libstdc++ and the Vulkan loader (the GPU machine has no httplib,
#               hiredis or OpenSSL; without them infini does not start there, infini_tests does)
#   build-khr/  the same two programs with the matrix-unit kernels on VK_KHR_cooperative_matrix
#               (Debian 12's glslang builds them on NV; this takes Debian unstable's for them)
#   .gl, .peer  the Vulkan loader and validation layer the GPU machine lacks, and llama.cpp's Vulkan
#               backend for side-by-side figures (made by the project's GPU notes' scripts, from
#               $INFINI_GPU_NOTES, default ../shared/gpu, when that folder exists)
# On the GPU machine: . .gl/on-device.sh; scripts/gpu-figures.sh quick 2>&1 | tee "$OUT/figures.log"
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build infini infini_tests >/dev/null
rm -rf build-gpu && mkdir -p build-gpu/lib
cp build/infini build/infini_tests build-gpu/
ldd build/infini build/infini_tests | awk '/=> \// { print $3 }' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libvulkan|ld-linux-x86-64|libpthread|libdl|librt)\.so' |
  xargs -r cp -L -t build-gpu/lib/

khr=$(realpath -m "${INFINI_LAVAPIPE_KHR:-/tmp/lavapipe-khr}")
if scripts/lavapipe-khr.sh "$khr" >/dev/null; then
  before=$(cmake -N -LA build 2>/dev/null | sed -n 's/^INFINI_GLSLANG_KHR:FILEPATH=//p')
  cmake -S . -B build -DINFINI_GLSLANG_KHR="$khr/glslangValidator" >/dev/null
  ninja -C build infini infini_tests >/dev/null
  rm -rf build-khr && mkdir -p build-khr && cp build/infini build/infini_tests build-khr/
  cmake -S . -B build -DINFINI_GLSLANG_KHR="$before" >/dev/null
  ninja -C build >/dev/null
else
  echo "gpu-carry: no KHR build (Debian unstable's glslang could not be set up)" >&2
fi

notes=${INFINI_GPU_NOTES:-../shared/gpu}
if [ -d "$notes" ]; then
  [ -d .gl ] || "$notes/fetch-vulkan-debs.sh" .gl >/dev/null
  [ -d .peer ] || "$notes/peer/make-peer.sh" .peer >/dev/null || echo "gpu-carry: no llama.cpp peer this time" >&2
fi
du -sh build-gpu build-khr .gl .peer 2>/dev/null || true
