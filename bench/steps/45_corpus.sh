#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the whole corpus (bench/corpus, $BENCH_CACHE/corpus/corpus.json), four ways in
# the same run: ONNX Runtime with graph optimizations disabled and all (ort_run.js), our
# runtime unfused and fused with the plan fxc proposes by default (`fxc codegen MODEL
# --opt-level 2`: default threshold and device; unfused and fused alternate run by run).
# Each model's own input set (MODEL.inputs/input_<i>.pb) and dim bindings feed all four.
# ROUNDS interleaved rounds (ORT disabled, ORT all, fxc), RUNS timed runs each; the figure
# is the median of the round medians. Like for like: fxc fused against ORT all compares
# both timed run after run (fxc's --bench "alone" runs); fxc fused against unfused compares
# the two programs timed alternately, each run after the other's. Outputs: fxc fused
# against fxc unfused (fxc's scaled check) and against ORT disabled
# (bench/compare_outputs.py, 1e-3 of max |ref|).
# Prints each ratio, the geometric mean and the worst, with the CPU (lscpu: model name,
# ISA flags, cache sizes). Writes $RESULTS/45_corpus.md and $RESULTS/corpus/summary.json.
#
# Environment:
#   CORPUS_FAST=1        a quick check: a subset of families, 1 round of 3 runs
#   CORPUS_MODELS="a b"  only these models;   CORPUS_ROUNDS, CORPUS_RUNS, CORPUS_THREADS
#   FX_ISA=avx2          force the AVX2 paths: ONEDNN_MAX_CPU_ISA=AVX2 for oneDNN and
#                        FX_MARCH=x86-64-v3 (-march of the generated code). The runtime's
#                        own target_clones kernels and ONNX Runtime pick their ISA from
#                        cpuid and cannot be forced so: the table says so.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
dir=$RESULTS/corpus
mkdir -p "$dir"
out=$RESULTS/45_corpus.md
threads=${CORPUS_THREADS:-2}
if [ "${CORPUS_FAST:-0}" = 1 ]; then
  rounds=${CORPUS_ROUNDS:-1} runs=${CORPUS_RUNS:-3}
  models=${CORPUS_MODELS:-squeezenet1_1 resnet18 mobilenet_v2 efficientnet_b0 mnasnet1_0 lraspp_mobilenet_v3_large bert_tiny gpt_tiny lstm_2layer ppocr_v4_det}
else
  rounds=${CORPUS_ROUNDS:-2} runs=${CORPUS_RUNS:-5}
  models=${CORPUS_MODELS:-}
fi
isa=${FX_ISA:-native}
case "$isa" in
  native) ;;
  avx2) export ONEDNN_MAX_CPU_ISA=AVX2 FX_MARCH=${FX_MARCH:-x86-64-v3} ;;
  *) echo "45_corpus: FX_ISA must be native or avx2, got '$isa'" >&2; exit 2 ;;
esac
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

{
  echo "## Corpus: fxc vs ONNX Runtime, unfused and fused (ISA $isa)"
  echo
  if [ ! -f "$BENCH_CACHE/corpus/corpus.json" ]; then
    echo "Skipped: the corpus is not built (bench/corpus/build_corpus.py --out $BENCH_CACHE/corpus)."
    exit 0
  fi
  if [ ! -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ]; then
    echo "Skipped: bench/peer/node_modules is missing (cd bench/peer && npm install --ignore-scripts)."
    exit 0
  fi
} > "$out"
[ -f "$BENCH_CACHE/corpus/corpus.json" ] && [ -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ] ||
  exit 0

# The machine: what the ratios depend on.
lscpu > "$dir/lscpu.txt"
cpu=$(sed -n 's/^Model name: *//p' "$dir/lscpu.txt" | head -1)
flags=$(sed -n 's/^Flags: *//p' "$dir/lscpu.txt" | tr ' ' '\n' | grep -E '^(avx2|avx512.*|amx.*)$' | tr '\n' ' ')
caches=$(grep -E '^L[123][di]? cache' "$dir/lscpu.txt" | sed 's/ cache: */ /; s/  */ /g' | paste -sd, -)
ort_version=$(node -e "console.log(require('$FX_ROOT/bench/peer/node_modules/onnxruntime-node/package.json').version)")
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "45_corpus: $cpu; ISA flags: $flags; caches: $caches; ISA run: $isa" >&2

