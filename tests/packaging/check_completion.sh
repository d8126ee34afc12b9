#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_completion.sh FXC COMPLETION_SCRIPT: the bash completion's subcommand and option
# lists (written by packaging/make_completion.sh) equal what `fxc --help` and
# `fxc SUB --help` print, read here by a separate parser, and completing a few command
# lines gives the expected words.
set -uo pipefail
fxc=$1 script=$2
fail=0
[[ -f $script ]] || { echo "FAIL $script missing (built by the fx_completion target)"; exit 1; }
if grep -n '@[A-Z_]*@' "$script"; then echo "FAIL placeholders left in $script"; exit 1; fi
source "$script" || { echo "cannot source $script"; exit 1; }

# Long options of one --help text (CLI11 lists them as "  -x,--name TYPE  text").
help_options() { awk '/^Options:/{on=1;next} /^[A-Z][a-z]*:/{on=0} on' | grep -oE '^ +(-[a-zA-Z],)?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u; }
words() { tr ' ' '\n' | grep -- "${1:-.}" | sort -u; }
same() {  # same WHAT EXPECTED ACTUAL
  if [[ "$2" != "$3" ]]; then
    echo "FAIL $1 differs (< fxc --help, > completion): see packaging/make_completion.sh"
    diff <(echo "$2") <(echo "$3") | grep '^[<>]'; fail=1
  else
    echo "ok   $1: $(echo $3)"
  fi
}

subs_help=$("$fxc" --help | awk '/^Subcommands:/{on=1;next} on && !NF{exit} on{print $1}' | sort)
[[ -n $subs_help ]] || { echo "FAIL: no subcommands in fxc --help"; exit 1; }
same "subcommands" "$subs_help" "$(echo "$_fxc_subcommands" | words)"
same "global options" "$("$fxc" --help | help_options)" "$(echo "$_fxc_global_options" | words '^--')"
for sub in $subs_help; do
  same "$sub options" "$("$fxc" "$sub" --help | help_options)" "$(_fxc_options "$sub" | words '^--')"
done

# complete LINE: COMPREPLY for the command line LINE (cursor at its end).
complete_line() {
  read -ra COMP_WORDS <<<"$1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _fxc
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {  # expect LINE WANT
  local got; got=$(complete_line "$1")
  if [[ $got == "$2" ]]; then echo "ok   '$1' -> $got"; else echo "FAIL '$1' -> '$got', want '$2'"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" && mkdir kernels && touch model.onnx plan.json notes.txt
expect "fxc an" "analyze"
expect "fxc tr" "trace-import"
expect "fxc --ver" "--verbose --version"
expect "fxc analyze model.onnx --opt" "--opt-level"
expect "fxc analyze model.onnx --device nv" "nvidia-h100"
expect "fxc analyze model.onnx --opt-level " "0 1 2 3"
expect "fxc report model.onnx --format " "html json md"
expect "fxc -v inspect " "kernels model.onnx"
expect "fxc codegen model.onnx --plan " "kernels plan.json"
expect "fxc codegen model.onnx --out " "kernels"
expect "fxc profile model.onnx --runs " ""
expect "fxc profile model.onnx --device " "cpu cuda"
expect "fxc profile model.onnx --estimate-device nv" "nvidia-h100"
[[ $fail -eq 0 ]] && echo "completion matches fxc --help"
exit $fail
