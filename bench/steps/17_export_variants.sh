#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the same network exported several ways (BN folded or kept, weights through
# Identity or Constant nodes or listed as inputs, external data, static or dynamic dims,
# opsets 11 to 17): per variant, the canonical node count, the groups and the fused
# speed-up, and per family whether the speed-ups are equal within noise.
#
# Per variant: `fxc -q analyze MODEL --json` with no --dim (canonical nodes, kernels,
# groups; two digests of the groups: of their member names, and of their op types in
# order, which does not depend on what the exporter named the nodes). Then ROUNDS rounds;
# each round runs every variant of the family once, `fxc -q codegen MODEL --opt-level 2
# --bench RUNS --threads THREADS --json --interleaved-only` with the model's corpus dims
# and inputs (unfused and fused alternate run by run, so their ratio shares the load).
# The speed-up is unfused / fused, the median over rounds; the noise of a family is the
# largest spread (max - min over rounds) of any of its variants. A family's speed-ups are
# "equal within noise" when their range is no larger than that noise.
# Writes $RESULTS/17_export_variants.md and $RESULTS/export_variants/summary.json.
#
# Environment: VARIANT_ROUNDS (default 3), VARIANT_RUNS (default 5), VARIANT_THREADS (2),
# VARIANT_FAMILIES="resnet18 bert_mini" (only these families).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
dir=$RESULTS/export_variants
out=$RESULTS/17_export_variants.md
rounds=${VARIANT_ROUNDS:-3} runs=${VARIANT_RUNS:-5} threads=${VARIANT_THREADS:-2}
mkdir -p "$dir"
if [ ! -f "$BENCH_CACHE/corpus/corpus.json" ]; then
  echo "## The same network exported several ways" > "$out"
  echo "Skipped: the corpus is not built." >> "$out"
  exit 0
fi

# Family -> its exports in the corpus (resnet18_qdq_int8 and resnet18_fp16 compute in
# other types: another network as far as groups and speed go, not an export habit).
declare -A family=(
  [resnet18]="resnet18 resnet18_bn_kept resnet18_bn_kept_untrained resnet18_no_folding
    resnet18_constant_weights resnet18_initializers_as_inputs resnet18_external_data
    resnet18_dynamic_batch resnet18_opset11 resnet18_opset13 resnet18_opset17"
  [mobilenet_v2]="mobilenet_v2 mobilenet_v2_bn_kept mobilenet_v2_dynamic_hw"
  [efficientnet_b0]="efficientnet_b0 efficientnet_b0_dynamic_batch"
  [bert_mini]="bert_mini bert_mini_static bert_mini_no_folding bert_mini_opset11 bert_mini_opset17"
  [gpt_small]="gpt_small gpt_small_opset17"
  [convnext_tiny]="convnext_tiny convnext_tiny_opset17"
)
order="resnet18 mobilenet_v2 efficientnet_b0 bert_mini gpt_small convnext_tiny"
families=${VARIANT_FAMILIES:-$order}

lscpu > "$dir/lscpu.txt"
cpu=$(sed -n 's/^Model name: *//p' "$dir/lscpu.txt" | head -1)
nproc_all=$(nproc --all)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
declare -A path dims
while IFS=$'\t' read -r name p d _; do path[$name]=$p dims[$name]=$d; done < <(corpus_models)

: > "$dir/families.txt"
for f in $families; do
  echo "$f ${family[$f]//$'\n'/ }" | tr -s ' ' >> "$dir/families.txt"
  for m in ${family[$f]}; do
    [ -n "${path[$m]:-}" ] || { echo "17_export_variants: $m not in the corpus" >&2; continue; }
    mkdir -p "$dir/$m"
    "$FXC" -q analyze "${path[$m]}" --json > "$dir/$m/analyze.json" 2> "$dir/$m/analyze.err" ||
      echo "analyze failed: $(tail -1 "$dir/$m/analyze.err")" >> "$dir/$m/errors"
  done
done

for r in $(seq 1 "$rounds"); do
  for f in $families; do
    for m in ${family[$f]}; do
      [ -n "${path[$m]:-}" ] || continue
      p=${path[$m]} in_fxc=()
      [ -d "${p%.onnx}.inputs" ] && in_fxc=(--inputs "${p%.onnx}.inputs")
      warm_cache "$p"
      cut -d' ' -f1 /proc/loadavg > "$dir/$m/load.$r"
      echo "17_export_variants: round $r/$rounds $m (load $(cat "$dir/$m/load.$r"))" >&2
      rc=0
      # shellcheck disable=SC2046
      "$FXC" -q codegen "$p" $(dims_args "${dims[$m]}") --opt-level 2 --bench "$runs" \
        --threads "$threads" --json --interleaved-only "${in_fxc[@]}" \
        > "$dir/$m/codegen.$r.json" 2> "$dir/$m/codegen.err" || rc=$?
      if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
        echo "codegen failed ($rc): $(grep -v '^\s*$' "$dir/$m/codegen.err" | tail -1)" >> "$dir/$m/errors"
      fi
    done
  done
done

"$PY" "$FX_ROOT/bench/export_variants_table.py" "$dir" "$out" --cpu "$cpu" --cores "$nproc_all" \
  --threads "$threads" --rounds "$rounds" --runs "$runs"
