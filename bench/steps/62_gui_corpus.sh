#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: every model of the corpus ($BENCH_CACHE/corpus/corpus.json) opened in the desktop
# explorer on a real X server (xvfb-run), as a user would see it (issue 23 item 8):
# `fusion-explorer --check REPORT --screenshot PNG MODEL` waits until the model is ready,
# then reports what each pane shows (an empty pane must say why), the errors raised and
# the dialogs that came up (closed and recorded: nobody is there to click them), and
# saves the window. The graph the explorer analysed is compared with `fxc inspect`'s
# canonical graph (node count; $FXC, skipped when it is not built). Writes
# $RESULTS/62_gui_corpus.md, the reports and the screenshots in $RESULTS/gui_corpus/. Needs xvfb-run; skipped without it or without the GUI binary.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
GUI=${FX_GUI:-$FX_ROOT/build/app/gui/fusion-explorer}
DEVICE=${GUI_CORPUS_DEVICE:-nvidia-h100}  # a preset: cpu-host would calibrate first
out=$RESULTS/62_gui_corpus.md
dir=$RESULTS/gui_corpus
mkdir -p "$dir"

{
  echo "## The corpus in the desktop explorer (fusion-explorer --check, Xvfb)"
  echo
} > "$out"
if [ ! -x "$GUI" ] || ! command -v xvfb-run > /dev/null; then
  echo "Skipped: needs \`$GUI\` and xvfb-run." >> "$out"
  echo "62_gui_corpus: skipped" >&2
  exit 0
fi
if [ ! -f "$BENCH_CACHE/corpus/corpus.json" ]; then
  echo "Skipped: the corpus is not built." >> "$out"
  exit 0
fi
{
  echo "Command: \`xvfb-run -a fusion-explorer --device $DEVICE --size 1600x1000 --check R.json --screenshot S.png MODEL\`"
  echo "(a settings folder of its own per run, so that no state carries between models)."
  echo "ok: every pane shows something or says why it is empty, no error, no dialog."
  echo
  echo "nodes: the explorer's canonical graph against \`fxc inspect\`'s (\"=\" when they are the same)."
  echo
  echo "| model | ok | boxes | candidates | nodes (fxc) | empty panes (what they say) | errors / dialogs | wall s |"
  echo "|---|---|---:|---:|---|---|---|---:|"
} >> "$out"

total=0
clean=0
differ=0
while IFS=$'\t' read -r name path _dims _int; do
  [ -f "$path" ] || continue
  total=$((total + 1))
  cfg=$(mktemp -d)
  t0=$(date +%s%N)
  rc=0
  XDG_CONFIG_HOME=$cfg/config XDG_DATA_HOME=$cfg/data XDG_CACHE_HOME=$cfg/cache \
    timeout 300 xvfb-run -a -s "-screen 0 1920x1200x24" "$GUI" --device "$DEVICE" \
    --size 1600x1000 --check "$dir/$name.json" --screenshot "$dir/$name.png" "$path" \
    > "$dir/$name.log" 2>&1 || rc=$?
  t1=$(date +%s%N)
  rm -rf "$cfg"
  wall=$(awk -v n="$((t1 - t0))" 'BEGIN {printf "%.1f", n / 1e9}')
  if [ ! -s "$dir/$name.json" ]; then
    echo "| $name | no report (exit $rc) | - | - | - | see $name.log | $wall |" >> "$out"
    echo "62_gui_corpus: $name: no report, exit $rc" >&2
    continue
  fi
  ok=$(jq -r '.ok' "$dir/$name.json")
  [ "$ok" = true ] && clean=$((clean + 1))
  nodes=$(jq -r '.nodes // "-"' "$dir/$name.json")
  fxc_nodes=-
  [ -x "$FXC" ] && fxc_nodes=$("$FXC" inspect "$path" --json 2> /dev/null | jq -r '.nodes // "-"' || echo -)
  if [ "$fxc_nodes" = - ]; then
    same="$nodes"
  elif [ "$nodes" = "$fxc_nodes" ]; then
    same="$nodes ="
  else
    same="**$nodes ≠ $fxc_nodes**"
    differ=$((differ + 1))
  fi
  jq -r --arg wall "$wall" --arg name "$name" --arg same "$same" '
    def pane(p): (.panes[] | select(.pane == p));
    [$name, (if .ok then "yes" else "**no**" end), (pane("graph").items | tostring),
     (pane("candidates").items | tostring), $same,
     ([.panes[] | select(.empty) | "\(.pane): \(.explanation | .[0:90])"] | join("; ")),
     ((.errors + .dialogs + .problems) | map(.[0:120]) | join("; ")), $wall]
    | "| " + join(" | ") + " |"' "$dir/$name.json" | sed 's/\r//g' >> "$out"
  echo "62_gui_corpus: $name ok=$ok ($wall s)" >&2
done < <(corpus_models)

{
  echo
  echo "$clean of $total models clean; $differ with a node count other than fxc's. Screenshots: \`$dir/NAME.png\`."
} >> "$out"
