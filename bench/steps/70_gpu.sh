#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: generated CUDA memory-bound kernels on the GPU (issue 6's GPU figures).
# Without a working nvidia-smi: writes "skipped: no GPU" and exits 0. Otherwise:
#   1. fxc codegen --bandwidth MIB --cuda-out gen.cu: the generated stream copy, chain
#      sigmoid(1.5 x + 0.25) * x, LayerNorm and Softmax (rows of 1024) as CUDA;
#   2. nvcc -O3 -arch=native bench/gpu/bandwidth.cu gen.cu: times each kernel with CUDA
#      events (after checking its first rows against a host reference) against the
#      generated copy (the bandwidth floor) and cudaMemcpy device-to-device;
#   3. python3 bench/gpu/torch_bandwidth.py: torch.compile on the same shapes (when
#      python3 has torch with CUDA).
# Targets: each kernel within 1.15x of the copy's time per byte, and no slower than
# torch.compile. Environment: GPU_BW_MB (default 256), GPU_RUNS (50), NVCC, and
# GPU_CU=FILE to use a generated source made elsewhere (no fxc needed then).
# Run alone: bench/steps/70_gpu.sh (writes $RESULTS/70_gpu.md and prints it).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/70_gpu.md
dir=$RESULTS/gpu
mkdir -p "$dir"
mb=${GPU_BW_MB:-256}
runs=${GPU_RUNS:-50}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

if ! nvidia-smi > /dev/null 2>&1; then
  printf '## Generated CUDA kernels on the GPU\n\nskipped: no GPU (nvidia-smi fails on this machine).\n' > "$out"
  echo "skipped: no GPU"
  exit 0
fi
if [ ! -x "$NVCC" ]; then
  printf '## Generated CUDA kernels on the GPU\n\nskipped: a GPU but no nvcc.\n' > "$out"
  echo "skipped: a GPU but no nvcc" >&2
  exit 0
fi
cu=${GPU_CU:-$dir/bandwidth_kernels.cu}
if [ -z "${GPU_CU:-}" ]; then
  if [ ! -x "$FXC" ]; then
    echo "== building fxc in build-bench/ (Release, GUI off)" >&2
    cmake -S "$FX_ROOT" -B "$FX_ROOT/build-bench" -G Ninja -DFX_BUILD_GUI=OFF \
      -DCMAKE_BUILD_TYPE=Release >&2
    cmake --build "$FX_ROOT/build-bench" --target fxc -j"$(nproc)" >&2
  fi
  "$FXC" -q codegen --bandwidth "$mb" --cuda-out "$cu" >&2
fi
"$NVCC" -O3 -std=c++17 -arch=native -o "$dir/bandwidth" "$FX_ROOT/bench/gpu/bandwidth.cu" "$cu" >&2
{
  echo "## Generated CUDA kernels on the GPU"
  echo
  echo "\`fxc codegen --bandwidth $mb --cuda-out gen.cu\`, built with \`nvcc -O3 -arch=native"
  echo "bench/gpu/bandwidth.cu gen.cu\` and run with \`bandwidth $mb $runs\`: median of $runs runs (CUDA"
  echo "events), bytes = inputs read once + outputs written once; the floor is the generated"
  echo "stream copy in the same process (target: each kernel within 1.15x of its time per byte)."
  echo "Then \`python3 bench/gpu/torch_bandwidth.py $mb $runs\`: torch.compile on the same shapes"
  echo "(target: generated no slower)."
  echo "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1);"
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$FX_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo
  echo '```'
  "$dir/bandwidth" "$mb" "$runs" 2>&1 || echo "(bandwidth failed: exit $?)"
  "$PY" "$FX_ROOT/bench/gpu/torch_bandwidth.py" "$mb" "$runs" 2>&1 || echo "(torch: exit $?)"
  echo '```'
} > "$out"
cat "$out"
