#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: what the fusion analysis finds and how long it takes. Per model, device profile
# (cpu-host, nvidia-h100) and opt level (1-3): kernels and DRAM bytes before/after and
# the analysis time, from `fxc analyze --json`; beside it, the node count of the model
# ONNX Runtime saves after its own optimizer (extended: fusions; all: + NCHWc layout
# nodes), counted by `fxc inspect --json`. Then the analysis time of a generated
# 100,000-node graph against the 3 s target.
# Leaves $RESULTS/analysis/NAME.DEVICE.LEVEL.json (fxc analyze --json, last run) and
# $RESULTS/analysis/NAME.ort.LEVEL.json (ort_run.js output).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/15_analysis.md
dir=$RESULTS/analysis
mkdir -p "$dir"
devices=${ANALYSIS_DEVICES:-cpu-host nvidia-h100}
synthetic_nodes=${SYNTHETIC_NODES:-100000}
have_ort=0
[ -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ] && have_ort=1

# analyze NAME PATH DIMS DEVICE LEVEL: runs fxc analyze $BENCH_REPEAT times, keeps the
# last JSON, prints the median analysis_ms. The counts must not change between runs.
analyze() {
  local name=$1 path=$2 dims=$3 device=$4 level=$5 json=$dir/$1.$4.$5.json ms=() counts=""
  for _ in $(seq "$BENCH_REPEAT"); do
    # shellcheck disable=SC2046
    "$FXC" -q analyze "$path" $(dims_args "$dims") --device "$device" --opt-level "$level" \
      --json > "$json"
    ms+=("$(jq .analysis_ms "$json")")
    c=$(jq -c '[.kernels_before, .kernels_after, .bytes_before, .bytes_after]' "$json")
    if [ -n "$counts" ] && [ "$c" != "$counts" ]; then
      echo "error: fxc analyze $name --device $device --opt-level $level is not deterministic: $counts vs $c" >&2
      exit 1
    fi
    counts=$c
  done
  printf '%s\n' "${ms[@]}" | median
}

# ort_nodes NAME PATH DIMS INT_MAX LEVEL: nodes of ORT's optimized model (fxc inspect).
ort_nodes() {
  local name=$1 path=$2 dims=$3 int_max=$4 level=$5 opt=$dir/$1.ort.$5.onnx
  [ $have_ort -eq 1 ] || { echo "-"; return; }
  # shellcheck disable=SC2046
  node "$ORT_RUN" "$path" --threads 2 --opt "$level" --runs 0 --warmup 0 --int-max "$int_max" \
    $(dims_args "$dims") --save-optimized "$opt" > "$dir/$name.ort.$level.json"
  # ORT's saved model keeps the original's external data reference (NAME.onnx.data).
  local data; data=$dir/$(basename "$path").data
  [ ! -f "$path.data" ] || ln -sf "$path.data" "$data"
  # shellcheck disable=SC2046
  local n; n=$("$FXC" -q inspect "$opt" $(dims_args "$dims") --json | jq .nodes)
  [ ! -f "$path.data" ] || rm -f "$data"
  local js; js=$(jq .optimized_nodes "$dir/$name.ort.$level.json")
  [ "$n" = "$js" ] || echo "warning: $name ORT $level: fxc inspect counts $n nodes, ort_run.js $js" >&2
  rm -f "$opt" "$opt.data"
  echo "$n"
}

mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }

