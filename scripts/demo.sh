#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, check the device, then stream
# text through a model at constant device memory.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh >/dev/null
export LP_NUM_THREADS="${LP_NUM_THREADS:-$(nproc)}"
./build/infini devices
./build/infini selfcheck
# No trained model ships yet: a small random-weight Llama with Infini-attention (segments of 256
# tokens) shows the streaming path; its generated text is noise.
model=build/demo-model.gguf
./build/infini make-model --out "$model" --vocab 2048 --embd 256 --layers 4 --heads 4 --kv-heads 2 \
    --ffn 768 --dtype f16 --segment 256 --seed 1
./build/infini run -m "$model" -f README.md -n 16 --temp 0
