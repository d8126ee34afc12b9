#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: scope-less models drawn flat (issue 18 item 3; docs/benchmarks.md "Flat graphs").
# 1. Layout of one flat level: scope-less chains with residual branches of 1,000 to 8,000
#    ops, forced flat, laid out by the layered layout (what a level over
#    drawing::kMostBoxesForDot boxes gets), and by Graphviz dot up to FLAT_DOT_UP_TO ops
#    (default 2000; dot grows close to cubically). Measured by
#    `fx_drawing_tests --gtest_filter='*FlatLevelsOfSeveralSizes*'` with FX_FLAT_SIZES and
#    FX_FLAT_DOT_UP_TO (wall and process CPU time: the machine may be shared).
# 2. The explorer on generated scope-less ResNet-like models (bench/scopeless_graph.py
#    --blocks N: 5 N + 2 ops) of 1,502 to 6,002 ops: drawn flat up to the cap
#    (ScopeTreeOptions::max_children), grouped by structure above it.
#    `fusion-explorer --measure` (offscreen), median of FLAT_REPEAT runs (default 3).
# Writes $RESULTS/61_flat_graphs.md.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
GUI=${FX_GUI:-$FX_ROOT/build/app/gui/fusion-explorer}
TESTS=${FX_DRAWING_TESTS:-$FX_ROOT/build/tests/fx_drawing_tests}
sizes=${FLAT_SIZES:-1000 2000 4000 8000}
dot_up_to=${FLAT_DOT_UP_TO:-2000}
repeat=${FLAT_REPEAT:-3}
out=$RESULTS/61_flat_graphs.md
dir=$RESULTS/flat_graphs
mkdir -p "$dir"

{
  echo "## Flat graphs (scope-less models)"
  echo
  echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc --all) cores."
  echo "Load average (1/5/15 min) at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
} > "$out"

if [ -x "$TESTS" ]; then
  FX_FLAT_SIZES="$sizes" FX_FLAT_DOT_UP_TO="$dot_up_to" "$TESTS" \
    --gtest_filter='*FlatLevelsOfSeveralSizes*' > "$dir/layout.log" 2>&1 || true
  {
    echo "Layout of one flat level (residual chains): \`FX_FLAT_SIZES=\"$sizes\" FX_FLAT_DOT_UP_TO=$dot_up_to fx_drawing_tests --gtest_filter='*FlatLevelsOfSeveralSizes*'\`"
    echo
    echo "| flat ops | layered layout ms (cpu) | Graphviz dot ms (cpu) |"
    echo "|---:|---:|---:|"
    for n in $sizes; do
      layered=$(sed -n "s/^flat level with residual branches: $n nodes laid out in \([0-9]*\) ms (cpu \([0-9]*\) ms)/\1 (\2)/p" "$dir/layout.log")
      dot=$(sed -n "s/^flat level with residual branches: $n nodes, Graphviz dot \([0-9]*\) ms (cpu \([0-9]*\) ms)/\1 (\2)/p" "$dir/layout.log")
      echo "| $n | ${layered:-failed} | ${dot:-not run} |"
    done
    echo
  } >> "$out"
else
  echo "Layout: skipped, no \`$TESTS\`." >> "$out"
fi

if [ ! -x "$GUI" ]; then
  echo "Explorer: skipped, no GUI binary at \`$GUI\`." >> "$out"
  exit 0
fi
{
  echo "The explorer: \`fusion-explorer --measure --size 1400x900 MODEL\` (offscreen), median of $repeat runs;"
  echo "first paint and ready from the start of main(), stall: longest UI-thread gap while opening."
  echo
  echo "| model | ops | drawn | first paint ms | ready ms | longest UI stall ms |"
  echo "|---|---:|---|---:|---:|---:|"
} >> "$out"
for blocks in ${FLAT_BLOCKS:-300 600 800 1200}; do
  model=$dir/scopeless_$blocks.onnx
  "$PY" "$FX_ROOT/bench/scopeless_graph.py" --blocks "$blocks" --out "$model"
  : > "$dir/runs"
  for _ in $(seq "$repeat"); do
    QT_QPA_PLATFORM=offscreen timeout 300 "$GUI" --measure --size 1400x900 "$model" \
      2> /dev/null | jq -r '[.nodes, .first_paint_ms, .ready_ms, .longest_stall_ms] | @tsv' \
      >> "$dir/runs" || true
  done
  col() { cut -f"$1" "$dir/runs" | median; }
  ops=$((5 * blocks + 2))
  drawn=$([ "$ops" -le 5000 ] && echo flat || echo "grouped by structure")
  printf '| scopeless_graph.py --blocks %s | %s | %s | %.0f | %.0f | %.0f |\n' "$blocks" "$ops" \
    "$drawn" "$(col 2)" "$(col 3)" "$(col 4)" >> "$out"
done
echo "61_flat_graphs: $(grep -c '^| ' "$out") rows" >&2
