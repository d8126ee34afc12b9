#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Quantizes a float ONNX CNN to QDQ int8 form, with the onnx package only.

    /usr/bin/python3 bench/corpus/quantize_qdq.py IN.onnx OUT.onnx [--seed S]

The corpus's QDQ int8 model (resnet18_qdq_int8, post-processing "qdq_int8" in
corpus_models.py) is made with this; it writes the form ONNX Runtime's static quantizer
writes (QuantFormat.QDQ), without onnxruntime in Python:
- every Conv and Gemm with initializer weights gets its weights as int8, symmetric, one
  scale per output channel (zero point 0), read through a DequantizeLinear (axis 0);
- its bias as int32 with scale x_scale * w_scale (zero point 0), read through a
  DequantizeLinear;
- its activation input and its result (after a Relu that alone reads it) pass through
  QuantizeLinear -> DequantizeLinear as uint8, asymmetric, one scale per tensor; each reader
  of a quantized tensor gets its own DequantizeLinear, and a graph output is produced by
  one, so that the output stays float32.
Activation ranges (calibration): min and max of each such tensor over one run of the
float model on random inputs (bench/peer/ort_run.js --seed S, so node and bench/peer's
onnxruntime-node must be installed), widened to include 0. Random inputs and random
weights make the ranges representative of nothing but this model on such inputs, which
is what a benchmark of the runtime needs: the int8 kernels do the same work whatever
the values are.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(os.path.dirname(HERE), "peer", "ort_run.js")
ANCHORS = ("Conv", "Gemm")


def quantizable(m):
    """Anchors with initializer weights (Gemm: not transposed A)."""
    inits = {t.name for t in m.graph.initializer}
    out = []
    for n in m.graph.node:
        if n.op_type not in ANCHORS or len(n.input) < 2 or n.input[1] not in inits:
            continue
        if n.op_type == "Gemm" and any(a.name == "transA" and a.i for a in n.attribute):
            continue
        out.append(n)
    return out


def readers(m):
    r = {}
    for n in m.graph.node:
        for i, v in enumerate(n.input):
            r.setdefault(v, []).append((n, i))
    return r


def activation_tensors(m, anchors):
    """The anchors' activation inputs and results (after a Relu that alone reads them)."""
    r = readers(m)
    outputs = {o.name for o in m.graph.output}
    names = []
    for n in anchors:
        names.append(n.input[0])
        y = n.output[0]
        users = r.get(y, [])
        if len(users) == 1 and users[0][0].op_type == "Relu" and y not in outputs:
            y = users[0][0].output[0]
        names.append(y)
    return list(dict.fromkeys(names))


