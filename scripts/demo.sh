#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, then run infini.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh >/dev/null
./build/infini devices
./build/infini selfcheck
