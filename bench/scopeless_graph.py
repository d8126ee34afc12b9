#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a ResNet-like ONNX model without name scopes, for the flat-graph figures.

  scopeless_graph.py --blocks N --out FILE   -> 5 N + 2 ops: a stem Conv, N residual
      blocks (Conv, Relu, Conv, Add, Relu) named like scope-less exporters name them
      (Conv_12), a GlobalAveragePool. Used for docs/benchmarks.md "Flat graphs" and
      docs/screenshots/scopeless_4002_flat.png (--blocks 800) and
      scopeless_6002_grouped.png (--blocks 1200).
  scopeless_graph.py --branches N --out FILE -> 2 N + 3 ops: a stem (Conv, Sigmoid), then
      two branches of N ops side by side (Relu, Tanh) merged by an Add: past the stem no
      single tensor crosses, so grouping by structure finds one region, as in a detection
      head (ssdlite320_mobilenet_v3_large once hung the explorer that way). Used by the
      ctest views.check_scopeless_branches.
"""
import argparse

import onnx
from onnx import TensorProto, helper, numpy_helper


def build(blocks, channels=8):
    import numpy as np

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


def build_branches(n):
    nodes = []

    def op(op_type, inputs, **attrs):
        out = f"t{len(nodes) + 1}"
        nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{len(nodes) + 1}",
                                      **attrs))
        return out

    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], [0.01] * (8 * 3 * 3 * 3))
    x = op("Sigmoid", [op("Conv", ["input", "w"], pads=[1, 1, 1, 1])])
    left = right = x
    for _ in range(n):
        left = op("Relu", [left])
    for _ in range(n):
        right = op("Tanh", [right])
    y = op("Add", [left, right])
    graph = helper.make_graph(
        nodes, "scopeless_branches",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 8, 16, 16])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shape = ap.add_mutually_exclusive_group(required=True)
    shape.add_argument("--blocks", type=int)
    shape.add_argument("--branches", type=int)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    onnx.save(build(args.blocks) if args.blocks else build_branches(args.branches), args.out)
