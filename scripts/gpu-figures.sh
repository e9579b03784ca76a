#!/usr/bin/env bash
# Every GPU figure the open decode and streaming work needs, in one run on a lent GPU machine
# whose Vulkan loader is set up (`. .gl/on-device.sh`, see the GPU notes of the project), with
# what scripts/gpu-carry.sh prepares carried there (build-gpu, build-khr, .gl, .peer). Prints JSON
# lines (infini bench) and the peer's when .peer/run_peer.sh exists (llama.cpp's Vulkan backend
# on plain Llama files of the same shapes: it does not load the Infini tensors).
#   scripts/gpu-figures.sh [quick] 2>&1 | tee figures.log   # quick: skips the 1M-token stream and the GPU tests
#   scripts/figures-table.py figures.log                     # the records as Markdown tables
# On an H200 (2026-11-28) the quick run's parts took about 4 minutes with the machine's start. The
# steps run most wanted first (decode, then prefill on matrix units, then the larger model,
# quantized files, the pipeline), each stamped with the time, so a run cut short by the device
# budget still gives the first ones.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -x build-gpu/infini ]; then  # carried by gpu-carry.sh, with the libraries the machine lacks
  mkdir -p build && ln -sf ../build-gpu/infini build/infini && ln -sf ../build-gpu/infini_tests build/infini_tests
  export LD_LIBRARY_PATH=$PWD/build-gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
infini=./build/infini
models=${TMPDIR:-/tmp}
step() { echo "== $(date +%T) $*" >&2; }

step devices
$infini devices
step "the 155M model"
$infini make-model --out "$models/m155.gguf" --vocab 32000 --embd 1024 --layers 8 --heads 16 --kv-heads 4 --ffn 2816 --dtype f16

# The autotuner first (issue 60): every later step runs what it keeps (INFINI_TUNE=auto, the default).
step "the autotuner: each weight shape's prefill kernel measured and kept, then a second pass against the choice (155M)"
$infini tune -m "$models/m155.gguf"
$infini bench --workload tune --model "$models/m155.gguf"
for mode in off auto; do
  step "155M prefill 512 with INFINI_TUNE=$mode (off: the rules' kernels; auto: the tuned ones)"
  INFINI_TUNE=$mode $infini bench --workload model --model "$models/m155.gguf" --prefill 512 --decode 0 --repeat 3
done

step "first, the matmul kernels against the float64 references: the matrix units' (coopmat: matmul, attention, memory) and the vector kernel's with several loads in flight"
./build/infini_tests "[matmul],*coopmat*"
step "what the driver compiled the matmul kernels into (registers, spills to local memory): matrix units in each tiling, the vector kernel with 1, 2 and 4 words"
INFINI_PIPELINE_STATISTICS=1 $infini bench --workload matmul --m 4096 --n 4096 --k 4096 --dtype f16 --matmul-kernel coopmat \
  --repeat 1 --matrix-tiles 2x2x4x4x32,2x2x4x4x32x2,2x2x4x4x64,2x2x2x2x32
INFINI_PIPELINE_STATISTICS=1 $infini bench --workload matmul --m 1 --n 32000 --k 2048 --dtype f32-f16,f32-q4_k,f32-q6_k \
  --repeat 1 --vector-tiles auto,128x2x2,128x2x4
step "where the device time goes: every kernel of a prefill of 512 and of decode, 155M (one at a time: not throughput)"
$infini bench --workload model --model "$models/m155.gguf" --prefill 512 --decode 32 --repeat 1 --kernel-times
step "one-row matmuls (decode): the vector kernel with 1, 2 and 4 loads of each column in flight, against the tiled GEMM"
vector_tiles=auto,128x2x2,128x2x4,128x4x2,256x2x4,64x2x4
for shape in "--n 32000 --k 2048" "--n 5632 --k 2048" "--n 2048 --k 5632"; do
  # shellcheck disable=SC2086
  $infini bench --workload peak_fma,bandwidth,matmul --m 1 $shape --dtype f32-f16 --matmul-kernel auto,tiled \
    --vector-tiles $vector_tiles --repeat 20
done
$infini bench --workload bandwidth,matmul --m 1 --n 32000 --k 2048 --dtype f32-q4_k,f32-q6_k,f32-q8_0 --matmul-kernel auto \
  --vector-tiles auto,64x2x2,64x2x4,32x2x4 --repeat 20
