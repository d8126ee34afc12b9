#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_help_examples.sh FXC SOURCE_DIR: `fxc --help` and every `fxc SUB --help` show
# examples; every option an example uses is one that its subcommand lists; and the
# examples on the bundled sample (resources/models/tiny_cnn.onnx) run and exit 0.
set -uo pipefail
fxc=$(realpath "$1") src=$(realpath "$2")
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

help_options() { awk '/^Options:/{on=1;next} /^[A-Z][a-z]*:/{on=0} on' | grep -oE '^ +(-[a-zA-Z],)?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u; }
subs=$("$fxc" --help | awk '/^Subcommands:/{on=1;next} on && !NF{exit} on{print $1}')
global_opts=$("$fxc" --help | help_options)

# Example lines of a help text ("  fxc ..."), comments dropped.
examples() { sed -n '/^Example/,$p' | grep -E '^ +fxc ' | sed 's/#.*//; s/^ *//; s/ *$//'; }
# The fxc commands of one example line, split at && and |.
commands() { sed 's/&&/\n/g; s/|/\n/g' <<<"$1" | sed 's/^ *//' | grep '^fxc '; }

check_example() {  # check_example LINE
  local line=$1 sub="" w opts
  for w in $line; do
    [[ $w == fxc || $w == -* ]] && continue
    sub=$w; break
  done
  if ! grep -qx -- "$sub" <<<"$subs"; then echo "FAIL example '$line': no subcommand '$sub'"; fail=1; return; fi
  opts=$("$fxc" "$sub" --help | help_options)
  for w in $line; do
    [[ $w == --* ]] || continue
    w=${w%%=*}
    if ! grep -qx -- "$w" <<<"$opts"$'\n'"$global_opts"; then
      echo "FAIL example '$line': fxc $sub has no option $w"; fail=1
    fi
  done
}

n_examples=0 n_run=0
for sub in "" $subs; do
  text=$("$fxc" $sub --help)
  ex=$(examples <<<"$text")
  if [[ -z $ex ]]; then echo "FAIL fxc $sub --help shows no example"; fail=1; continue; fi
  while IFS= read -r line; do
    n_examples=$((n_examples + 1))
    while IFS= read -r c; do check_example "$c"; done < <(commands "$line")
    # Run the examples on the bundled sample in order, in one scratch folder per help
    # text (a later example may use what an earlier one wrote, e.g. plan.json).
    if [[ $line == *resources/models/tiny_cnn.onnx* ]]; then
      n_run=$((n_run + 1))
      dir=$tmp/run-${sub:-fxc}
      [[ -d $dir ]] || { mkdir -p "$dir" && cp -r "$src/resources" "$dir/"; }
      cmd=$(sed -E 's/(^|&& *|\| *)fxc /\1"$fxc" /g' <<<"$line")
      if ! (cd "$dir" && eval "timeout 120 $cmd" >"$tmp/out" 2>&1); then
        echo "FAIL example '$line' exited non-zero:"; tail -5 "$tmp/out"; fail=1
      else
        echo "ok   ran '$line'"
      fi
    fi
  done <<<"$ex"
done
echo "$n_examples examples checked, $n_run run on the sample model"
[[ $n_run -ge 3 ]] || { echo "FAIL fewer than 3 examples use resources/models/tiny_cnn.onnx"; fail=1; }
[[ $fail -eq 0 ]] && echo "help examples OK"
exit $fail
