#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the fusion-explorer(1) man page from the program's own --help, so it never
# drifts from the program: make_gui_manpage.sh FUSION_EXPLORER OUT.1
set -euo pipefail
gui=$1 out=$2
export QT_QPA_PLATFORM=offscreen
version=$("$gui" --version 2>/dev/null | awk '{print $NF; exit}')
esc() { sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/" -e 's/-/\\-/g'; }
{
  echo ".TH FUSION-EXPLORER 1 \"$(date -u +%Y-%m-%d)\" \"fusion-explorer $version\" \"Fusion Explorer\""
  echo ".SH NAME"
  echo "fusion\\-explorer \\- explore, accept and measure operator fusions in ONNX models"
  echo ".SH SYNOPSIS"
  echo ".B fusion\\-explorer"
  echo "[\\fIOPTIONS\\fR] [\\fIMODEL\\fR]"
  echo ".SH DESCRIPTION"
  echo "fusion\\-explorer opens an ONNX model, draws its graph, and lists the operator fusions"
  echo "found for the chosen device profile with their estimated savings (DRAM bytes not"
  echo "moved, kernel launches avoided, time saved). Candidates are accepted or rejected,"
  echo "fused kernels generated, and the model profiled before and after on a shared timeline."
  echo "The same work without a window is done by \\fBfxc\\fR(1)."
  echo ".SH OPTIONS"
  echo ".nf"
  "$gui" --help 2>/dev/null | awk '/^Options:/{on=1} on' | esc
  echo ".fi"
  echo ".SH FILES"
  echo "/usr/share/fusion\\-explorer/samples/ \\- sample models."
  echo ".br"
  echo "~/.cache/fusion\\-explorer/ \\- measured cpu\\-host device profile and compiled kernels."
  echo ".SH SEE ALSO"
  echo "fxc(1)"
} > "$out"
