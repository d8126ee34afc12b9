#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: fused execution. Per model, our runtime unfused vs fused (the plan of
# `--opt-level 2 --threshold 0`, every group generated/compiled as build_fused_program
# does it) and ONNX Runtime with all graph optimizations, same thread count, in
# alternating rounds (fxc's unfused and fused runs themselves alternate run by run).
# Every fused figure comes with fxc's check that fused and unfused outputs agree
# (|a - b| <= 1e-3 |b| + 1e-5 max(1, max |b|), the scaled check of fxc profile). Then the memory-bound generated kernels against a
# stream copy (fxc codegen --bandwidth).
# Leaves $RESULTS/fused/<model>.<round>.json (fxc codegen --bench --json) and
# <model>.ort.<round>.json (ort_run.js).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/40_fused.md
dir=$RESULTS/fused
mkdir -p "$dir"
threads=${FUSED_THREADS:-2}
runs=${FUSED_RUNS:-10}
rounds=${FUSED_ROUNDS:-3}
models=${FUSED_MODELS:-resnet18 resnet50 mobilenet_v2 efficientnet_b0 vit_b_16 convnext_tiny gpt2_small}
bw_mb=${FUSED_BW_MB:-64}
# Idle OpenMP threads sleep instead of spinning: on a shared machine a spinning team
# whose partner is descheduled stalls every barrier (it affects unfused and fused alike).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
have_ort=0
[ -d "$FX_ROOT/bench/peer/node_modules/onnxruntime-node" ] && have_ort=1

{
  echo "## Fused execution"
  echo
  echo "Our runtime unfused vs fused, and ONNX Runtime (graph optimizations \`all\`), $threads"
  echo "threads each, $rounds alternating rounds of $runs timed runs (fxc alternates unfused and"
  echo "fused run by run); the figure is the median over rounds of each round's median, fastest"
  echo "single run in brackets. Plan: \`fxc codegen MODEL --opt-level 2 --threshold 0 --bench"
  echo "$runs --threads $threads --json\` (analysis at level 2, every group accepted);"
  echo "ORT: \`node bench/peer/ort_run.js MODEL --threads $threads --opt all --runs $runs\`."
  echo "Equivalence: fused vs unfused outputs on the same seeded inputs, |a - b| <= 1e-3 |b| + 1e-5 max(1, max |b|)"
  echo "(the scaled check of \`fxc profile\`, profile/equivalence.h)."
  echo "OMP_WAIT_POLICY=$OMP_WAIT_POLICY. Load (uptime) is recorded per model."
  echo
  echo "Groups: those of the plan by outcome, plus the generated parts of groups that could not be"
  echo "generated whole (counted as compiled). \"max abs err / max |out|\" puts the largest"
  echo "difference against the output's scale (summation order differs between kernels)."
  echo "\"fused alone\": after the interleaved rounds, the fused program run after run as ONNX"
  echo "Runtime is timed (fxc's fused_alone; the interleaved unfused runs evict the fused"
  echo "program's weights from the last-level cache); \"alone / ORT\" compares both warm."
  echo "\"cold\": each run after a read-modify-write walk over a 64 MiB buffer (larger than"
  echo "the last-level cache), fxc's fused program (fused_cold) and ONNX Runtime (ort_run.js"
  echo "--cold-runs $runs) alike; \"cold / ORT cold\" compares both cold. \"fused / ORT\" puts"
  echo "the interleaved (cold-ish) fused run against ORT warm: not like for like. \"ORT"
  echo "interleaved\": ORT all, each run after a run of a second session with optimizations"
  echo "disabled (ort_run.js --interleave disabled), as fxc's fused runs follow its unfused"
  echo "ones; \"fused / ORT inter\" compares the two interleaved figures."
  echo
  echo "| model | groups (post-ops/compiled/runtime/excluded) | unfused ms | fused ms | fused speed-up | ORT all ms | fused / ORT | fused alone ms | alone / ORT | fused cold ms | ORT cold ms | cold / ORT cold | ORT interleaved ms | fused / ORT inter | max abs err / max abs out | outputs (scaled allclose) | load |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
} > "$out"

