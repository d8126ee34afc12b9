#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: how long `fxc inspect` takes per model (parse + lazy load + shape inference).
# Median of $BENCH_REPEAT runs with a warm page cache, read from its --json output.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/10_inspect.md
mkdir -p "$RESULTS/inspect"

{
  echo "## fxc inspect"
  echo
  echo "Median of $BENCH_REPEAT runs, warm page cache. \`total_ms\`, \`load_ms\` and"
  echo "\`shape_inference_ms\` are fxc's own \`--json\` fields; wall is the process (\`date +%s%N\`)."
  echo "Command: \`fxc inspect MODEL [--dim ...] --json\`."
  echo
  echo "| model | file MiB | nodes | unknown-shape nodes | total ms | load ms | shape inference ms | process wall ms |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$out"

while IFS=$'\t' read -r name path dims _; do
  warm_cache "$path"
  json=$RESULTS/inspect/$name.json
  : > "$RESULTS/inspect/$name.runs"
  for _ in $(seq "$BENCH_REPEAT"); do
    t0=$(date +%s%N)
    # shellcheck disable=SC2046
    "$FXC" -q inspect "$path" $(dims_args "$dims") --json > "$json"
    t1=$(date +%s%N)
    jq -r --arg wall "$(( (t1 - t0) / 1000 ))" \
      '[.total_ms, .load_ms, .shape_inference_ms, ($wall | tonumber / 1000)] | @tsv' \
      "$json" >> "$RESULTS/inspect/$name.runs"
  done
  col() { cut -f"$1" "$RESULTS/inspect/$name.runs" | median; }
  total=$(col 1) load=$(col 2) si=$(col 3) wall=$(col 4)
  printf '| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f |\n' "$name" "$(mib "$path")" \
    "$(jq .nodes "$json")" "$(jq .unknown_shape_nodes "$json")" "$total" "$load" "$si" "$wall" \
    >> "$out"
  echo "inspect $name: total $total ms (load $load, shape inference $si, wall $wall)" >&2
  if [ "$name" = vit_b_16 ]; then
    verdict=$(awk -v w="$wall" 'BEGIN {print (w < 500) ? "met" : "MISSED"}')
    echo "ViT-B/16 inspected in under 0.5 s: $verdict (process wall $wall ms)" > "$RESULTS/inspect/target.txt"
  fi
done < <(bench_models)

if [ -f "$RESULTS/inspect/target.txt" ]; then
  { echo; echo "Target: $(cat "$RESULTS/inspect/target.txt")"; } >> "$out"
fi
