#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the two generated graphs the GUI step opens (bench/steps/60_gui.sh).

  gui_graphs.py --out DIR   ->  DIR/llm_10k.onnx   (~10,000 nodes, decoder-only LLM-like:
                                                    blocks under /model/layers.N/{attn,mlp})
                                DIR/synthetic_100k.onnx (~100,000 nodes, residual blocks
                                                    under /stage.S/block.B/)
Weights are tiny (hidden size 16) on purpose: the GUI figures are about graph size, not
file size, and small files keep the parse time from hiding the layout time.
Skips a file that already exists.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

H = 16  # hidden size


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def weight(self, name, shape):
        self.inits.append(numpy_helper.from_array(
            (np.random.rand(*shape).astype(np.float32) - 0.5) * 0.1, name))
        return name

    def op(self, scope, op_type, inputs, **attrs):
        self.n += 1
        name = f"{scope}/{op_type}_{self.n}"
        out = f"{name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def llm(blocks):
    b = Builder()
    x = "input"
    for i in range(blocks):
        s = f"/model/layers.{i}"
        # attention: 3 projections, scores, softmax, context, output projection, residual
        q = b.op(f"{s}/attn", "MatMul", [x, b.weight(f"{s}.q", [H, H])])
        k = b.op(f"{s}/attn", "MatMul", [x, b.weight(f"{s}.k", [H, H])])
        v = b.op(f"{s}/attn", "MatMul", [x, b.weight(f"{s}.v", [H, H])])
        kt = b.op(f"{s}/attn", "Transpose", [k], perm=[0, 2, 1])
        sc = b.op(f"{s}/attn", "MatMul", [q, kt])
        sc = b.op(f"{s}/attn", "Mul", [sc, b.weight(f"{s}.scale", [1])])
        p = b.op(f"{s}/attn", "Softmax", [sc], axis=-1)
        c = b.op(f"{s}/attn", "MatMul", [p, v])
        o = b.op(f"{s}/attn", "MatMul", [c, b.weight(f"{s}.o", [H, H])])
        x = b.op(s, "Add", [x, o])
        # MLP with a GELU-like sigmoid gate, residual
        h = b.op(f"{s}/mlp", "MatMul", [x, b.weight(f"{s}.fc1", [H, 4 * H])])
        h = b.op(f"{s}/mlp", "Add", [h, b.weight(f"{s}.b1", [4 * H])])
        g = b.op(f"{s}/mlp", "Sigmoid", [h])
        h = b.op(f"{s}/mlp", "Mul", [h, g])
        h = b.op(f"{s}/mlp", "MatMul", [h, b.weight(f"{s}.fc2", [4 * H, H])])
        h = b.op(f"{s}/mlp", "Add", [h, b.weight(f"{s}.b2", [H])])
        x = b.op(s, "Add", [x, h])
    return b, x, [1, 8, H]


def synthetic(stages, blocks):
    b = Builder()
    x = "input"
    for si in range(stages):
        for bi in range(blocks):
            s = f"/stage.{si}/block.{bi}"
            h = b.op(s, "MatMul", [x, b.weight(f"{s}.w1", [H, H])])
            h = b.op(s, "Add", [h, b.weight(f"{s}.b1", [H])])
            h = b.op(s, "Relu", [h])
            h = b.op(s, "MatMul", [h, b.weight(f"{s}.w2", [H, H])])
            h = b.op(s, "Mul", [h, b.weight(f"{s}.g", [H])])
            h = b.op(s, "Sigmoid", [h])
            h = b.op(s, "Mul", [x, h])
            x = b.op(s, "Add", [x, h])
    return b, x, [1, 8, H]


def save(path, built):
    b, out, shape = built
    g = helper.make_graph(
        b.nodes, os.path.basename(path)[:-5],
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)
    print(f"wrote {path}: {len(b.nodes)} nodes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    np.random.seed(0)
    jobs = {"llm_10k.onnx": lambda: llm(589),  # 17 nodes a block -> 10,013
            "synthetic_100k.onnx": lambda: synthetic(50, 250)}  # 8 a block -> 100,000
    for f, make in jobs.items():
        p = os.path.join(a.out, f)
        if not os.path.exists(p):
            save(p, make())


if __name__ == "__main__":
    main()
