#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the fxc(1) man page from fxc's own --help texts, so it never drifts from
# the program: make_manpage.sh FXC OUT.1
set -euo pipefail
fxc=$1 out=$2
version=$("$fxc" --version | awk '{print $NF}')
esc() { sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/" -e 's/-/\\-/g'; }
{
  echo ".TH FXC 1 \"$(date -u +%Y-%m-%d)\" \"fxc $version\" \"Fusion Explorer\""
  echo ".SH NAME"
  echo "fxc \\- find, generate and measure operator fusions in ONNX models"
  echo ".SH SYNOPSIS"
  echo ".B fxc"
  echo "[\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR [\\fIARGS\\fR]"
  echo ".SH DESCRIPTION"
  echo "fxc is the command line of Fusion Explorer. It loads an ONNX model, finds operator"
  echo "fusions with their estimated savings, generates fused kernels, profiles the model"
  echo "before and after on the CPU, and exports the fused model, kernels, traces and reports."
  echo "Errors in the user's input print one line naming the file and the cause and exit with 2."
  echo ".SH OPTIONS"
  echo ".nf"
  "$fxc" --help | awk '/^Options:/{on=1;next} on && !NF{exit} on' | esc
  echo ".fi"
  echo ".SH EXAMPLES"
  echo ".nf"
  "$fxc" --help | awk '/^Examples/{on=1;next} on && !NF{exit} on' | esc
  echo ".fi"
  echo ".SH EXIT STATUS"
  echo "0 success; 2 bad input or usage (one line naming the file and the cause); 3 internal error."
  echo ".SH SUBCOMMANDS"
  for sub in $("$fxc" --help | awk '/^Subcommands:/{on=1;next} on && !NF{exit} on{print $1}'); do
    echo ".SS $sub"
    echo ".nf"
    "$fxc" "$sub" --help | esc
    echo ".fi"
  done
  echo ".SH FILES"
  echo "~/.cache/fusion\\-explorer/ \\- measured cpu\\-host device profile and compiled kernels."
  echo ".SH SEE ALSO"
  echo "fusion\\-explorer(1)"
} > "$out"
