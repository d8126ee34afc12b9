#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the control-flow models of the corpus (If, Loop, Scan; Silero VAD: If around
# LSTMs) through `fxc run` and through ONNX Runtime on the same inputs (the corpus's
# MODEL.inputs/input_<i>.pb), outputs compared with bench/compare_outputs.py
# (largest |fxc - ORT| over largest |ORT| per output, within 1e-3). Correctness only:
# these models are too small for timings to mean anything.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
mkdir -p "$RESULTS"
out=$RESULTS/22_control_flow_vs_ort.md
corpus=${CF_CORPUS:-$BENCH_CACHE/corpus}
models=${CF_MODELS:-onnxtest_if onnxtest_loop11 onnxtest_scan9_sum silero_vad}

{
  echo "## Control-flow models: fxc run against ONNX Runtime"
  echo
  if [ ! -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ]; then
    echo "Skipped: bench/peer/node_modules is missing (cd bench/peer && npm install --ignore-scripts)."
    exit 0
  fi
  echo "Inputs: the corpus's MODEL.inputs. Commands: \`node bench/peer/ort_run.js MODEL --inputs I"
  echo "--outputs R --runs 1\`, \`fxc run MODEL --input NAME=I/input_<i>.pb ... --output-dir O\`,"
  echo "\`bench/compare_outputs.py R O\`."
  echo
  echo "| model | control flow | fxc run | outputs vs ORT | largest relative difference |"
  echo "|---|---|---|---|---:|"
} > "$out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in $models; do
  model=$corpus/$name.onnx inputs=$corpus/$name.inputs
  [ -f "$model" ] || { echo "| $name | | model missing | | |" >> "$out"; continue; }
  ops=$("$PY" -c "
import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
seen = []
def walk(g):
    for n in g.node:
        if n.op_type in ('If', 'Loop', 'Scan') and n.op_type not in seen: seen.append(n.op_type)
        for a in n.attribute:
            if a.g.node: walk(a.g)
walk(m.graph)
print('+'.join(seen) or '-')
init = {i.name for i in m.graph.initializer}
names = [i.name for i in m.graph.input if i.name not in init]
open(sys.argv[2], 'w').write(' '.join(f'--input {n}={sys.argv[3]}/input_{k}.pb' for k, n in enumerate(names)))
" "$model" "$tmp/args" "$inputs")
  node "$ORT_RUN" "$model" --inputs "$inputs" --outputs "$tmp/ort_$name" --runs 1 > /dev/null
  # shellcheck disable=SC2046
  if ! "$FXC" -q run "$model" $(cat "$tmp/args") --output-dir "$tmp/fx_$name" > "$tmp/fx.log" 2>&1; then
    err=$(tail -1 "$tmp/fx.log" | tr '|' '/')
    echo "| $name | $ops | fails: $err | | |" >> "$out"
    continue
  fi
  verdict=$("$PY" "$FX_ROOT/bench/compare_outputs.py" "$tmp/ort_$name" "$tmp/fx_$name" || true)
  ok=$(jq -r 'if .ok then "match" else "DIFFER" end' <<< "$verdict")
  rel=$(jq -r '[.outputs[]?.rel_diff // 0] | max // 0 | tostring' <<< "$verdict")
  echo "| $name | $ops | runs | $ok | $rel |" >> "$out"
  echo "control flow vs ort $name: $ok (largest relative difference $rel)" >&2
done
cat "$out"
