#!/bin/bash
# Step: before/after in our runtime. `fxc profile MODEL --opt-level 2 --json` runs the
# unfused and the fused program on the same seeded inputs, alternating runs, checks the
# outputs (rtol 1e-3, atol 1e-5; a group that breaks them is excluded) and measures the
# saving per group; `fxc calibrate --from` then fits the cost model to those savings.
# Models: BA_MODELS (default resnet18 mobilenet_v2 gpt2_small).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/50_before_after.md
dir=$RESULTS/before_after
mkdir -p "$dir"
# One thread by default: on this loaded 2-core machine two OpenMP threads often wait a
# whole scheduler slice for each other, which turns single kernels into 6 ms outliers
# and drowns the per-group savings the calibration fits. BA_THREADS=2 to compare.
threads=${BA_THREADS:-1}
runs=${BA_RUNS:-20}
models=${BA_MODELS:-resnet18 mobilenet_v2 gpt2_small}

{
  echo "## Before/after: unfused vs fused in our runtime, and the cost model's error"
  echo
  echo "Command: \`fxc profile MODEL --opt-level 2 --json --runs $runs --warmup 2 --threads $threads\`"
  echo "(before/after runs alternate; the fused program is the plan's accepted groups at"
  echo "opt level 2, threshold 30%), then \`fxc calibrate --from RESULT.json --out FITTED.json\`."
  echo "Prediction error = Spearman rank correlation and median |predicted - measured| /"
  echo "|measured| of the per-group saving; *before*: the cost model on the cpu-host profile;"
  echo "*after*: bandwidth and launch overhead fitted by least squares to the same groups"
  echo "(in-sample). Load = 1-minute load average when the model started (2-core machine)."
  echo
  echo "| model | load | before ms | after ms | speedup | outputs match | max abs err | groups fused/fallback/excluded | Spearman before -> after | median err before -> after | fitted BW, launch |"
  echo "|---|---:|---:|---:|---:|---|---:|---|---|---|---|"
} > "$out"

all_groups=()
while IFS=$'\t' read -r name path dims _; do
  case " $models " in *" $name "*) ;; *) continue ;; esac
  [ -f "$path" ] || { echo "| $name | | | | | | | | | | model missing |" >> "$out"; continue; }
  load=$(cut -d' ' -f1 /proc/loadavg)
  res=$dir/$name.json
  # shellcheck disable=SC2046
  if ! "$FXC" profile "$path" $(dims_args "$dims") --opt-level 2 --json --runs "$runs" \
       --warmup 2 --threads "$threads" > "$res" 2> "$dir/$name.log"; then
    reason=$(tail -1 "$dir/$name.log" | tr '|' '/' | cut -c1-120)
    echo "| $name | $load | | | | | | | | | fxc profile failed: $reason |" >> "$out"
    continue
  fi
  all_groups+=("$res")
  cal=$dir/$name.calibration.json
  if ! "$FXC" calibrate --from "$res" --out "$dir/$name.fitted.json" --json > "$cal" \
       2>> "$dir/$name.log"; then
    echo '{}' > "$cal"
  fi
  "$PY" - "$res" "$cal" "$name" "$load" >> "$out" <<'PYEOF'
import json, sys
r, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
name, load = sys.argv[3], sys.argv[4]
st = [g["status"] for g in r["groups"]]
f = lambda v, spec: "-" if v is None else format(v, spec)
pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"
b, a = c.get("before", {}), c.get("after", {})
bw = c.get("bandwidth_bytes_per_s") or 0
lo = c.get("launch_overhead_s") or 0
fit = ("no fit" if not c else
       (f"{bw / 1e9:.1f} GB/s" if bw > 0 else "BW not fitted") + ", " +
       (f"launch {lo * 1e6:.1f} us" if lo > 0 else "launch not fitted") +
       ("" if bw > 0 or lo > 0 else " (savings not explained by bytes or launches)"))
print(f"| {name} | {load} | {f(r['before']['median_ms'], '.2f')} | {f(r['after']['median_ms'], '.2f')} "
      f"| {f(r['speedup'], '.3f')}x | {'yes' if r['outputs_match'] else 'NO'} "
      f"| {f(r['max_abs_error'], '.2g')} | {st.count('fused')}/{st.count('fallback')}/{st.count('excluded')} "
      f"| {f(b.get('spearman'), '.2f')} -> {f(a.get('spearman'), '.2f')} "
      f"| {pct(b.get('median_abs_rel_error'))} -> {pct(a.get('median_abs_rel_error'))} | {fit} |")
PYEOF
  echo "before_after $name: $(jq -c '{speedup, outputs_match, excluded: [.groups[] | select(.status == "excluded") | .id]}' "$res")" >&2
done < <(bench_models)

# One fit over the groups of all models together (a single cpu-host profile has to serve
# them all).
if [ "${#all_groups[@]}" -gt 1 ]; then
  jq -s '.[0] + {groups: (map(.groups) | add), model: "all"}' "${all_groups[@]}" > "$dir/all.json"
  if "$FXC" calibrate --from "$dir/all.json" --out "$dir/all.fitted.json" --json \
       > "$dir/all.calibration.json" 2>> "$dir/all.log"; then
    "$PY" - "$dir/all.calibration.json" >> "$out" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
f = lambda v: "-" if v is None else f"{v:.2f}"
p = lambda v: "-" if v is None else f"{100 * v:.0f}%"
bw, lo = c["bandwidth_bytes_per_s"], c["launch_overhead_s"]
print(f"\nAll models pooled ({c['groups']} groups): Spearman {f(c['before']['spearman'])} -> "
      f"{f(c['after']['spearman'])}, median error {p(c['before']['median_abs_rel_error'])} -> "
      f"{p(c['after']['median_abs_rel_error'])} (fitted: "
      f"{f'{bw / 1e9:.1f} GB/s' if bw > 0 else 'BW not fitted'}, "
      f"{f'launch {lo * 1e6:.1f} us' if lo > 0 else 'launch not fitted'}).")
PYEOF
  fi
fi
{
  echo
  echo "Per-group rows (predicted vs measured us, status, reason): \`$dir/<model>.json\`."
} >> "$out"
