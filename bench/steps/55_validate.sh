#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the estimates validated on models the calibration never saw (issue 21).
# 1. `fxc calibrate --out PROFILE` measures this machine over a grid of kernel shapes
#    (no model is looked at, so every corpus model is left out of everything fitted);
#    on a busy machine the sanity checks refuse it, and VALIDATE_FORCE=1 (default here:
#    the bench machine is shared) saves it with its findings recorded, shown below;
# 2. bench/validate_estimates.py per corpus model: `fxc analyze` predicts each group's
#    saving with its interval, `fxc profile --plan` (every candidate accepted) measures
#    it; per model and pooled: Spearman of per-group savings, median |error| and sign
#    accuracy on groups outside the noise (measured >= 2x its standard error), interval
#    coverage, predicted vs measured whole-model speed-up (within +-10%).
# Models: VALIDATE_MODELS (names from corpus.json; default a mixed subset), all with
# VALIDATE_MODELS=all. Runs under flock /tmp/bench.lock (the machine is shared).
# VALIDATE_LOMO=1: leave one model out instead (bench/validate_lomo.py): each model
# measured once, then per model a fold fitted on the grid and every OTHER model's
# measurement predicts it; both the grid-only and the per-fold tables are written, and
# the stricter leave-one-family-out table (a family's export variants all left out).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/55_validate.md
dir=$RESULTS/validate
mkdir -p "$dir"
models=${VALIDATE_MODELS:-resnet18 mobilenet_v2 squeezenet1_1 bert_mini efficientnet_b0 densenet121}
runs=${VALIDATE_RUNS:-10}
threads=${VALIDATE_THREADS:-1}
profile=$dir/cpu-host.grid.json
force=()
[ "${VALIDATE_FORCE:-1}" = 1 ] && force=(--force)

lock() { flock /tmp/bench.lock "$@"; }
if [ "${VALIDATE_REUSE_PROFILE:-0}" != 1 ] || [ ! -f "$profile" ]; then
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  lock "$FXC" calibrate --out "$profile" "${force[@]}" --work-dir "$dir/grid" --threads "$threads" \
    > "$dir/calibrate.txt" 2> "$dir/calibrate.log" || true
fi
[ -f "$profile" ] || { echo "## Validation: calibration refused" > "$out"; cat "$dir/calibrate.txt" >> "$out"; exit 0; }

