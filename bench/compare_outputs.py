#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two directories of output_<i>.pb TensorProto files (a reference, a candidate).

    /usr/bin/python3 bench/compare_outputs.py REF_DIR OUT_DIR [--rel-tol 1e-3]
        [--model MODEL.onnx --steps 2]

Prints one JSON object: per output its shape, the largest absolute difference, the largest
reference magnitude and their ratio; "ok" when every ratio is within --rel-tol and shapes
and dtypes agree. Exit status 0 when ok, 1 when not, 2 when files are missing.

Quantized outputs are compared in quantization steps instead (--model names the model):
an 8-bit output (one step = 1) or the result of a DequantizeLinear with a constant
per-tensor scale (one step = that scale) is ok when it is within --steps steps, since two
runtimes that round a value near a half differently differ by a whole step, and such a
difference passes through every later quantized layer. The row then says "steps" (the
largest difference in steps) and "step" (its size).
"""

import argparse
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def quantization_steps(model_path):
    """Per graph output name, its quantization step: 1 for 8-bit outputs, the scale of
    a DequantizeLinear with a constant per-tensor scale that produces it; others absent."""
    m = onnx.load(model_path, load_external_data=False)
    consts = {i.name: i for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.attribute:
            consts[n.output[0]] = n.attribute[0].t
    producer = {o: n for n in m.graph.node for o in n.output}
    steps = {}
    for o in m.graph.output:
        t = o.type.tensor_type.elem_type
        if t in (onnx.TensorProto.UINT8, onnx.TensorProto.INT8):
            steps[o.name] = 1.0
            continue
        n = producer.get(o.name)
        if n is None or n.op_type != "DequantizeLinear" or len(n.input) < 2:
            continue
        scale = consts.get(n.input[1])
        if scale is None:
            continue
        s = numpy_helper.to_array(scale)
        if s.size == 1 and float(s.reshape(-1)[0]) > 0:
            steps[o.name] = float(s.reshape(-1)[0])
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("out")
    ap.add_argument("--rel-tol", type=float, default=1e-3,
                    help="max |out - ref| allowed, relative to max |ref| of that output")
    ap.add_argument("--model", help="the model, to find which outputs are quantized")
    ap.add_argument("--steps", type=float, default=2,
                    help="quantization steps a quantized output may differ by (--model)")
    a = ap.parse_args()
    qsteps = quantization_steps(a.model) if a.model else {}
    refs = sorted(glob.glob(os.path.join(a.ref, "output_*.pb")))
    if not refs:
        print(json.dumps({"ok": False, "error": f"no output_*.pb in {a.ref}"}))
        return 2
    result = {"ok": True, "outputs": []}
    for ref_path in refs:
        out_path = os.path.join(a.out, os.path.basename(ref_path))
        if not os.path.exists(out_path):
            result.update(ok=False, error=f"missing {out_path}")
            print(json.dumps(result))
            return 2
        name, ref = load(ref_path)
        _, out = load(out_path)
        row = {"name": name, "shape": list(ref.shape), "dtype": str(ref.dtype)}
        if ref.shape != out.shape or ref.dtype != out.dtype:
            row.update(ok=False, error=f"got {out.dtype}{list(out.shape)}")
        else:
            r, o = ref.astype(np.float64), out.astype(np.float64)
            scale = float(np.max(np.abs(r))) if r.size else 0.0
            diff = float(np.max(np.abs(r - o))) if r.size else 0.0
            finite = bool(np.all(np.isfinite(o)) == np.all(np.isfinite(r)))
            rel = diff / scale if scale > 0 else diff
            row.update(max_abs_diff=diff, max_abs_ref=scale, rel_diff=rel,
                       ok=finite and rel <= a.rel_tol and scale > 0)
            step = qsteps.get(name)
            if step:
                # Half a step of float slack: the outputs are whole steps apart.
                in_steps = diff / step
                row.update(step=step, steps=in_steps, steps_allowed=a.steps,
                           ok=finite and scale > 0 and in_steps <= a.steps + 0.5)
            if scale == 0:
                # An all-zero reference proves nothing (e.g. a zero-initialized head).
                row["error"] = "reference is all zeros"
        result["outputs"].append(row)
        result["ok"] = result["ok"] and row["ok"]
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
