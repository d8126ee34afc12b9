#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a ResNet-like ONNX model without name scopes, for the flat-graph figures.

  scopeless_graph.py --blocks N --out FILE   -> 5 N + 2 ops: a stem Conv, N residual
      blocks (Conv, Relu, Conv, Add, Relu) named like scope-less exporters name them
      (Conv_12), a GlobalAveragePool. Used for docs/benchmarks.md "Flat graphs" and
      docs/screenshots/scopeless_3002_grouped.png (--blocks 600).
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(blocks, channels=8):
    nodes, inits, count = [], [], [0]

    def weight(name, shape):
        inits.append(numpy_helper.from_array(
            (np.random.rand(*shape).astype(np.float32) - 0.5) * 0.1, name))
        return name

    def op(op_type, inputs, **attrs):
        count[0] += 1
        out = f"t{count[0]}"
        nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{count[0]}", **attrs))
        return out

    x = op("Conv", ["input", weight("w0", [channels, 3, 3, 3])], pads=[1, 1, 1, 1])
    for b in range(blocks):
        h = op("Conv", [x, weight(f"w{b}a", [channels, channels, 3, 3])], pads=[1, 1, 1, 1])
        h = op("Relu", [h])
        h = op("Conv", [h, weight(f"w{b}b", [channels, channels, 3, 3])], pads=[1, 1, 1, 1])
        x = op("Relu", [op("Add", [x, h])])
    x = op("GlobalAveragePool", [x])
    graph = helper.make_graph(
        nodes, "scopeless",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    onnx.save(build(args.blocks), args.out)