# The same grid measurements fitted again on the base without its working-set curve: the
# cost model as it was before the curve (one bandwidth per class), judged below on the
# same model measurements (validate_estimates.py --measured-in).
flat=$dir/cpu-host.flat.json
if [ -f "$dir/grid/base-profile.json.txt" ]; then
  "$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])); p.pop("bandwidth_curve",None); json.dump(p,open(sys.argv[2],"w"))' \
    "$dir/grid/base-profile.json.txt" "$dir/base.flat.json"
  "$FXC" calibrate --from "$dir"/grid/*.json --device "$dir/base.flat.json" --out "$flat" \
    > "$dir/calibrate.flat.txt" 2>&1 || rm -f "$flat"
fi

specs=()
while IFS=$'\t' read -r name path dims _; do
  if [ "$models" = all ] || [[ " $models " == *" $name "* ]]; then
    specs+=("$name=$path:$dims")
  fi
done < <(corpus_models)

load=$(cut -d' ' -f1 /proc/loadavg)
if [ "${VALIDATE_LOMO:-0}" = 1 ]; then
  lock "$PY" "$FX_ROOT/bench/validate_lomo.py" "$FXC" "$dir" "${specs[@]}" --runs "$runs" \
    --threads "$threads" --profile "$profile" --skip-folds > /dev/null
  # The folds measure nothing: outside the lock.
  {
    echo "## Validation: leave one model out over the corpus"
    echo
    echo "Load at start $load; lscpu: $(lscpu | grep 'Model name' | tr -s ' ')"
    echo
    "$PY" "$FX_ROOT/bench/validate_lomo.py" "$FXC" "$dir" "${specs[@]}" --runs "$runs" \
      --threads "$threads" --profile "$profile" --skip-measure --jobs 2 \
      --families "$BENCH_CACHE/corpus/corpus.json" --by-family
  } > "$out"
  cat "$out"
  exit 0
fi
lock "$PY" "$FX_ROOT/bench/validate_estimates.py" "$FXC" "$dir" "${specs[@]}" \
  --runs "$runs" --threads "$threads" --device "$profile" > "$dir/summary.json"
"$PY" "$FX_ROOT/bench/validate_breakdown.py" "$dir" "$profile" > "$dir/breakdown.md"
if [ -f "$flat" ]; then
  "$PY" "$FX_ROOT/bench/validate_estimates.py" "$FXC" "$dir/flat" "${specs[@]}" \
    --device "$flat" --measured-in "$dir" > "$dir/summary.flat.json"
  "$PY" "$FX_ROOT/bench/validate_breakdown.py" "$dir/flat" "$flat" > "$dir/breakdown.flat.md"
fi

"$PY" - "$dir/summary.json" "$dir/calibrate.txt" "$load" "$runs" "$threads" "$dir/summary.flat.json" > "$out" <<'PYEOF'
import json, os, sys
s = json.load(open(sys.argv[1]))
cal = open(sys.argv[2]).read().splitlines()
load, runs, threads = sys.argv[3:6]
flat = json.load(open(sys.argv[6])) if os.path.exists(sys.argv[6]) else None
f = lambda v, spec=".2f": "-" if v is None else format(v, spec)
pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"
print("## Validation: estimates on models the calibration never saw")
print()
print(f"`fxc calibrate --out P --force` (grid, no model), then per model `bench/validate_estimates.py`:")
print(f"`fxc analyze M --device P --json --plan-out plan`, every candidate accepted, `fxc profile M --plan plan")
print(f"--estimate-device P --json --runs {runs} --threads {threads}`. Load at start {load}. Outside the noise: measured")
print("saving >= 2x its standard error. Speed-up predicted = the cost model's unfused time / (that - the")
print("predicted savings of the fused groups); in brackets, on the measured unfused time.")
print()
for line in cal:
    if line.startswith(("Machine", "Finding", "Grid", "NOT SAVED")):
        print(f"    {line}")
print()
def table(s):
  print("| model | groups (outside noise) | uncertain | Spearman | median err | sign acc. | sign acc. certain | interval held | speed-up measured | predicted (on measured before) | within 10% |")
  print("|---|---|---|---|---|---|---|---|---|---|---|")
  for name, m in s["per_model"].items():
      if "error" in m:
          print(f"| {name} | failed: {m['error']} |||||||||| ")
          continue
      print(f"| {name} | {m['groups']} ({m['resolved']}) | {m['uncertain']} | {f(m['spearman'])} | {pct(m['median_abs_rel_error'])} "
            f"| {pct(m['sign_accuracy'])} | {pct(m['sign_accuracy_certain'])} | {pct(m['interval_coverage'])} | {f(m['speedup_measured'], '.3f')} "
            f"| {f(m['speedup_predicted'], '.3f')} ({f(m['speedup_predicted_on_measured_before'], '.3f')}) | {'yes' if m['speedup_within_10pct'] else 'no'} |")
  p = s["pooled"]
  print(f"| **pooled** | {p['groups']} ({p['resolved']}) | {p['uncertain']} | {f(p['spearman'])} | {pct(p['median_abs_rel_error'])} "
        f"| {pct(p['sign_accuracy'])} | {pct(p['sign_accuracy_certain'])} | {pct(p['interval_coverage'])} | | | {pct(p['speedup_within_10pct'])} of models |")
print("With the working-set curve (the profile as calibrated):")
print()
table(s)
if flat:
  print()
  print("The same measurements predicted without the curve (grid results refitted on the base")
  print("profile less its bandwidth_curve: one bandwidth per class, the model before):")
  print()
  table(flat)
print()
print("Targets (issue 21): speed-up within +-10% on >= 80% of models; sign right on >= 90% of groups")
print("outside the noise; pooled Spearman >= 0.85; median error <= 25% outside the noise.")
PYEOF
{
  echo
  echo "Where the error sits (bench/validate_breakdown.py; groups outside the noise; log2 of"
  echo "predicted / measured time of the group's unfused kernels and of its fused kernel):"
  echo
  cat "$dir/breakdown.md"
  if [ -f "$dir/breakdown.flat.md" ]; then
    echo
    echo "Without the curve:"
    echo
    head -n 9 "$dir/breakdown.flat.md"
  fi
} >> "$out"
cat "$out"
