#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step: `fxc analyze` with no --dim over every corpus model. Unbound symbolic dims get
# assumed values (transforms/dim_defaults.h) and the graph is analysed in canonical form
# (transforms/canonical.h); a model with symbolic dims and no group fails the step.
# The same network exported several ways (nodes, groups, speed-ups) is step
# 17_export_variants.sh.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
out=$RESULTS/16_no_dim.md
mkdir -p "$RESULTS/no_dim"

{
  echo "## fxc analyze with no --dim"
  echo
  echo "Command: \`fxc -q analyze MODEL --json\` (default device cpu-host, opt level 2), no"
  echo "\`--dim\`. \"assumed\" lists the dims the default rule bound; nodes are as imported"
  echo "-> canonical; kernels before -> after fusion. A model with symbolic dims and 0 groups fails."
  echo
  echo "| model | symbolic dims | assumed | nodes | canonical | kernels | groups |"
  echo "|---|---|---|---:|---|---|---:|"
} > "$out"

failed=()
rm -f "$RESULTS/no_dim/exempt.txt"
while IFS=$'\t' read -r name path dims _; do
  json=$RESULTS/no_dim/$name.json
  if ! timeout 600 "$FXC" -q analyze "$path" --json > "$json" 2> "$RESULTS/no_dim/$name.err"; then
    printf '| %s | %s | | | error: %s | | |\n' "$name" "${dims//--dim /}" \
      "$(tail -1 "$RESULTS/no_dim/$name.err" | cut -c1-80)" >> "$out"
    [ "$dims" = "-" ] || failed+=("$name (error)")
    continue
  fi
  groups=$(jq '.groups | length' "$json")
  jq -r --arg name "$name" --arg dims "${dims//--dim /}" '
    [$name, $dims,
     ([.assumed_dims | to_entries[] | "\(.key)=\(.value.value)"] | join(" ")),
     "\(.canonical.nodes_before) -> \(.canonical.nodes_after)",
     (.canonical.summary | sub("^canonical: "; "") | sub("; [0-9]+ -> [0-9]+ nodes"; "")),
     "\(.kernels_before) -> \(.kernels_after)", (.groups | length)] |
    "| " + join(" | ") + " |"' "$json" | sed 's/| - |/| |/' >> "$out"
  echo "no-dim $name: $groups groups" >&2
  if [ "$dims" != "-" ] && [ "$groups" -eq 0 ]; then
    # Recurrent and control-flow models may have nothing to fuse around their opaque
    # LSTM/GRU/If/Loop/Scan: noted, not failed. Every CNN and transformer must have groups.
    if "$FXC" -q inspect "$path" --json | jq -r '.ops | keys[]' |
      grep -qE '^(LSTM|GRU|RNN|If|Loop|Scan)$'; then
      echo "$name: 0 groups (recurrent or control flow)" >> "$RESULTS/no_dim/exempt.txt"
    else
      failed+=("$name")
    fi
  fi
done < <(corpus_models)

if [ -s "$RESULTS/no_dim/exempt.txt" ]; then
  echo >> "$out"
  echo "Symbolic dims and no group, allowed (opaque recurrent or control-flow ops):" \
    "$(cut -d: -f1 "$RESULTS/no_dim/exempt.txt" | tr '\n' ' ')" >> "$out"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "16_no_dim: symbolic dims and no group (or an error): ${failed[*]}" >&2
  echo >> "$out"
  echo "**Failed:** ${failed[*]}" >> "$out"
  exit 1
fi
