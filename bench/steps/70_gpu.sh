#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: everything measured on an NVIDIA GPU (issues 6 and 22), in one run that writes one
# results file, $RESULTS/70_gpu.md (and JSON beside it in $RESULTS/gpu/). Without a
# working nvidia-smi it writes "skipped: no GPU" and exits 0.
#
# On a GPU machine (a lent H100: one `run` call, see docs/gpu.md):
#     RESULTS=$OUT bench/steps/70_gpu.sh
# Sections, each recorded with its outcome; a section that would pass the time budget
# (GPU_BUDGET_S, default 540 s: one 10-minute call) is skipped and says so:
#   1. build (Release, GUI off, CUDA on) in build-gpu/ (GPU_BUILD_DIR): fxc and the CUDA
#      test suites
#   2. every CUDA test: fx_cuda_plan_tests and fx_cuda_runtime_tests (the *Device* and
#      Gpu* tests run here, nowhere else)
#   3. the generated memory-bound kernels against the copy floor and torch.compile
#      (bench/gpu/bandwidth.cu, torch_bandwidth.py; targets: within 1.1x of the copy's
#      time per byte, no slower than torch.compile)
#   4. fxc calibrate --device cuda: the measured profile of this GPU
#   5. whole models at batch GPU_BATCH (8): ResNet-50, ViT-B/16, the GPT-2-small-like
#      decoder, exported by bench/gpu/export_gpu_models.py; fxc profile --device cuda
#      --opt-level 2 (unfused vs fused, outputs checked against the CPU runtime), then
#      PyTorch eager and torch.compile on the same modules (bench/gpu/torch_models.py)
# GPU_SECTIONS (default "tests bandwidth calibrate models") picks sections 2-5: when the
# build took most of a first call, a second call at once (the machine stays warm, build-gpu/
# is kept) with GPU_SECTIONS=models finishes the rest.
# Environment: GPU_BUDGET_S, GPU_SECTIONS, GPU_BATCH (8), GPU_MODELS ("resnet50 vit_b_16 gpt2_small"),
# GPU_RUNS (20), GPU_BW_MB (256), GPU_TORCH_COMPILE (1; 0 = eager only), NVCC.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/70_gpu.md
dir=$RESULTS/gpu
mkdir -p "$dir"
budget=${GPU_BUDGET_S:-540}
batch=${GPU_BATCH:-8}
models=${GPU_MODELS:-resnet50 vit_b_16 gpt2_small}
runs=${GPU_RUNS:-20}
mb=${GPU_BW_MB:-256}
compile=${GPU_TORCH_COMPILE:-1}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export FX_NVCC=$NVCC
SECONDS=0

if ! nvidia-smi > /dev/null 2>&1; then
  printf '## On the GPU\n\nskipped: no GPU (nvidia-smi fails on this machine).\n' > "$out"
  echo "skipped: no GPU"
  exit 0
fi

# Sections append to the results file as they finish, so a cut-off run still says what
# it measured.
say() { printf '%s\n' "$*" >> "$out"; }
left() { echo $((budget - SECONDS)); }
sections=" ${GPU_SECTIONS:-tests bandwidth calibrate models} "
want() { [[ $sections == *" $1 "* ]]; }
# fits SECONDS_NEEDED NAME: whether a section expected to take that long still fits.
fits() {
  if [ "$(left)" -lt "$1" ]; then
    say "" "$2: skipped, $(left) s of the ${budget} s budget left (needs about $1 s)."
    return 1
  fi
}
{
  echo "## On the GPU"
  echo
  echo "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1);"
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$FX_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'),"
  echo "$(nproc) CPU cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1))."
} > "$out"

# ---- 1. build (incremental when build-gpu/ is already there)
build=${GPU_BUILD_DIR:-$FX_ROOT/build-gpu}
tests_dir=$build/tests
FXC=$build/app/fxc
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
t0=$SECONDS
if cmake -S "$FX_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFX_BUILD_GUI=OFF \
  -DFX_ENABLE_CUDA=ON "${launcher[@]}" > "$dir/cmake.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target fxc fx_cuda_plan_tests fx_cuda_runtime_tests \
    > "$dir/build.log" 2>&1; then
  say "" "### Build" "" "$build (Release, GUI off, CUDA on): $((SECONDS - t0)) s;" \
    "$(grep -m1 'CUDA executor' "$dir/cmake.log" | sed 's/^-- //')"
else
  say "" "### Build" "" "FAILED after $((SECONDS - t0)) s; the last lines of the logs:" "" '```'
  tail -n 25 "$dir/build.log" "$dir/cmake.log" >> "$out" 2>/dev/null
  say '```'
  cat "$out"
  exit 1
fi

# ---- 2. the CUDA tests
if want tests && fits 60 "CUDA tests"; then
  say "" "### CUDA tests" "" '```'
  for t in fx_cuda_plan_tests fx_cuda_runtime_tests; do
    if [ -x "$tests_dir/$t" ]; then
      (cd "$tests_dir" && XDG_CACHE_HOME=$dir/test-cache timeout 300 "./$t" --gtest_brief=1 \
        > "$dir/$t.log" 2>&1)
      echo "$t: exit $? -- $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$dir/$t.log" | tr '\n' ' ')" >> "$out"
      grep -E '^\[  FAILED  \] [A-Za-z]' "$dir/$t.log" >> "$out"
    else
      echo "$t: not built" >> "$out"
    fi
  done
  say '```'
fi

