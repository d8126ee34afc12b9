#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: our unfused CPU runtime (fxc run) against ONNX Runtime with graph optimizations
# disabled, same thread count, interleaved in the same run: ROUNDS rounds, each one
# `ort_run.js --runs RUNS` then `fxc run --runs RUNS+1` (its first run, which builds
# the oneDNN primitives, is left out like ORT's warm-up). Per tool the median of the
# round medians; the load (uptime) is recorded before each model. Target: fxc / ORT
# <= 1.2 on ResNet-18 (BN kept), ResNet-50, MobileNetV2 and the GPT-2-like model.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
mkdir -p "$RESULTS"
out=$RESULTS/21_runtime_vs_ort.md
threads=${RT_THREADS:-2}
rounds=${RT_ROUNDS:-3}
runs=${RT_RUNS:-7}
models=${RT_MODELS:-resnet18 resnet50 mobilenet_v2 gpt2_small}

{
  echo "## CPU runtime vs ONNX Runtime (optimizations disabled)"
  echo
  if [ ! -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ]; then
    echo "Skipped: bench/peer/node_modules is missing (cd bench/peer && npm install --ignore-scripts)."
    exit 0
  fi
  echo "$threads threads each, $rounds interleaved rounds of $runs timed runs (ORT: after 3"
  echo "warm-up runs; fxc: after its first run). Figures: median of the round medians, fastest"
  echo "run in brackets. Commands: \`node bench/peer/ort_run.js MODEL --opt disabled --threads $threads"
  echo "--runs $runs\` and \`fxc run MODEL --threads $threads --runs $((runs + 1)) --output-dir D\`."
  echo "Load is \`uptime\`'s 1-minute average on this $(nproc)-core machine before the model."
  echo
  echo "| model | load | fxc ms | ORT ms | fxc / ORT | target <= 1.2 |"
  echo "|---|---:|---:|---:|---:|---|"
} > "$out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS=$'\t' read -r name path dims _; do
  case " $models " in *" $name "*) ;; *) continue ;; esac
  [ -f "$path" ] || { echo "| $name | | | | | model missing |" >> "$out"; continue; }
  warm_cache "$path"
  load=$(awk '{print $1}' /proc/loadavg)
  fx_med=() fx_min=() ort_med=() ort_min=()
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2046
    node "$ORT_RUN" "$path" --threads "$threads" --opt disabled --runs "$runs" \
      $(dims_args "$dims") > "$tmp/ort.json"
    ort_med+=("$(jq .median_ms "$tmp/ort.json")") ort_min+=("$(jq .min_ms "$tmp/ort.json")")
    # shellcheck disable=SC2046
    "$FXC" -q run "$path" $(dims_args "$dims") --threads "$threads" --runs $((runs + 1)) \
      --output-dir "$tmp/out" > "$tmp/fxc.log"
    line=$(grep 'median of' "$tmp/fxc.log")
    fx_med+=("$(sed -n 's/.*further runs \([0-9.]*\) ms.*/\1/p' <<< "$line")")
    fx_min+=("$(sed -n 's/.*(min \([0-9.]*\)).*/\1/p' <<< "$line")")
  done
  fm=$(printf '%s\n' "${fx_med[@]}" | median) om=$(printf '%s\n' "${ort_med[@]}" | median)
  fmin=$(printf '%s\n' "${fx_min[@]}" | sort -g | head -1)
  omin=$(printf '%s\n' "${ort_min[@]}" | sort -g | head -1)
  ratio=$(awk -v a="$fm" -v b="$om" 'BEGIN {printf "%.2f", a / b}')
  verdict=$(awk -v r="$ratio" 'BEGIN {print (r <= 1.2 ? "met" : "NOT met")}')
  printf '| %s | %s | %.1f (%.1f) | %.1f (%.1f) | %s | %s |\n' "$name" "$load" "$fm" "$fmin" \
    "$om" "$omin" "$ratio" "$verdict" >> "$out"
  echo "runtime vs ort $name: fxc $fm ms, ort $om ms, ratio $ratio (load $load)" >&2
done < <(bench_models)
