#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: the desktop explorer's figures (issue 7): time from process start to the first
# painted graph, the longest UI-thread stall while opening (target: under 100 ms for
# ViT-B/16) and the peak memory of the open window, for every bench model and for two
# generated graphs (bench/gui_graphs.py: a 10,000-node LLM-like one, a 100,000-node one).
# `fusion-explorer --measure` reports first_paint_ms (since main() started) and
# longest_stall_ms (a 5 ms event-loop timer's latest firing); max RSS and the process wall
# come from /usr/bin/time. Median of $GUI_REPEAT runs (default 3), offscreen platform.
# Expanding a group or revealing a node: `--measure --expand TARGET` (expand_ms, in the
# process, from the request to the painted result).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
GUI=${FX_GUI:-$FX_ROOT/build/app/gui/fusion-explorer}
GUI_REPEAT=${GUI_REPEAT:-3}
out=$RESULTS/60_gui.md
dir=$RESULTS/gui
mkdir -p "$dir"

{
  echo "## Desktop explorer (fusion-explorer)"
  echo
} > "$out"
if [ ! -x "$GUI" ]; then
  echo "Skipped: no GUI binary at \`$GUI\` (build with FX_BUILD_GUI=ON or set FX_GUI)." >> "$out"
  echo "gui: skipped, no $GUI" >&2
  exit 0
fi
"$PY" "$FX_ROOT/bench/gui_graphs.py" --out "$dir" >&2

{
  echo "Median of $GUI_REPEAT runs, warm page cache, \`QT_QPA_PLATFORM=offscreen\`, window 1400x900."
  echo "Command: \`/usr/bin/time -f %M fusion-explorer --measure --size 1400x900 MODEL\`."
  echo "first paint: from the start of main() to the first painted graph (parse, hierarchy, outline layout, run"
  echo "off the UI thread); stall: longest gap of a 5 ms timer on the UI event loop while opening;"
  echo "max RSS: peak resident memory of the process with the window open; wall: the whole process"
  echo "(includes the 300 ms --measure waits after the first paint, and exit)."
  echo "ready: to shapes and fusion candidates in as well (they are computed after the first"
  echo "paint; the stall figure covers the whole opening, up to ready)."
  echo "Expanding: \`fusion-explorer --measure --expand TARGET\` opens the model, then opens the"
  echo "group whose scope path is TARGET (what a double-click on its box does) or reveals the node"
  echo "TARGET (opens every group around it, one layout), and times it in the process from the"
  echo "request to the first paint of the new layout (layout off the UI thread, items built, painted);"
  echo "stall: the longest UI-thread gap meanwhile. Median of $GUI_REPEAT runs."
  echo "Load average (1/5/15 min) at the start of this step: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| model | nodes | first paint ms | ready ms | longest UI stall ms | max RSS MiB | process wall ms |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} >> "$out"

models() {
  bench_models | cut -f1,2
  printf 'llm_10k (generated)\t%s\n' "$dir/llm_10k.onnx"
  printf 'synthetic_100k (generated)\t%s\n' "$dir/synthetic_100k.onnx"
}

while IFS=$'\t' read -r name path; do
  [ -f "$path" ] || continue
  warm_cache "$path"
  runs=$dir/$(echo "$name" | cut -d' ' -f1).runs
  : > "$runs"
  ok=1
  for _ in $(seq "$GUI_REPEAT"); do
    t0=$(date +%s%N)
    if ! QT_QPA_PLATFORM=offscreen /usr/bin/time -o "$dir/time.txt" -f '%M' \
      timeout 300 "$GUI" --measure --size 1400x900 "$path" > "$dir/measure.json" 2> /dev/null; then
      ok=0
      break
    fi
    t1=$(date +%s%N)
    jq -r --arg rss "$(tail -1 "$dir/time.txt")" --arg wall "$(( (t1 - t0) / 1000 ))" \
      '[.nodes, .first_paint_ms, .ready_ms, .longest_stall_ms, ($rss | tonumber / 1024),
        ($wall | tonumber / 1000)] | @tsv' "$dir/measure.json" >> "$runs"
  done
  if [ "$ok" = 0 ]; then
    echo "| $name | - | failed | - | - | - | - |" >> "$out"
    echo "gui $name: fusion-explorer --measure failed" >&2
    continue
  fi
  col() { cut -f"$1" "$runs" | median; }
  nodes=$(col 1) paint=$(col 2) ready=$(col 3) stall=$(col 4) rss=$(col 5) wall=$(col 6)
  printf '| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n' "$name" "$nodes" "$paint" "$ready" \
    "$stall" "$rss" "$wall" >> "$out"
  echo "gui $name: first paint $paint ms, ready $ready ms, stall $stall ms, rss $rss MiB" >&2
  if [ "$name" = "synthetic_100k (generated)" ]; then
    verdict=$(awk -v p="$paint" -v s="$stall" 'BEGIN {print (p <= 1000 && s < 100) ? "met" : "MISSED"}')
    echo "100,000-node graph painted within 1 s with stalls under 100 ms: $verdict ($paint ms, $stall ms)" \
      > "$dir/target_100k.txt"
  fi
  if [ "$name" = vit_b_16 ]; then
    verdict=$(awk -v s="$stall" 'BEGIN {print (s < 100) ? "met" : "MISSED"}')
    echo "ViT-B/16 longest UI-thread stall under 100 ms: $verdict ($stall ms)" > "$dir/target.txt"
  fi