# ---- 3. generated memory-bound kernels
if want bandwidth && fits 60 "Memory-bound kernels"; then
  cu=$dir/bandwidth_kernels.cu
  say "" "### Generated memory-bound kernels" ""
  say "\`fxc codegen --bandwidth $mb --cuda-out gen.cu\`, built with \`nvcc -O3 -arch=native" \
    "bench/gpu/bandwidth.cu gen.cu\` and run with \`bandwidth $mb 50\` (median of 50, CUDA events;" \
    "bytes = inputs read once + outputs written once; floor = the generated copy), then" \
    "\`python3 bench/gpu/torch_bandwidth.py $mb 50\` (torch.compile, same shapes). Targets: within" \
    "1.1x of the copy's time per byte, no slower than torch.compile." "" '```'
  if "$FXC" -q codegen --bandwidth "$mb" --cuda-out "$cu" > "$dir/codegen.log" 2>&1 &&
    "$NVCC" -O3 -std=c++17 -arch=native -o "$dir/bandwidth" "$FX_ROOT/bench/gpu/bandwidth.cu" "$cu" \
      > "$dir/nvcc.log" 2>&1; then
    timeout 120 "$dir/bandwidth" "$mb" 50 >> "$out" 2>&1 || echo "(bandwidth: exit $?)" >> "$out"
    timeout 180 "$PY" "$FX_ROOT/bench/gpu/torch_bandwidth.py" "$mb" 50 >> "$out" 2>&1 ||
      echo "(torch: exit $?)" >> "$out"
  else
    echo "(building the kernels failed)" >> "$out"
    tail -n 10 "$dir/codegen.log" "$dir/nvcc.log" >> "$out"
  fi
  say '```'
fi

# ---- 4. calibration
profile=nvidia-h100
[ -f "$dir/gpu-profile.json" ] && profile=$dir/gpu-profile.json
if want calibrate && fits 60 "Calibration"; then
  say "" "### fxc calibrate --device cuda" "" '```'
  if timeout 180 "$FXC" calibrate --device cuda --out "$dir/gpu-profile.json" >> "$out" 2>"$dir/calibrate.log"; then
    profile=$dir/gpu-profile.json
  else
    echo "(calibrate: exit $?)" >> "$out"
    tail -n 5 "$dir/calibrate.log" >> "$out"
  fi
  say '```'
fi

# ---- 5. whole models
if want models && fits 90 "Whole models"; then
  say "" "### Whole models, batch $batch" ""
  say "\`fxc profile MODEL --device cuda --opt-level 2 --estimate-device PROFILE --runs $runs" \
    "--warmup 5 --json\`: unfused (one kernel per ONNX node) and fused alternating, CUDA events" \
    "per launch, outputs of both compared with the CPU runtime's on the same inputs; PyTorch" \
    "eager and torch.compile on the same modules in this run (float32, TF32 off everywhere)." ""
  # shellcheck disable=SC2086
  timeout 240 "$PY" "$FX_ROOT/bench/gpu/export_gpu_models.py" --out "$dir/models" --batch "$batch" \
    --only $models > "$dir/export.jsonl" 2> "$dir/export.log" || say "(export: exit $?; $(tail -n 1 "$dir/export.log"))"
  for m in $models; do
    f=$dir/models/${m}_b$batch.onnx
    [ -f "$f" ] || { say "$m: not exported"; continue; }
    fits 60 "$m (fxc)" || continue
    timeout $(($(left) > 200 ? 200 : $(left))) "$FXC" profile "$f" --device cuda --opt-level 2 \
      --estimate-device "$profile" --runs "$runs" --warmup 5 --json > "$dir/$m.cuda.json" \
      2> "$dir/$m.cuda.log" || say "$m: fxc profile exit $? ($(grep -m1 -E 'fxc:|error' "$dir/$m.cuda.log"))"
  done
  if fits 60 "PyTorch"; then
    extra=()
    [ "$compile" = 1 ] || extra=(--no-compile)
    # shellcheck disable=SC2086
    timeout $(($(left) - 10)) "$PY" "$FX_ROOT/bench/gpu/torch_models.py" --batch "$batch" \
      --runs "$runs" --only $models "${extra[@]}" > "$dir/torch.jsonl" 2> "$dir/torch.log" ||
      say "(torch_models: exit $?)"
  fi
  "$PY" - "$dir" "$batch" $models >> "$out" <<'PYEOF'
import json, os, sys
d, batch, models = sys.argv[1], sys.argv[2], sys.argv[3:]
torch = {}
if os.path.exists(f"{d}/torch.jsonl"):
    for line in open(f"{d}/torch.jsonl"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "name" in r:
            torch[(r["name"], r["mode"])] = r
def t(name, mode):
    r = torch.get((name, mode))
    if not r:
        return "-"
    return r.get("error", "")[:40] if "error" in r else f"{r['median_ms']:.2f}"
print("| model | fxc unfused ms | fxc fused ms | fused speedup | kernels | outputs vs CPU | "
      "torch eager ms | torch.compile ms |")
print("|---|---|---|---|---|---|---|---|")
for m in models:
    p = f"{d}/{m}.cuda.json"
    try:
        j = json.load(open(p))
        b, a = j["before"], j["after"]
        row = [f"{b['median_ms']:.2f}", f"{a['median_ms']:.2f}", f"{j['speedup']:.3f}",
               f"{len(b['kernels'])} -> {len(a['kernels'])}",
               ("match" if j["outputs_match"] else "DIFFER") + f" ({j.get('codegen_note', '')})"]
    except Exception as e:
        row = ["-", "-", "-", "-", f"no result ({type(e).__name__})"]
    print(f"| {m} b{batch} | " + " | ".join(row) + f" | {t(m, 'eager')} | {t(m, 'compile')} |")
PYEOF
fi
say "" "Total $SECONDS s."
cat "$out"