{
  echo "## Fusion analysis"
  echo
  echo "Kernels (before: one per node that launches one, so Constant and other no-kernel"
  echo "nodes are not counted; after: one per group or unfused node) and DRAM bytes"
  echo "moved, as estimated by the cost model for the named device profile, at opt levels"
  echo "1 / 2 / 3 (1 seed patterns, 2 + automatic vertical, 3 + horizontal/multi-output),"
  echo "default threshold 30%. Analysis ms is fxc's own \`analysis_ms\` (median of $BENCH_REPEAT runs;"
  echo "model loading excluded). ORT nodes: the model ONNX Runtime saves after optimizing at"
  echo "level extended (its fusions) and all (also NCHWc layout nodes on CPU), counted with"
  echo "\`fxc inspect --json\`. ORT fuses for its own CPU kernels, fxc for the device profile:"
  echo "the counts are comparable in kind, not equal in meaning."
  echo "Commands: \`fxc analyze MODEL [--dim ...] --device D --opt-level L --json\`;"
  echo "\`node bench/peer/ort_run.js MODEL --opt extended|all --runs 0 --save-optimized F\`, then \`fxc inspect F --json\`."
  echo
  echo "| model | device | ONNX nodes | kernels before | kernels after L1 / L2 / L3 | MiB before | MiB after L1 / L2 / L3 | analysis ms L1 / L2 / L3 | ORT nodes extended / all |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$out"

while IFS=$'\t' read -r name path dims int_max; do
  warm_cache "$path"
  # shellcheck disable=SC2046
  nodes=$(jq .nodes "$RESULTS/inspect/$name.json" 2>/dev/null ||
          "$FXC" -q inspect "$path" $(dims_args "$dims") --json | jq .nodes)
  ort="$(ort_nodes "$name" "$path" "$dims" "$int_max" extended) / $(ort_nodes "$name" "$path" "$dims" "$int_max" all)"
  for device in $devices; do
    ms=()
    for level in 1 2 3; do ms+=("$(analyze "$name" "$path" "$dims" "$device" "$level")"); done
    j() { jq -r "$1" "$dir/$name.$device.$2.json"; }
    printf '| %s | %s | %s | %s | %s / %s / %s | %s | %s / %s / %s | %.2f / %.2f / %.2f | %s |\n' \
      "$name" "$device" "$nodes" "$(j .kernels_before 1)" "$(j .kernels_after 1)" "$(j .kernels_after 2)" \
      "$(j .kernels_after 3)" "$(mib "$(j .bytes_before 1)")" "$(mib "$(j .bytes_after 1)")" \
      "$(mib "$(j .bytes_after 2)")" "$(mib "$(j .bytes_after 3)")" "${ms[0]}" "${ms[1]}" "${ms[2]}" \
      "$ort" >> "$out"
    echo "analysis $name $device: kernels $(j .kernels_before 1) -> $(j .kernels_after 1)/$(j .kernels_after 2)/$(j .kernels_after 3), ms ${ms[*]}" >&2
  done
done < <(bench_models)

cpu_host=$(jq -r '.device_source' "$dir/tiny_cnn.cpu-host.1.json" 2>/dev/null || echo "?")
{
  echo
  echo "cpu-host profile: $cpu_host (\`fxc calibrate\`)."
  echo
  echo "### Synthetic graph"
  echo
  echo "Command: \`fxc bench-synthetic --nodes $synthetic_nodes --device D --opt-level L --json\`;"
  echo "analysis ms is the median of $BENCH_REPEAT runs (graph generation excluded)."
  echo
  echo "| nodes | device | opt level | groups | kernels before -> after | analysis ms |"
  echo "|---:|---|---:|---:|---:|---:|"
} >> "$out"
worst=0
for device in $devices; do
  for level in 1 2 3; do
    json=$dir/synthetic.$device.$level.json
    : > "$dir/synthetic.runs"
    for _ in $(seq "$BENCH_REPEAT"); do
      "$FXC" -q bench-synthetic --nodes "$synthetic_nodes" --device "$device" --opt-level "$level" \
        --json > "$json"
      jq .analysis_ms "$json" >> "$dir/synthetic.runs"
    done
    sms=$(median < "$dir/synthetic.runs")
    worst=$(awk -v a="$worst" -v b="$sms" 'BEGIN {print (b > a) ? b : a}')
    printf '| %s | %s | %s | %s | %s -> %s | %.1f |\n' "$(jq .nodes "$json")" "$device" "$level" \
      "$(jq .groups "$json")" "$(jq .kernels_before "$json")" "$(jq .kernels_after "$json")" "$sms" >> "$out"
    echo "synthetic $device L$level: $sms ms" >&2
  done
done
verdict=$(awk -v w="$worst" 'BEGIN {print (w < 3000) ? "met" : "MISSED"}')
{
  echo
  echo "Target: a $synthetic_nodes-node graph analyzed in under 3 s at every level: $verdict (slowest median $(printf %.0f "$worst") ms)."
} >> "$out"