step "matrix units: 4096^3 on NV fragments (loops over fragments unrolled) and KHR (not), one and two tile buffers (x2: one barrier per step), and a prefill's 512-row shape in smaller tilings"
$infini bench --workload peak_fma,matmul --m 4096 --n 4096 --k 4096 --dtype f16 --matmul-kernel coopmat --repeat 10 \
  --matrix-tiles 2x2x4x4x32,2x2x4x4x32x2,2x2x4x4x64,2x4x4x4x32,2x2x2x4x32,2x2x2x4x32x2
[ -x ./build-khr/infini ] && ./build-khr/infini bench --workload matmul --m 4096 --n 4096 --k 4096 --dtype f16 --matmul-kernel coopmat --repeat 10 \
  --matrix-tiles 2x2x4x4x32,2x2x4x4x32x2
$infini bench --workload matmul --m 512 --n 2048 --k 2048 --dtype f32-f16 --matmul-kernel coopmat --repeat 10 \
  --matrix-tiles 2x2x4x4x32,2x2x2x2x32,2x2x2x2x32x2,2x2x2x4x32,2x2x4x2x32,1x2x4x4x32
step "155M: prefill 512, decode 128; chains of 16 tokens per submission (auto) against one, greedy and sampled; the host polling before it sleeps (default) or not; the vector kernel with more loads in flight"
$infini bench --workload bandwidth,model --model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1,auto
$infini bench --workload bandwidth,model --model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3 --vector-tiles auto,128x2x4
INFINI_WAIT_SPIN_US=0 $infini bench --workload model --model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1
# Sampled decode (top-k 40, as infini run): token by token against chains drawn on the device.
$infini bench --workload model --model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1,auto --temperature 0.8
# An OpenAI-style request's defaults (top-k off, top-p 1): whole rows, drawn on the device in chains; and the host's cost of a draw.
$infini bench --workload model --model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1,auto --temperature 1 --top-k 0 --top-p 1
$infini bench --workload sampler --repeat 5
step "1.1B (TinyLlama's shape): where the time goes, then prefill 512 and decode 128 as above"
$infini make-model --out "$models/m1b.gguf" --vocab 32000 --embd 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --dtype f16
$infini bench --workload tune --model "$models/m1b.gguf"
for mode in off auto; do
  step "1.1B prefill 512 with INFINI_TUNE=$mode"
  INFINI_TUNE=$mode $infini bench --workload model --model "$models/m1b.gguf" --prefill 512 --decode 0 --repeat 3
done
$infini bench --workload model --model "$models/m1b.gguf" --prefill 512 --decode 32 --repeat 1 --kernel-times
$infini bench --workload bandwidth,model --model "$models/m1b.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1,auto
$infini bench --workload bandwidth,model --model "$models/m1b.gguf" --prefill 512 --decode 128 --repeat 3 --vector-tiles auto,128x2x4
INFINI_WAIT_SPIN_US=0 $infini bench --workload model --model "$models/m1b.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1

step "the pipeline's device waits (timeline semaphores) against one device's logits"
# Without layers: the carried validation layer (1.3.239) predates much of the external-semaphore
# and cooperative-matrix validation and reports false errors there.
VK_LOADER_LAYERS_DISABLE='~all~' ./build/infini_tests "[multi]"
# A second build whose kernels are on VK_KHR_cooperative_matrix (./build is on NV when built with
# Debian 12's glslang): scripts/gpu-carry.sh makes it.
if [ -x ./build-khr/infini ]; then
  step "matrix units on KHR: the same tests, and the 4096^3 matmul on NV and KHR"
  ./build-khr/infini devices
  VK_LOADER_LAYERS_DISABLE='~all~' ./build-khr/infini_tests "[matmul],*coopmat*"
  for build in build build-khr; do
    ./$build/infini bench --workload matmul --m 4096 --n 4096 --k 4096 --dtype f16 --matmul-kernel coopmat --repeat 10
  done
fi
step "prefill-shaped matmuls: coopmat (matrix units) against the tiled kernel, and the f32 FMA peak"
$infini bench --workload peak_fma,matmul --m 4096 --n 4096 --k 4096 --dtype f16,f32-f16 --matmul-kernel tiled,coopmat --repeat 10
$infini bench --workload matmul --m 512 --n 5632 --k 2048 --dtype f32-f16,f32-q4_k --matmul-kernel tiled,coopmat --repeat 10
step "one Infini-attention layer (Hq 16, Hkv 4, D 128, N 2048): coopmat (matrix units, attention and memory) against the tiled kernels"
$infini bench --workload peak_fma,attention --tokens 65536 --segment 2048 --heads 16 --kv-heads 4 --head-dim 128 \
  --dtype f32,f16 --attention-kernel tiled,coopmat --repeat 1
