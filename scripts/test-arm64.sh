#!/usr/bin/env bash
# arm64 Linux (Raspberry Pi 5, Jetson, Android's userland): cross-builds infini with Debian's
# crossbuild-essential-arm64 into ./build-arm64 (cmake/toolchains/aarch64-linux-gnu.cmake), then
# runs under qemu-aarch64 the test cases that need no device. Installs the :arm64 packages it needs
# (multiarch) when missing.
#   scripts/test-arm64.sh            # ARM64_TESTS selects the Catch2 cases (default: see below)
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
# No arm64 Mesa: its driver manifests would be found (and fail to load) by every x86-64 Vulkan
# program on the machine.
packages=(crossbuild-essential-arm64 qemu-user libvulkan-dev:arm64 libcpp-httplib-dev:arm64 libhiredis-dev:arm64)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# -O1: what runs here is the device-free tests, and it builds in about two thirds of -O3's time.
cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -DNDEBUG" \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake >/dev/null
cmake --build build-arm64 --target infini_cli infini_tests >/dev/null

run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"; }
# Device-free cases: formats, tokenizers, quantization codecs, float64 references, host logic.
# Not [threads]: this qemu-user hangs in programs that start threads (encoding on two threads
# never finished there, one thread takes 0.01 s).
tests=${ARM64_TESTS:-'~[gpu]~[long]~[threads]~"rope base bound*"'}
echo "== arm64 under qemu: infini_tests \"$tests\"" >&2
run build-arm64/infini_tests "$tests"

echo "arm64: passed"
