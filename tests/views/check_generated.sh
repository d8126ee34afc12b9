#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ctest driver: builds a model with a bench generator, then opens it with
# `fusion-explorer --check` (views/pane_check.h): exit 0 when every pane shows something
# or says why, no error, no dialog. Exits 77 (ctest: skipped) when the Python that
# generates it has no onnx module.
#   check_generated.sh GUI OUT_DIR NAME GENERATOR [GENERATOR ARGS...]
set -euo pipefail
gui=$1 dir=$2 name=$3 generator=$4
shift 4
py=${PY:-/usr/bin/python3}
if ! "$py" -c 'import onnx' 2> /dev/null; then
  echo "skipped: $py has no onnx module" >&2
  exit 77
fi
mkdir -p "$dir"
"$py" "$generator" "$@" --out "$dir/$name.onnx"
exec "$gui" --device nvidia-h100 --size 1200x800 --check "$dir/check_$name.json" "$dir/$name.onnx"