def calibrate(m, names, seed):
    """min and max of each tensor in `names` over one ONNX Runtime run on random inputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    present = {o.name for o in probe.graph.output}
    for n in names:
        if n not in present:
            probe.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.onnx")
        onnx.save(probe, path)
        out = os.path.join(tmp, "out")
        subprocess.run(["node", ORT_RUN, path, "--runs", "1", "--warmup", "0", "--seed", str(seed),
                        "--outputs", out], check=True, stdout=subprocess.DEVNULL)
        ranges = {}
        for i, o in enumerate(probe.graph.output):
            t = onnx.TensorProto()
            with open(os.path.join(out, f"output_{i}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            ranges[o.name] = (float(a.min()), float(a.max()))
    return ranges


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    return np.float32(scale), np.uint8(round(-lo / scale))


def quantize(src, dst, seed=1):
    m = onnx.load(src)
    g = m.graph
    anchors = quantizable(m)
    if not anchors:
        sys.exit(f"{src}: no Conv or Gemm with initializer weights to quantize")
    acts = activation_tensors(m, anchors)
    ranges = calibrate(m, acts, seed)
    inits = {t.name: t for t in g.initializer}
    new_inits, new_nodes = [], []
    act_params = {}
    for name in acts:
        s, z = uint8_params(*ranges[name])
        act_params[name] = (s, z)
        new_inits += [numpy_helper.from_array(np.array(s, np.float32), name + "_scale"),
                      numpy_helper.from_array(np.array(z, np.uint8), name + "_zero_point")]

    # Weights and biases: int8 per output channel, int32 bias, each through a DequantizeLinear.
    dq_before = {}  # anchor name -> DequantizeLinear nodes that feed it
    for n in anchors:
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
        transposed = n.op_type == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
        oc_axis = 0 if n.op_type == "Conv" or transposed else 1
        red = tuple(i for i in range(w.ndim) if i != oc_axis)
        w_scale = (np.abs(w).max(axis=red) / 127.0).astype(np.float32)
        w_scale[w_scale == 0] = 1.0
        shape = [1] * w.ndim
        shape[oc_axis] = -1
        wq = np.clip(np.rint(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
        base = n.input[1]
        new_inits += [numpy_helper.from_array(wq, base + "_quantized"),
                      numpy_helper.from_array(w_scale, base + "_scale"),
                      numpy_helper.from_array(np.zeros(w_scale.shape, np.int8), base + "_zero_point")]
        nodes = [helper.make_node("DequantizeLinear", [base + "_quantized", base + "_scale",
                                                      base + "_zero_point"],
                                  [base + "_dequantized"], name=base + "_DequantizeLinear",
                                  axis=oc_axis)]
        n.input[1] = base + "_dequantized"
        if len(n.input) > 2 and n.input[2] in inits:
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
            b_scale = (act_params[n.input[0]][0] * w_scale).astype(np.float32)
            bq = np.rint(b / b_scale).astype(np.int32)
            bb = n.input[2]
            new_inits += [numpy_helper.from_array(bq, bb + "_quantized"),
                          numpy_helper.from_array(b_scale, bb + "_scale"),
                          numpy_helper.from_array(np.zeros(b_scale.shape, np.int32),
                                                  bb + "_zero_point")]
            nodes.append(helper.make_node("DequantizeLinear", [bb + "_quantized", bb + "_scale",
                                                               bb + "_zero_point"],
                                          [bb + "_dequantized"], name=bb + "_DequantizeLinear",
                                          axis=0))
            n.input[2] = bb + "_dequantized"
        dq_before[n.name] = nodes

    # Activations: QuantizeLinear after the producer, a DequantizeLinear per reader.
    r = readers(m)
    outputs = {o.name for o in g.output}
    q_after = {}  # tensor -> nodes to place after its producer
    rename_output = {}
    for name in acts:
        s_name, z_name = name + "_scale", name + "_zero_point"
        src_name = name
        if name in outputs:  # the producer writes a float tensor that a DequantizeLinear restores
            src_name = name + "_float"
            rename_output[name] = src_name
        nodes = [helper.make_node("QuantizeLinear", [src_name, s_name, z_name], [name + "_quantized"],
                                  name=name + "_QuantizeLinear")]
        for k, (reader, i) in enumerate(r.get(name, [])):
            dq = f"{name}_dequantized_{k}"
            nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", s_name, z_name],
                                          [dq], name=f"{name}_DequantizeLinear_{k}"))
            reader.input[i] = dq
        if name in outputs:
            nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", s_name, z_name],
                                          [name], name=f"{name}_DequantizeLinear_out"))
        q_after[name] = nodes

    original = {v: k for k, v in rename_output.items()}
    ordered = []
    for name in g.input:  # graph inputs that are quantized: right at the start
        ordered += q_after.pop(name.name, [])
    for n in g.node:
        ordered += dq_before.get(n.name, [])
        for k, o in enumerate(n.output):
            if o in rename_output:
                n.output[k] = rename_output[o]
        ordered.append(n)
        for o in n.output:
            ordered += q_after.pop(original.get(o, o), [])
    if q_after:
        sys.exit(f"{src}: no producer found for {sorted(q_after)}")
    used = {v for n in ordered for v in n.input}
    kept = [t for t in g.initializer if t.name in used]
    del g.node[:]
    g.node.extend(ordered)
    del g.initializer[:]
    g.initializer.extend(kept + [t for t in new_inits if t.name in used])
    del g.value_info[:]  # stale float types of renamed tensors; shape inference redoes them
    for op in m.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 13:  # per-axis DequantizeLinear
            op.version = 13
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return len(anchors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--seed", type=int, default=1, help="seed of the calibration inputs")
    a = ap.parse_args()
    n = quantize(a.src, a.dst, a.seed)
    print(f"{a.dst}: {n} Conv/Gemm quantized")


if __name__ == "__main__":
    main()
