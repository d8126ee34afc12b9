#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the ONNX Runtime peer. Per model: median latency with graph optimizations
# disabled and all (2 intra-op threads), and ORT's node count after its optimizer at
# level extended (fusions only) and all (plus NCHWc layout rewrites).
# Leaves $RESULTS/ort/<model>.<level>.json (ort_run.js output) for later steps to join,
# and $RESULTS/ort/<model>.data/{input,output}_<i>.pb: the inputs and ORT's outputs with
# optimizations disabled, the reference for equivalence checks.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/20_ort.md
dir=$RESULTS/ort
mkdir -p "$dir"
threads=${ORT_THREADS:-2}
runs=${ORT_RUNS:-20}

if [ ! -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ]; then
  echo "## ONNX Runtime peer" > "$out"
  echo >> "$out"
  echo "Skipped: bench/peer/node_modules is missing (cd bench/peer && npm install --ignore-scripts)." >> "$out"
  exit 0
fi
version=$(node -p "require('$FX_ROOT/bench/peer/node_modules/onnxruntime-node/package.json').version")

{
  echo "## ONNX Runtime peer"
  echo
  echo "onnxruntime-node $version, CPU, $threads intra-op threads, sequential executor;"
  echo "median of $runs runs after 3 warm-up runs (fastest run in brackets: on a shared, loaded"
  echo "machine it is the better estimate of the uncontended time), seeded random inputs."
  echo "Command: \`node bench/peer/ort_run.js MODEL --threads $threads --opt LEVEL --runs $runs [--dim ...] --save-optimized F\`."
  echo "Node counts are of the model ORT saves after optimizing (\`optimizedModelFilePath\`)."
  echo
  echo "| model | ONNX nodes | ORT nodes, extended | ORT nodes, all | ORT ms, disabled | ORT ms, all | speed-up (medians) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} > "$out"

while IFS=$'\t' read -r name path dims int_max; do
  warm_cache "$path"
  # shellcheck disable=SC2046
  nodes=$(jq .nodes "$RESULTS/inspect/$name.json" 2>/dev/null ||
          "$FXC" -q inspect "$path" $(dims_args "$dims") --json | jq .nodes)
  for level in disabled extended all; do
    # Extended is only for its node count; timing it too would double the step's time.
    r=$runs; [ "$level" = extended ] && r=0
    opt_model=$dir/$name.$level.optimized.onnx
    data=()
    [ "$level" = disabled ] && data=(--save-inputs "$dir/$name.data" --outputs "$dir/$name.data")
    # shellcheck disable=SC2046
    node "$ORT_RUN" "$path" --threads "$threads" --opt "$level" --runs "$r" \
      --int-max "$int_max" $(dims_args "$dims") --save-optimized "$opt_model" "${data[@]}" \
      > "$dir/$name.$level.json"
    rm -f "$opt_model" "$opt_model.data"
  done
  j() { jq -r "$1" "$dir/$name.$2.json"; }
  dis=$(j .median_ms disabled) all=$(j .median_ms all)
  printf '| %s | %s | %s | %s | %.2f (%.2f) | %.2f (%.2f) | %.2fx |\n' "$name" "$nodes" \
    "$(j .optimized_nodes extended)" "$(j .optimized_nodes all)" "$dis" "$(j .min_ms disabled)" \
    "$all" "$(j .min_ms all)" "$(awk -v a="$dis" -v b="$all" 'BEGIN {print a / b}')" >> "$out"
  echo "ort $name: disabled $dis ms, all $all ms" >&2
done < <(bench_models)
