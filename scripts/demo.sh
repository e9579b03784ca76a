#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, check the device, then the
# passkey demo: a 5-digit key hidden in 128K tokens of filler (131104 = 2^17 + 32: the question
# ends 32 tokens into a segment; see the README for lengths that end on a segment boundary), found by the
# shipped model through its compressive memory at the same device memory as for 4K tokens.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh >/dev/null
export LP_NUM_THREADS="${LP_NUM_THREADS:-$(nproc)}"
./build/infini devices
./build/infini selfcheck
./build/infini passkey -m samples/passkey/passkey.gguf --length "${DEMO_LENGTH:-131104}" \
    --depths start,middle,end --trials 1 --svg "${DEMO_SVG:-build/passkey-heatmap.svg}"