med() { median; }
while IFS=$'\t' read -r name path dims _; do
  case " $models " in *" $name "*) ;; *) continue ;; esac
  warm_cache "$path"
  load=$(uptime | sed 's/.*load average: //')
  ok=1
  for r in $(seq 1 "$rounds"); do
    # shellcheck disable=SC2046
    if ! "$FXC" -q codegen "$path" $(dims_args "$dims") --opt-level 2 --threshold 0 \
      --bench "$runs" --threads "$threads" --json > "$dir/$name.$r.json"; then
      jq -e . "$dir/$name.$r.json" > /dev/null 2>&1 || { ok=0; break; }
    fi
    if [ "$have_ort" = 1 ]; then
      # shellcheck disable=SC2046
      node "$ORT_RUN" "$path" --threads "$threads" --opt all --runs "$runs" \
        --cold-runs "$runs" --interleave disabled $(dims_args "$dims") > "$dir/$name.ort.$r.json" || true
    fi
  done
  if [ "$ok" = 0 ]; then
    echo "| $name | fxc codegen --bench failed (see $dir/$name.*.json) | | | | | | | | | | | | | | $load |" >> "$out"
    continue
  fi
  f() { for r in $(seq 1 "$rounds"); do jq -r "$1" "$dir/$name.$r.json"; done | med; }
  fmin() { for r in $(seq 1 "$rounds"); do jq -r "$1" "$dir/$name.$r.json"; done | sort -g | head -1; }
  # The same over the rounds' ONNX Runtime results (fields it lacks are left out).
  o() { for r in $(seq 1 "$rounds"); do jq -r "$1" "$dir/$name.ort.$r.json" 2>/dev/null; done; }
  un=$(f .unfused.median_ms) fu=$(f .fused.median_ms)
  unmin=$(fmin .unfused.min_ms) fumin=$(fmin .fused.min_ms)
  fa=$(f .fused_alone.median_ms)
  fc=$(f '.fused_cold.median_ms // 0')
  err=$(for r in $(seq 1 "$rounds"); do jq -r .max_abs_error "$dir/$name.$r.json"; done | sort -g | tail -1)
  scale=$(jq -r .max_abs_output "$dir/$name.1.json")
  err=$(awk -v e="$err" -v s="$scale" 'BEGIN {printf "%.2g / %.3g", e, s}')
  eq=$(for r in $(seq 1 "$rounds"); do jq -r .equivalent "$dir/$name.$r.json"; done | sort -u | tr '\n' ' ')
  [ "$eq" = "true " ] && eq=agree || eq="DISAGREE"
  groups=$(jq -r '"\(.groups) (\(.outcomes.dnnl_post_ops)/\(.outcomes.compiled)/\(.outcomes.runtime)/\(.outcomes.excluded))"' "$dir/$name.1.json")
  ort="n/a" ortmin="" ratio="n/a" ratio_alone="n/a" ortc="n/a" ratio_cold="n/a" orti="n/a" ratio_inter="n/a"
  if [ "$have_ort" = 1 ] && [ -s "$dir/$name.ort.1.json" ]; then
    ort=$(o .median_ms | med)
    ortmin=$(o .min_ms | sort -g | head -1)
    ratio=$(awk -v a="$fu" -v b="$ort" 'BEGIN {printf "%.2fx", a / b}')
    ratio_alone=$(awk -v a="$fa" -v b="$ort" 'BEGIN {printf "%.2fx", a / b}')
    ortc=$(o '.cold.median_ms // empty' | med)
    ratio_cold=$(awk -v a="$fc" -v b="$ortc" 'BEGIN {if (b > 0 && a > 0) printf "%.2fx", a / b; else print "n/a"}')
    ortc=$(awk -v a="$ortc" 'BEGIN {printf "%.2f", a}')
    orti=$(o '.interleaved.median_ms // empty' | med)
    ratio_inter=$(awk -v a="$fu" -v b="$orti" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "n/a"}')
    orti=$(awk -v a="$orti" 'BEGIN {printf "%.2f", a}')
    ort=$(awk -v a="$ort" -v b="$ortmin" 'BEGIN {printf "%.2f (%.2f)", a, b}')
  fi
  printf '| %s | %s | %.2f (%.2f) | %.2f (%.2f) | %.2fx | %s | %s | %.2f | %s | %.2f | %s | %s | %s | %s | %s | %s | %s |\n' "$name" \
    "$groups" "$un" "$unmin" "$fu" "$fumin" "$(awk -v a="$un" -v b="$fu" 'BEGIN {print a / b}')" \
    "$ort" "$ratio" "$fa" "$ratio_alone" "$fc" "$ortc" "$ratio_cold" "$orti" "$ratio_inter" "$err" "$eq" "$load" >> "$out"
  echo "fused $name: unfused $un ms, fused $fu ms (alone $fa ms, cold $fc ms), ORT $ort ms (cold $ortc ms, interleaved $orti ms), outputs $eq" >&2
done < <(bench_models)

# FUSED_BW_MB=0 leaves the bandwidth section out (a run about the models only).
[ "$bw_mb" != 0 ] || exit 0
{
  echo
  echo "### Memory-bound generated kernels vs stream bandwidth"
  echo
  echo "\`fxc codegen --bandwidth $bw_mb --bench 10 --reps 5 --threads $threads\`: each generated kernel"
  echo "on a $bw_mb MiB float32 tensor; bandwidth counts the bytes each kernel must move (inputs"
  echo "read once, outputs written once). The reference is a generated stream copy in the same"
  echo "process, its bytes counted the same way (input read + output written; outputs of 16 MiB"
  echo "and more leave through streaming stores, the copy's included). The copy and the kernels"
  echo "take turns run by run (a round: each runs once), 5 repetitions of 10 rounds. Per kernel:"
  echo "the fastest run's GB/s and the median over the repetitions (each: its median run); per repetition the"
  echo "median over its rounds of the kernel's GB/s over the copy's in the same round (each,"
  echo "median, minimum); its fastest run against the copy's fastest (information: one run"
  echo "decides it). 80% is met when the median of the repetitions' paired ratios reaches it, so"
  echo "that one slow (or fast) copy run"
  echo "does not decide. Load: $(uptime | sed 's/.*load average: //')."
  echo
  echo '```'
  "$FXC" -q codegen --bandwidth "$bw_mb" --bench 10 --reps 5 --threads "$threads" 2>&1 || echo "(failed)"
  echo '```'
} >> "$out"
