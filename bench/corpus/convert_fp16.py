#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Converts a float32 ONNX CNN to float16 inside, keeping float32 inputs and outputs.

The habit of onnxconverter-common's `convert_float_to_float16(keep_io_types=True)`, written
with the onnx package only (Debian has no onnxconverter-common): every float32 initializer
and Constant tensor becomes float16, a Cast to float16 follows each float32 graph input and a
Cast to float32 precedes each float32 graph output, Cast nodes to float become Cast to float16,
and stale value_info is dropped for shape inference to redo. Meant for the convolutional
networks of the corpus (ops whose float inputs are all data); an op with a float input that
ONNX requires as float32 (Resize's scales, for one) is not handled and fails onnx.checker.

  convert_fp16.py SRC DST
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _half(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    h = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    return h


def convert(src, dst):
    m = onnx.load(src)
    g = m.graph
    for i, t in enumerate(list(g.initializer)):
        g.initializer[i].CopyFrom(_half(t))
    renames, head, tail = {}, [], []
    for v in g.input:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT and v.name not in {
                t.name for t in g.initializer}:
            inner = v.name + "_fp16"
            head.append(helper.make_node("Cast", [v.name], [inner], to=TensorProto.FLOAT16,
                                         name=v.name + "_to_fp16"))
            renames[v.name] = inner
    for n in g.node:
        n.input[:] = [renames.get(x, x) for x in n.input]
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    a.t.CopyFrom(_half(a.t))
        if n.op_type == "Cast":
            for a in n.attribute:
                if a.name == "to" and a.i == TensorProto.FLOAT:
                    a.i = TensorProto.FLOAT16
    for v in g.output:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = v.name + "_fp16"
            for n in g.node:
                n.output[:] = [inner if x == v.name else x for x in n.output]
                n.input[:] = [inner if x == v.name else x for x in n.input]
            tail.append(helper.make_node("Cast", [inner], [v.name], to=TensorProto.FLOAT,
                                         name=v.name + "_to_fp32"))
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, dst)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    convert(sys.argv[1], sys.argv[2])
