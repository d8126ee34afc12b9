# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared by bench/run_all.sh and bench/steps/*.sh (sourced, not run).
# Environment every step can rely on:
#   FX_ROOT     repository root            FXC     the fxc binary to measure
#   BENCH_CACHE bench/cache (git-ignored)  RESULTS $BENCH_CACHE/results: a step writes
#   PY          /usr/bin/python3                    its markdown to $RESULTS/<step>.md and
#   ORT_RUN     bench/peer/ort_run.js               may leave JSON there for later steps
#   BENCH_REPEAT how often a timed command repeats (median taken), default 5
# Results earlier steps leave for later ones to join (per model NAME, see bench_models):
#   $RESULTS/inspect/NAME.json        fxc inspect --json (nodes, ops, load_ms, ...)
#   $RESULTS/ort/NAME.LEVEL.json      ort_run.js output, LEVEL disabled|extended|all:
#                                     median_ms, min_ms, optimized_nodes, optimized_ops
#   $RESULTS/ort/NAME.data/           input_<i>.pb and ORT's output_<i>.pb (level disabled)
#   $RESULTS/equivalence/NAME.json    bench/compare_outputs.py verdict for fxc run

FX_ROOT=${FX_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BENCH_CACHE=${BENCH_CACHE:-$FX_ROOT/bench/cache}
RESULTS=${RESULTS:-$BENCH_CACHE/results}
FXC=${FXC:-$FX_ROOT/build-bench/app/fxc}
PY=${PY:-/usr/bin/python3}
ORT_RUN=${ORT_RUN:-$FX_ROOT/bench/peer/ort_run.js}
BENCH_REPEAT=${BENCH_REPEAT:-5}
export FX_ROOT BENCH_CACHE RESULTS FXC PY ORT_RUN BENCH_REPEAT

# Prints one line per benchmark model: NAME<TAB>PATH<TAB>DIMS<TAB>INT_MAX, where DIMS is
# "--dim a=1 --dim b=2" (or "-") for fxc and ort_run.js alike. The committed samples come
# first, then the exported models listed in $BENCH_CACHE/models.json.
bench_models() {
  "$PY" - "$FX_ROOT" "$BENCH_CACHE/models.json" <<'PYEOF'
import json, os, sys
root, manifest = sys.argv[1], sys.argv[2]
rows = [("tiny_cnn", f"{root}/resources/models/tiny_cnn.onnx", {}, 100),
        ("tiny_transformer", f"{root}/resources/models/tiny_transformer.onnx",
         {"batch": 1, "seq": 16}, 128)]
if os.path.exists(manifest):
    for m in json.load(open(manifest)):
        rows.append((m["name"], os.path.join(os.path.dirname(manifest), m["file"]),
                     m.get("dims", {}), m.get("int_max", 100)))
for name, path, dims, int_max in rows:
    d = " ".join(f"--dim {k}={v}" for k, v in dims.items()) or "-"
    print(f"{name}\t{path}\t{d}\t{int_max}")
PYEOF
}

# dims_args "-" -> nothing; otherwise the string itself, word-split by the caller.
dims_args() { [ "$1" = "-" ] || echo "$1"; }

# Median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Reads the whole file once so that timings see a warm page cache.
warm_cache() { cat "$1" > /dev/null; [ ! -f "$1.data" ] || cat "$1.data" > /dev/null; }

# Size of a model in MiB, counting its external data file (MODEL.data) if it has one.
mib() {
  local b; b=$(stat -c %s "$1")
  [ -f "$1.data" ] && b=$((b + $(stat -c %s "$1.data")))
  awk -v b="$b" 'BEGIN {printf "%.1f", b / 1048576}'
}

# Like bench_models, for the corpus (bench/corpus/build_corpus.py, $BENCH_CACHE/corpus/):
# NAME<TAB>PATH<TAB>DIMS<TAB>INT_MAX per model of corpus.json, nothing when it is not built.
# Each model's input set (the manifest's bound shapes and value ranges) is ${PATH%.onnx}.inputs/
# (input_<i>.pb, for ort_run.js --inputs); corpus.json says more (source, family, settings).
corpus_models() {
  "$PY" - "$BENCH_CACHE/corpus/corpus.json" <<'PYEOF'
import json, os, sys
manifest = sys.argv[1]
if os.path.exists(manifest):
    for m in json.load(open(manifest))["models"]:
        d = " ".join(f"--dim {k}={v}" for k, v in m.get("dims", {}).items()) or "-"
        print(f"{m['name']}\t{os.path.join(os.path.dirname(manifest), m['file'])}\t{d}\t"
              f"{m.get('int_max', 100)}")
PYEOF
}
