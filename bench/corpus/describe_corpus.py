#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/corpus.md: one row per corpus model, read from the model files themselves.

    /usr/bin/python3 bench/corpus/build_corpus.py            # builds bench/cache/corpus/
    /usr/bin/python3 bench/corpus/describe_corpus.py         # writes docs/corpus.md
    /usr/bin/python3 bench/corpus/describe_corpus.py --fxc build/app/fxc
        # also runs `fxc inspect`, `fxc analyze` (with no --dim, then with the manifest's dims)
        # and `fxc run` (unfused, on NAME.inputs/; --no-run skips it) on every model, saves
        # what they said in CORPUS/fxc_baseline.json and adds the baseline table;
        # --baseline FILE re-uses a saved one instead of running fxc again.
    /usr/bin/python3 bench/corpus/describe_corpus.py --fxc build/app/fxc --reference-only \
        --baseline CORPUS/fxc_baseline.json --baseline-out bench/cache/fxc_baseline.json
        # only the reference-speed section: which reference-speed kernels (`fxc ops`) each
        # model runs and their share of its time in `fxc profile`, added to a saved baseline.

Per model: source, family, task, export settings, inputs with their symbolic dims and the
values bound, node count (and nodes inside If/Loop/Scan bodies), parameter bytes (initializers
and Constant-node tensors, external data included), and the op mix (most frequent ops).
The corpus table describes models, docs/benchmarks.md keeps times; the one timing figure
here is the share of a model's time spent in reference-speed kernels (a slow reference kernel
is allowed only where it costs a model under 1% of its time).
"""

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ELEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
              14: 8, 15: 16, 16: 2}


def tensor_bytes(t):
    n = 1
    for d in t.dims:
        n *= d
    return n * ELEM_BYTES.get(t.data_type, 4)


def walk(graph, stats, depth=0):
    """Counts ops and parameter bytes of a graph and of every subgraph it holds."""
    stats["param_bytes"] += sum(tensor_bytes(t) for t in graph.initializer)
    for n in graph.node:
        stats["ops"][n.op_type] += 1
        stats["nodes" if depth == 0 else "sub_nodes"] += 1
        for a in n.attribute:
            if n.op_type == "Constant" and a.type == onnx.AttributeProto.TENSOR:
                stats["param_bytes"] += tensor_bytes(a.t)
            if a.type == onnx.AttributeProto.GRAPH:
                walk(a.g, stats, depth + 1)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    walk(g, stats, depth + 1)


def model_stats(path):
    m = onnx.load(path, load_external_data=False)
    stats = dict(ops=collections.Counter(), nodes=0, sub_nodes=0, param_bytes=0)
    walk(m.graph, stats)
    return stats


def mib(b):
    return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 1024:.1f} KiB"


def export_text(m):
    e = m["export"]
    if "opset" not in e:
        return e["exporter"]
    parts = [f"opset {e['opset']}"]
    parts.append("dynamic axes" if e["dynamic_axes"] else "static")
    if e["training"] == "PRESERVE":
        parts.append("BN kept (PRESERVE)")
    if not e["do_constant_folding"]:
        parts.append("no constant folding")
    if e["keep_initializers_as_inputs"]:
        parts.append("initializers as inputs")
    if e.get("post"):
        parts.append(e["post"])
    if e.get("norm_layers"):
        parts.append("norm layers " + e["norm_layers"])
    return ", ".join(parts)


def inputs_text(m):
    items = []
    for i in m["inputs"][:3]:
        shape = ",".join(str(d) for d in i.get("shape", []))
        items.append(f"{i['name']} {i.get('dtype', i.get('kind', '?'))}[{shape}]")
    if len(m["inputs"]) > 3:
        items.append(f"+{len(m['inputs']) - 3} more")
    text = "; ".join(items)
    if m.get("dims"):
        text += " (bind " + ", ".join(f"{k}={v}" for k, v in m["dims"].items()) + ")"
    return text.replace("|", "\\|")


def top_ops(ops, n=6):
    return ", ".join(f"{k} {v}" for k, v in ops.most_common(n))


# ----------------------------------------------------------------- fxc baseline
def first_error(text):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    err = [ln for ln in lines if "error" in ln.lower()]
    return (err or lines or ["(no message)"])[-1][:160]


def run_fxc(fxc, args, timeout, want_json=True):
    try:
        p = subprocess.run([fxc, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if p.returncode != 0:
        return None, first_error(p.stderr + p.stdout)
    if not want_json:
        return {}, None
    try:
        return json.loads(p.stdout), None
    except json.JSONDecodeError:
        return None, "output is not JSON: " + first_error(p.stdout)


def analyze_summary(j):
    groups = j.get("groups", [])
    reasons = collections.Counter(n["reason"] for n in j.get("not_fused", []))
    return dict(groups=len(groups), kernels_before=j.get("kernels_before"),
                kernels_after=j.get("kernels_after"),
                patterns=collections.Counter(g["pattern"] for g in groups).most_common(3),
                not_fused=reasons.most_common(2))


def fxc_baseline(fxc, corpus_dir, models, timeout, run):
    def said(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    out = dict(fxc=os.path.abspath(fxc), version=said(fxc, "--version"),
               commit=said("git", "-C", os.path.dirname(os.path.abspath(fxc)), "rev-parse",
                           "--short", "HEAD") or "unknown",
               date=datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), models={})
    for m in models:
        path = os.path.join(corpus_dir, m["file"])
        dims = [a for k, v in m.get("dims", {}).items() for a in ("--dim", f"{k}={v}")]
        r = {}
        j, err = run_fxc(fxc, ["inspect", "--json", path], timeout)
        r["inspect"] = dict(error=err) if err else dict(
            nodes=j.get("nodes"), parameter_bytes=j.get("parameter_bytes"),
            unknown_shape_nodes=j.get("unknown_shape_nodes"))
        j, err = run_fxc(fxc, ["analyze", "--json", path], timeout)
        r["analyze"] = dict(error=err) if err else analyze_summary(j)
        if dims:
            j, err = run_fxc(fxc, ["analyze", "--json", path, *dims], timeout)
            r["analyze_bound"] = dict(error=err) if err else analyze_summary(j)
        if run:
            # One unfused run on the manifest's input set; outputs are not compared here.
            data = os.path.join(corpus_dir, m["input_data"])
            feed = [a for k, i in enumerate(m["inputs"])
                    for a in ("--input", f"{i['name']}={data}/input_{k}.pb")]
            with tempfile.TemporaryDirectory() as tmp:
                _, err = run_fxc(fxc, ["run", path, "--threads", "1", "--output-dir", tmp,
                                       *dims, *feed], timeout, want_json=False)
            r["run"] = dict(error=err) if err else dict(ok=True)
        out["models"][m["name"]] = r
        print(f"fxc {m['name']}: " + "; ".join(
            f"{k} {v.get('error') or v.get('groups', 'ok')}" for k, v in r.items()),
            flush=True)
    return out


def reference_speed(fxc, corpus_dir, models, stats, timeout):
    """The reference-speed ops (`fxc ops`, speed column) each model runs, and those optimized
    for some forms only ("partly": docs/operators.md's notes), with the share of the model's
    unfused time their kernels take (`fxc profile --json`, sum of kernel medians)."""
    p = subprocess.run([fxc, "ops"], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"{fxc} ops failed: {first_error(p.stderr)}")
    speed, partly = {}, set()
    for line in p.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 3:
            speed[cols[0]] = cols[2]
            if cols[3:] == ["partly"]:
                partly.add(cols[0])
    reference = sorted(op for op, s in speed.items() if s == "reference")
    commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(fxc)), "rev-parse",
                             "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = dict(reference_ops=reference, partly_ops=sorted(partly), commit=commit or "unknown",
               date=datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), models={})
    for m in models:
        used = sorted((set(reference) | partly) & set(stats[m["name"]]["ops"]))
        if not used:
            continue
        path = os.path.join(corpus_dir, m["file"])
        dims = [a for k, v in m.get("dims", {}).items() for a in ("--dim", f"{k}={v}")]
        j, err = run_fxc(fxc, ["profile", path, "--json", "--runs", "5", "--threads", "2",
                               *dims], timeout)
        r = dict(ops=used, reference=[op for op in used if op in reference])
        if err:
            r["error"] = err
        else:
            kernels = j.get("kernels", [])
            total = sum(k["median_us"] for k in kernels)
            r["total_ms"] = total / 1e3
            r["share"] = {op: sum(k["median_us"] for k in kernels if op in k["op_types"]) /
                          total if total > 0 else None for op in used}
        out["models"][m["name"]] = r
        print(f"fxc reference-speed {m['name']}: {r}", flush=True)
    return out


def analyze_cell(a):
    if a is None:
        return "(no symbolic dims)"
    if a.get("error"):
        return "error: " + a["error"].replace("|", "\\|")
    text = f"{a['groups']} groups, kernels {a['kernels_before']} → {a['kernels_after']}"
    if a["patterns"]:
        text += "; " + ", ".join(f"{p} {n}" for p, n in a["patterns"])
    return text.replace("|", "\\|")


def inspect_cell(i, m):
    if i.get("error"):
        return "error: " + i["error"].replace("|", "\\|")
    text = f"loads, {i['nodes']} nodes, {mib(i['parameter_bytes'] or 0)}"
    if i.get("unknown_shape_nodes"):
        text += f", {i['unknown_shape_nodes']} nodes of unknown shape"
    return text


# ----------------------------------------------------------------- the document
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "bench", "cache", "corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "corpus.md"))
    ap.add_argument("--fxc", help="run fxc inspect/analyze over the corpus with this binary")
    ap.add_argument("--baseline", help="a saved fxc_baseline.json to show instead of running fxc")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per fxc command")
    ap.add_argument("--no-run", action="store_true",
                    help="with --fxc: skip `fxc run` (inspect and analyze only)")
    ap.add_argument("--reference-only", action="store_true",
                    help="with --fxc and --baseline: only redo the reference-speed section")
    ap.add_argument("--baseline-out", help="where --fxc saves the baseline "
                    "(default: CORPUS/fxc_baseline.json)")
    args = ap.parse_args()
    manifest_path = os.path.join(args.corpus, "corpus.json")
    if not os.path.exists(manifest_path):
        sys.exit(f"{manifest_path} is missing: run bench/corpus/build_corpus.py first")
    with open(manifest_path) as f:
        manifest = json.load(f)
    models = manifest["models"]

    stats = {m["name"]: model_stats(os.path.join(args.corpus, m["file"])) for m in models}
    baseline = None
    if args.baseline:
        with open(args.baseline) as f:
            baseline = json.load(f)
    if args.fxc:
        if not args.reference_only:
            baseline = fxc_baseline(args.fxc, args.corpus, models, args.timeout, not args.no_run)
        elif baseline is None:
            sys.exit("--reference-only needs --baseline FILE")
        baseline["reference_speed"] = reference_speed(args.fxc, args.corpus, models, stats,
                                                      args.timeout)
        with open(args.baseline_out or os.path.join(args.corpus, "fxc_baseline.json"), "w") as f:
            json.dump(baseline, f, indent=1)

    rows, by_source, total_ops = [], collections.Counter(), collections.Counter()
    for m in models:
        s = stats[m["name"]]
        by_source[m["source"].split(" (")[0]] += 1
        total_ops.update(s["ops"])
        nodes = str(s["nodes"]) + (f" (+{s['sub_nodes']} in subgraphs)" if s["sub_nodes"] else "")
        rows.append(f"| {m['name']} | {m['family']} | {m['task']} | {m['source'].split(' (')[0]} "
                    f"| {export_text(m)} | {inputs_text(m)} | {nodes} | {mib(s['param_bytes'])} "
                    f"| {top_ops(s['ops'])} |")

    def cmp(*names):
        """'name: N nodes (BatchNormalization b, Identity i, LayerNormalization l)' for each."""
        out = []
        for n in names:
            if n not in stats:
                out.append(f"{n} (not built)")
                continue
            st = stats[n]
            notable = [f"{op} {st['ops'][op]}" for op in
                       ("BatchNormalization", "Identity", "LayerNormalization", "Constant")
                       if st["ops"][op]]
            out.append(f"{n} {st['nodes']} nodes" + (f" ({', '.join(notable)})" if notable
                                                     else ""))
        return "; ".join(out)

    identity = [(n, st["ops"]["Identity"]) for n, st in stats.items() if st["ops"]["Identity"]]
    v = manifest["versions"]
    L = []
    L += ["# The benchmark corpus", "",
          "Generated by `bench/corpus/describe_corpus.py` from the model files (do not edit by "
          "hand). Regenerate with:", "",
          "```sh",
          "/usr/bin/python3 bench/corpus/build_corpus.py     # builds bench/cache/corpus/ "
          "(git-ignored)",
          "/usr/bin/python3 bench/corpus/describe_corpus.py  # writes this file",
          "/usr/bin/python3 bench/corpus/describe_corpus.py --fxc build/app/fxc  # + fxc baseline "
          "(takes minutes)",
          "```", "",
          f"{len(models)} models, built with torch {v['torch']}, torchvision {v['torchvision']}, "
          f"onnx {v['onnx']}; random weights (nothing is downloaded, nothing is committed). "
          "`bench/run_all.sh` builds the corpus in its export step (`FX_CORPUS=0` skips it). "
          "Each model's inputs, the value to bind to every symbolic dimension and its export "
          "settings are in `bench/cache/corpus/corpus.json`; every model passes "
          "`onnx.checker` with `full_check` (strict shape inference).", "",
          "By source: " + ", ".join(f"{k} {n}" for k, n in by_source.most_common()) + ".", "",
          "## What the export settings do (torch 1.13)", "",
          "Read from the files of this corpus:", "",
          "- In eval mode (`TrainingMode.EVAL`, the default) the exporter folds every "
          "BatchNormalization that follows a Conv into it, whether or not constant folding is "
          f"on: {cmp('resnet18', 'resnet18_no_folding')}. `TrainingMode.PRESERVE` with constant "
          f"folding off keeps it: {cmp('resnet18_bn_kept')}. A BatchNormalization with no Conv "
          f"before it stays in eval mode too: {cmp('maxvit_t')}.",
          "- The exporter shares equal tensors behind `Identity` nodes. A network whose "
          "normalization layers are untrained (all ones and zeros) gets them on its weights: "
          f"{cmp('resnet18_bn_kept_untrained')}. The corpus otherwise gives normalization layers "
          "random trained-looking values, so that only the exporter's own habits remain; "
          "models that still have Identity nodes: " + (", ".join(
              f"{n} {c}" for n, c in identity) or "none") + ".",
          "- Constant folding off leaves shape arithmetic and weight transposes in the graph: "
          f"{cmp('bert_mini', 'bert_mini_no_folding')}.",
          "- Opset 17 exports LayerNorm as one `LayerNormalization` node; opsets 11 to 14 "
          "decompose it (ReduceMean, Sub, Pow, Sqrt, Div): "
          f"{cmp('bert_mini_opset11', 'bert_mini', 'bert_mini_opset17')}.",
          "- `_constant_weights` moves every initializer into a `Constant` node (the habit of "
          "paddle2onnx and tf2onnx); `_external_data` stores the weights in `NAME.onnx.data`; "
          "`_initializers_as_inputs` lists every weight as a graph input too "
          "(`keep_initializers_as_inputs=True`, the default of old exporters).",
          ""]
    L += ["## Models", "",
          "Nodes: top-level graph (nodes inside If/Loop/Scan bodies in brackets). Parameters: "
          "initializers and Constant-node tensors. Top ops: the six most frequent op types "
          "(subgraphs included).", "",
          "| model | family | task | source | export | inputs | nodes | parameters | top ops |",
          "| --- | --- | --- | --- | --- | --- | ---: | ---: | --- |"]
    L += rows
    L += ["", "## Not in the corpus", ""]
    for f in manifest.get("failed", []):
        L.append(f"- **{f['name']}**: export failed: `{f['error']}`")
    for f in manifest.get("not_built", []):
        L.append(f"- **{f['name']}**: {f['reason']}")
    for f in manifest.get("skipped", []):
        L.append(f"- **{f['name']}**: skipped at build time: {f['reason']}")
    L += ["", "Op types over the whole corpus (count of nodes): " +
          ", ".join(f"{k} {n}" for k, n in total_ops.most_common(40)) + ".", ""]

    if baseline:
        b = baseline["models"]
        L += ["## Baseline: what fxc does with each model", "",
              f"`fxc inspect` and `fxc analyze` (default device and opt level) on every model, "
              f"{baseline['date']}, `{baseline.get('version') or 'fxc'}` built from commit "
              f"{baseline.get('commit', 'unknown')}. "
              "\"as exported\" runs with no `--dim`, as a new user would; \"dims bound\" passes "
              "the manifest's `--dim` values. Groups are fusion candidates; kernels are before → "
              "after fusion. `fxc run` runs the model once, unfused, on the manifest's input set "
              "(`NAME.inputs/`). This is the starting point of the \"any model as exported\" "
              "issue; no times are recorded here.", "",
              "| model | fxc inspect | fxc analyze, as exported | fxc analyze, dims bound "
              "| fxc run |",
              "| --- | --- | --- | --- | --- |"]
        loads = grouped = runs = 0
        for m in models:
            r = b.get(m["name"])
            if not r:
                L.append(f"| {m['name']} | (not run) | | |")
                continue
            loads += not r["inspect"].get("error")
            best = r.get("analyze_bound") or r["analyze"]
            grouped += bool(best.get("groups"))
            ran = r.get("run")
            runs += bool(ran and not ran.get("error"))
            run_cell = ("(not run)" if ran is None else "error: " + ran["error"].replace(
                "|", "\\|") if ran.get("error") else "runs")
            L.append(f"| {m['name']} | {inspect_cell(r['inspect'], m)} | "
                     f"{analyze_cell(r['analyze'])} | {analyze_cell(r.get('analyze_bound'))} "
                     f"| {run_cell} |")
        symbolic = [m["name"] for m in models if m.get("dims") and m["name"] in b]
        exported = sum(b[n]["analyze"].get("groups", 0) for n in symbolic)
        bound = sum(b[n].get("analyze_bound", {}).get("groups", 0) for n in symbolic)
        zero = [n for n in symbolic if not b[n]["analyze"].get("groups")
                and b[n].get("analyze_bound", {}).get("groups")]
        L += ["", f"{loads} of {len(models)} models load in `fxc inspect`; {runs} run in "
              "`fxc run` "
              "(unfused, one thread, the manifest's inputs; outputs not compared here); "
              f"{grouped} get at least "
              "one fusion group (with dims bound where the model has symbolic dims). "
              f"{len(symbolic)} models have symbolic dims: as exported they get {exported} groups "
              f"in all, with the dims bound {bound}; with no `--dim`, 0 groups but some once "
              "bound: " + (", ".join(zero) or "none") + "."]
        missing = collections.defaultdict(list)
        for m in models:
            err = (b.get(m["name"], {}).get("run") or {}).get("error", "")
            if "unsupported op " in err:
                missing[err.split("unsupported op ")[1].split()[0]].append(m["name"])
        if missing:
            L += ["", "Ops that stop `fxc run` (first one met per model): " + "; ".join(
                f"{op} ({', '.join(ns)})" for op, ns in sorted(missing.items())) + "."]
        L += [""]
    ref = (baseline or {}).get("reference_speed")
    if ref:
        L += ["## Reference-speed kernels", "",
              "Kernels marked *reference* in `fxc ops` (docs/operators.md: a naive scalar loop "
              "kept for coverage) are allowed only where they cost a corpus model under 1% of "
              "its time. Per model that runs one, or an op whose kernel is fast for some forms "
              "only (*partly*, the notes of docs/operators.md): the ops, and the share of the "
              "model's time their kernels take in `fxc profile` (unfused, 2 threads, 5 runs, "
              "sum of kernel "
              f"medians), {ref['date']}, fxc built from commit {ref['commit']}. "
              "Reference-speed ops: "
              + ", ".join(ref["reference_ops"]) + "; partly optimized: "
              + (", ".join(ref.get("partly_ops", [])) or "none") + ".", "",
              "| model | ops (speed) | share of its time | reference ops under 1% |",
              "| --- | --- | ---: | --- |"]
        for m in models:
            r = ref["models"].get(m["name"])
            if not r:
                continue
            refs = r.get("reference", r["ops"])
            ops = ", ".join(f"{op} ({'reference' if op in refs else 'partly'})" for op in r["ops"])
            if r.get("error"):
                L.append(f"| {m['name']} | {ops} | error: "
                         f"{r['error'].replace('|', chr(92) + '|')} | unknown |")
                continue
            shares = r["share"]
            cell = ", ".join(f"{op} {100 * v:.2f}%" for op, v in shares.items())
            ok = all(shares[op] is not None and shares[op] < 0.01 for op in refs)
            verdict = ("none run" if not refs else "yes" if ok else "**no**")
            L.append(f"| {m['name']} | {ops} | {cell} (of {r['total_ms']:.1f} ms) | {verdict} |")
        if not ref["models"]:
            L.append("| (none) | | | |")
        L += [""]

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(L))
    print(f"wrote {args.out}: {len(models)} models" +
          (", with the fxc baseline" if baseline else ""))


if __name__ == "__main__":
    main()