done < <(models)

# Expanding, measured in the process (see the header): NAME PATH TARGET.
expand_rows() {
  printf 'vit_b_16\t%s\t%s\n' "$BENCH_CACHE/vit_b_16.onnx" /encoder/layers/encoder_layer_5/mlp/mlp.0/MatMul
  printf 'llm_10k\t%s\t%s\n' "$dir/llm_10k.onnx" /model/layers.294/attn/MatMul_5007
  printf 'llm_10k\t%s\t%s\n' "$dir/llm_10k.onnx" model/layers.294
  printf 'synthetic_100k\t%s\t%s\n' "$dir/synthetic_100k.onnx" /stage.25/block.0/MatMul_50001
  printf 'synthetic_100k\t%s\t%s\n' "$dir/synthetic_100k.onnx" stage.25
}
{
  echo
  echo "| model | expanded (scope or node) | boxes after | expand ms | stall ms |"
  echo "|---|---|---:|---:|---:|"
} >> "$out"
while IFS=$'\t' read -r name path target; do
  [ -f "$path" ] || continue
  : > "$dir/expand.runs"
  ok=1
  for _ in $(seq "$GUI_REPEAT"); do
    if ! QT_QPA_PLATFORM=offscreen timeout 300 "$GUI" --measure --size 1400x900 \
      --expand "$target" "$path" > "$dir/expand.json" 2> /dev/null; then
      ok=0
      break
    fi
    jq -r '[.boxes, .expand_ms, .expand_stall_ms] | @tsv' "$dir/expand.json" >> "$dir/expand.runs"
  done
  if [ "$ok" = 0 ]; then
    echo "| $name | \`$target\` | - | failed | - |" >> "$out"
    echo "gui expand $name $target: failed" >&2
    continue
  fi
  boxes=$(cut -f1 "$dir/expand.runs" | median) e=$(cut -f2 "$dir/expand.runs" | median)
  st=$(cut -f3 "$dir/expand.runs" | median)
  printf '| %s | `%s` | %s | %.0f | %.0f |\n' "$name" "$target" "$boxes" "$e" "$st" >> "$out"
  echo "gui expand $name $target: $e ms (stall $st ms)" >&2
done < <(expand_rows)

{
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
  [ ! -f "$dir/target.txt" ] || echo "Target: $(cat "$dir/target.txt")"
  [ ! -f "$dir/target_100k.txt" ] || echo "Target: $(cat "$dir/target_100k.txt")"
} >> "$out"