step "155M: a 16K-token prompt"
$infini bench --workload model --model "$models/m155.gguf" --prefill 16384 --decode 0 --repeat 2

step "the 1.1B model: steps fused and apart"
$infini bench --workload model --model "$models/m1b.gguf" --prefill 512 --decode 128 --repeat 3 --fused-steps on,off
step "one-row matmuls with quantized weights (decode of quantized files)"
$infini bench --workload bandwidth,matmul --m 1 --n 5632 --k 2048 \
  --dtype f32-f16,f32-q8_0,f32-q4_0,f32-q4_k,f32-q5_k,f32-q6_k --matmul-kernel auto --vector-tiles auto,32x2,128x2,64x4 --repeat 20
step "quantized models: q8_0 and q4_k_m of the same files, logits against f16"
for t in q8_0 q4_k_m; do
  $infini quantize "$models/m155.gguf" "$models/m155-$t.gguf" --type $t
  $infini quantize "$models/m1b.gguf" "$models/m1b-$t.gguf" --type $t
  $infini bench --workload bandwidth,model --model "$models/m155-$t.gguf" --reference-model "$models/m155.gguf" --prefill 512 --decode 128 --repeat 3
  $infini bench --workload bandwidth,model --model "$models/m1b-$t.gguf" --reference-model "$models/m1b.gguf" --prefill 512 --decode 128 --repeat 3
done
step "several logical devices on the one card: the pipeline's cost and where each hand-off's time goes, the host or the GPU ordering the stages"
$infini bench --workload pipeline --model "$models/m155.gguf" --device-sets 0/0,0/0,0,0 --handoffs host,host-memory,device-memory \
  --handoff-waits host,auto --prefill 8192 --decode 32 --repeat 3 --decode-chain 1
$infini bench --workload pipeline --model "$models/m155.gguf" --device-sets 0/0,0 --handoffs device-memory \
  --handoff-waits timeline,sync-file --prefill 8192 --decode 128 --repeat 3 --decode-chain 1
step "chains over the pipeline (greedy, then sampled): each token back to the first device round a ring of shared memory and signals (issue 35's decode)"
$infini bench --workload pipeline --model "$models/m155.gguf" --device-sets 0/0,0/0,0,0 --handoffs device-memory \
  --handoff-waits auto --prefill 2048 --decode 128 --repeat 3 --decode-chain 1,auto
$infini bench --workload pipeline --model "$models/m155.gguf" --device-sets 0/0,0 --handoffs device-memory \
  --handoff-waits auto --prefill 2048 --decode 128 --repeat 3 --decode-chain 1,auto --temperature 0.8
if [ -x .peer/run_peer.sh ]; then
  step "peer: llama.cpp Vulkan and infini on plain Llama files of the same shapes (llama.cpp does not load Infini tensors)"
  $infini make-model --out "$models/p155.gguf" --vocab 32000 --embd 1024 --layers 8 --heads 16 --kv-heads 4 --ffn 2816 --dtype f16 --no-infini
  $infini make-model --out "$models/p1b.gguf" --vocab 32000 --embd 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --dtype f16 --no-infini
  $infini quantize "$models/p1b.gguf" "$models/p1b-q4_k_m.gguf" --type q4_k_m
  for f in p155 p1b p1b-q4_k_m; do
    $infini bench --workload bandwidth,model --model "$models/$f.gguf" --prefill 512 --decode 128 --repeat 3 --decode-chain 1,auto
    .peer/run_peer.sh "$models/$f.gguf" --fa on
  done
fi

if [ "${1:-}" != quick ]; then
  step "a long stream: per-piece profile and host memory at 64K and 1M tokens, late against fresh"
  $infini bench --workload model --model samples/passkey/passkey.gguf --prefill 16 --decode 0 --repeat 1 \
    --stream 65536,1048576 --interleave
  step "GPU tests under the validation layer (not the 2^20-token reference test)"
  ./build/infini_tests "[gpu]~[long]"
fi
step done
