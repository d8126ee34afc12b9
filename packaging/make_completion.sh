#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes fxc's bash completion from the template and fxc's own --help texts:
#   make_completion.sh FXC TEMPLATE OUT
# Lists every subcommand (the "Subcommands:" section of `fxc --help`) and, per subcommand,
# every option shown by `fxc SUB --help` (hidden internal options are not shown there).
set -euo pipefail
fxc=$1 template=$2 out=$3
options_of() {  # the -x and --long names of the Options: section of a help text on stdin
  awk '/^Options:/{on=1;next} /^[A-Za-z][A-Za-z ]*:/{on=0} on && /^ +-/' |
    sed -E 's/^ +//; s/ .*//' | tr ',' '\n' | grep -E '^-' | tr '\n' ' ' | sed 's/ $//'
}
subs=$("$fxc" --help | awk '/^Subcommands:/{on=1;next} on && !NF{exit} on{print $1}')
[[ -n $subs ]] || { echo "make_completion: no subcommands in '$fxc --help'" >&2; exit 1; }
cases=""
for s in $subs; do
  cases+="    $s) echo \"$("$fxc" "$s" --help | options_of)\" ;;"$'\n'
done
awk -v subs="$(echo $subs)" -v glob="$("$fxc" --help | options_of)" -v cases="${cases%$'\n'}" '
  /^@OPTION_CASES@$/ { print cases; next }
  { gsub(/@SUBCOMMANDS@/, subs); gsub(/@GLOBAL_OPTIONS@/, glob); print }' "$template" > "$out.tmp"
mv "$out.tmp" "$out"