# One model: ROUNDS rounds of ORT disabled, ORT all, fxc unfused+fused; outputs once.
bench_one() {
  local name=$1 path=$2 dims=$3 d=$dir/$name
  local inputs=${path%.onnx}.inputs
  rm -rf "$d" && mkdir -p "$d"
  local in_ort=() in_fxc=()
  if [ -d "$inputs" ]; then in_ort=(--inputs "$inputs") in_fxc=(--inputs "$inputs"); fi
  warm_cache "$path"
  uptime | sed 's/.*load average: //' > "$d/load"
  local r rc
  for r in $(seq 1 "$rounds"); do
    local save=()
    [ "$r" = 1 ] && save=(--outputs "$d/ort_out")
    # shellcheck disable=SC2046
    node "$ORT_RUN" "$path" --threads "$threads" --opt disabled --runs "$runs" \
      "${in_ort[@]}" "${save[@]}" $(dims_args "$dims") > "$d/ort_disabled.$r.json" 2> "$d/ort.err" ||
      echo "ORT disabled failed: $(tail -1 "$d/ort.err")" >> "$d/errors"
    # shellcheck disable=SC2046
    node "$ORT_RUN" "$path" --threads "$threads" --opt all --runs "$runs" \
      "${in_ort[@]}" $(dims_args "$dims") > "$d/ort_all.$r.json" 2> "$d/ort.err" ||
      echo "ORT all failed: $(tail -1 "$d/ort.err")" >> "$d/errors"
    save=()
    [ "$r" = 1 ] && save=(--outputs "$d/fxc_out")
    rc=0
    # shellcheck disable=SC2046
    "$FXC" -q codegen "$path" $(dims_args "$dims") --opt-level 2 --bench "$runs" \
      --threads "$threads" --json --evict-mb 0 "${in_fxc[@]}" "${save[@]}" \
      > "$d/fxc.$r.json" 2> "$d/fxc.err" || rc=$?
    # 3: the fused outputs disagree (the JSON says how); anything else is a failure.
    if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
      echo "fxc failed ($rc): $(grep -v '^\s*$' "$d/fxc.err" | tail -1)" >> "$d/errors"
      break
    fi
  done
  if [ -d "$d/ort_out" ] && [ -d "$d/fxc_out" ]; then
    # Quantized outputs within FX_QUANT_STEPS quantization steps match (compare_outputs.py).
    "$PY" "$FX_ROOT/bench/compare_outputs.py" "$d/ort_out" "$d/fxc_out" --model "$path" \
      --steps "${FX_QUANT_STEPS:-2}" > "$d/vs_ort.json" || true
  fi
}

n=0
: > "$dir/models.txt"
while IFS=$'\t' read -r name path dims _; do
  if [ -n "$models" ]; then case " $models " in *" $name "*) ;; *) continue ;; esac; fi
  n=$((n + 1))
  echo "45_corpus: $n $name" >&2
  echo "$name" >> "$dir/models.txt"
  bench_one "$name" "$path" "$dims"
done < <(corpus_models)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
# The host profile every default plan was estimated with (fxc measures it on first use
# and caches it; `fxc calibrate` replaces it): another profile, another plan.
host_profile=${XDG_CACHE_HOME:-$HOME/.cache}/fusion-explorer/cpu-host.json
profile_note=$("$PY" - "$host_profile" <<'PYEOF'
import hashlib, json, sys
try:
    raw = open(sys.argv[1], "rb").read()
    j = json.loads(raw)
    print(f"{sys.argv[1]}: {'calibrated' if j.get('calibrated') else 'uncalibrated'},"
          f" {j.get('source', '?')}, sha256 {hashlib.sha256(raw).hexdigest()[:12]}")
except (OSError, ValueError) as e:
    print(f"{sys.argv[1]}: not readable ({e.__class__.__name__})")
PYEOF
)

"$PY" "$FX_ROOT/bench/corpus/corpus_table.py" "$dir" "$out" --cpu "$cpu" --flags "$flags" \
  --caches "$caches" --isa "$isa" --threads "$threads" --rounds "$rounds" --runs "$runs" \
  --onnxruntime "$ort_version" --load-before "$load_before" --load-after "$load_after" \
  --fast "${CORPUS_FAST:-0}" --host-profile "$profile_note"
