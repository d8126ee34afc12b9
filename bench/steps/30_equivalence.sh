#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: do `fxc run` (our CPU runtime, unfused) and ONNX Runtime (optimizations disabled)
# compute the same outputs on the same inputs? Needs step 20's $RESULTS/ort/<model>.data.
# A model passes when, for every output, max |fxc - ort| <= REL_TOL * max |ort|.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/30_equivalence.md
dir=$RESULTS/equivalence
mkdir -p "$dir"
tol=${EQ_REL_TOL:-1e-3}
threads=${FXC_THREADS:-2}

{
  echo "## Equivalence: fxc run vs ONNX Runtime"
  echo
  echo "Same seeded inputs (written by ort_run.js), ORT with optimizations disabled as the"
  echo "reference. Pass: max |fxc - ort| <= $tol x max |ort| for every output."
  echo "Command: \`fxc run MODEL --input NAME=input_<i>.pb --threads $threads --output-dir D\`,"
  echo "then \`bench/compare_outputs.py REF D\`. Time is fxc's own \"ran in\" (one run, cold)."
  echo
  echo "| model | outputs | max abs diff | max abs ref | relative | fxc run ms | verdict |"
  echo "|---|---|---:|---:|---:|---:|---|"
} > "$out"

while IFS=$'\t' read -r name path dims _; do
  ref=$RESULTS/ort/$name.data
  if [ ! -f "$ref/output_0.pb" ]; then
    echo "| $name | | | | | | no ORT reference (run step 20) |" >> "$out"
    continue
  fi
  inputs=()
  for f in "$ref"/input_*.pb; do
    n=$("$PY" -c 'import onnx,sys; t=onnx.TensorProto(); t.ParseFromString(open(sys.argv[1],"rb").read()); print(t.name)' "$f")
    inputs+=(--input "$n=$f")
  done
  rm -rf "${dir:?}/${name:?}"
  # shellcheck disable=SC2046
  if ! "$FXC" -q run "$path" $(dims_args "$dims") "${inputs[@]}" --threads "$threads" \
       --output-dir "$dir/$name" > "$dir/$name.log" 2>&1; then
    reason=$(tail -1 "$dir/$name.log" | tr '|' '/' | cut -c1-120)
    echo "| $name | | | | | | fxc run failed: $reason |" >> "$out"
    echo "equivalence $name: fxc run failed: $reason" >&2
    continue
  fi
  ran=$(sed -n 's/.*ran in \([0-9.]*\) ms.*/\1/p' "$dir/$name.log" | head -1)
  "$PY" "$FX_ROOT/bench/compare_outputs.py" "$ref" "$dir/$name" --rel-tol "$tol" \
    > "$dir/$name.json" || true
  jq -r '[([.outputs[] | "\(.name) \(.shape | map(tostring) | join("x"))"] | join(", ")),
          ([.outputs[].max_abs_diff // 0] | max), ([.outputs[].max_abs_ref // 0] | max),
          ([.outputs[].rel_diff // 0] | max),
          (if .ok then "pass" else "FAIL: " + (.error // ([.outputs[] | .error // empty] | join("; "))) end)
         ] | @tsv' "$dir/$name.json" |
    while IFS=$'\t' read -r outs diff refmax rel verdict; do
      printf '| %s | %s | %.3g | %.3g | %.2e | %s | %s |\n' "$name" "$outs" "$diff" "$refmax" \
        "$rel" "${ran:-?}" "$verdict"
    done >> "$out"
  echo "equivalence $name: $(jq -c '{ok, rel: [.outputs[].rel_diff]}' "$dir/$name.json")" >&2
done < <(bench_models)
