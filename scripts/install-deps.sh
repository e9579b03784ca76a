#!/usr/bin/env bash
# Installs what infini needs to build and test on Debian 12 / Ubuntu 22.04+.
# Only packages that are missing are installed; runs apt through sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev glslang-tools spirv-tools
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  catch2 libcli11-dev nlohmann-json3-dev
  libcpp-httplib-dev libhiredis-dev redis-server
  python3 python3-numpy python3-torch
  pybind11-dev python3-dev python3-venv python3-pip python3-pytest  # the Python module (python/)
  clang
  curl xz-utils  # scripts/lavapipe-khr.sh (the KHR matrix-unit tests)
)
# libFuzzer and the sanitizer runtimes: their own package on Debian 12, inside clang elsewhere.
if apt-cache show libclang-rt-dev >/dev/null 2>&1; then packages+=(libclang-rt-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
