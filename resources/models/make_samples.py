#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the small sample models committed next to this script.

Run with Debian's interpreter (needs the `onnx` package and numpy only):
    /usr/bin/python3 resources/models/make_samples.py [OUT_DIR]

Weights come from a fixed seed, so re-running gives byte-identical files. Node names
follow PyTorch's exporter (`/layer1/0/conv1/Conv`) so scope grouping has something to
work on, and BatchNormalization is kept (not folded) so Conv+BN fusion has material.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, checker, helper, numpy_helper, shape_inference

OPSET = 17
rng = np.random.default_rng(20241123)


class Builder:
    """Collects nodes and initializers; names outputs after the node like torch does."""

    def __init__(self):
        self.nodes = []
        self.inits = []

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.const(name, (rng.standard_normal(shape) * s).astype(np.float32))

    def node(self, op, name, inputs, n_out=1, **attrs):
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name, inputs, outputs, doc):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(graph, producer_name="fusion-explorer-samples",
                              producer_version="1", doc_string=doc,
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        return m


# ---------------------------------------------------------------- tiny_cnn
def conv(b, scope, x, cin, cout, k=3, stride=1, bias=True):
    w = b.weight(f"{scope}.weight", [cout, cin, k, k])
    ins = [x, w]
    if bias:
        ins.append(b.weight(f"{scope}.bias", [cout], scale=0.1))
    return b.node("Conv", f"/{scope.replace('.', '/')}/Conv", ins, kernel_shape=[k, k],
                  pads=[k // 2] * 4, strides=[stride, stride], dilations=[1, 1], group=1)


def bn(b, scope, x, c):
    p = scope.replace(".", "/")
    gamma = b.const(f"{scope}.weight", (1.0 + 0.1 * rng.standard_normal(c)).astype(np.float32))
    beta = b.const(f"{scope}.bias", (0.1 * rng.standard_normal(c)).astype(np.float32))
    mean = b.const(f"{scope}.running_mean", (0.1 * rng.standard_normal(c)).astype(np.float32))
    var = b.const(f"{scope}.running_var", rng.uniform(0.5, 1.5, c).astype(np.float32))
    return b.node("BatchNormalization", f"/{p}/BatchNormalization", [x, gamma, beta, mean, var],
                  epsilon=1e-5, momentum=0.9)


def make_tiny_cnn():
    b = Builder()
    x = "input"
    # Stem: Conv + BN + ReLU.
    h = conv(b, "conv1", x, 3, 16, bias=False)
    h = bn(b, "bn1", h, 16)
    h = b.node("Relu", "/relu/Relu", [h])
    # Residual block (ResNet BasicBlock): Conv+BN+ReLU, Conv+BN, Add, ReLU.
    r = conv(b, "layer1.0.conv1", h, 16, 16, bias=False)
    r = bn(b, "layer1.0.bn1", r, 16)
    r = b.node("Relu", "/layer1/0/relu/Relu", [r])
    r = conv(b, "layer1.0.conv2", r, 16, 16, bias=False)
    r = bn(b, "layer1.0.bn2", r, 16)
    h = b.node("Add", "/layer1/0/Add", [r, h])
    h = b.node("Relu", "/layer1/0/relu_1/Relu", [h])
    # Conv + BiasAdd + LeakyReLU (the bias lives in a separate Add, as in TF/caffe exports).
    h = conv(b, "layer2.conv", h, 16, 32, stride=2, bias=False)
    bias = b.const("layer2.bias", (0.1 * rng.standard_normal([1, 32, 1, 1])).astype(np.float32))
    h = b.node("Add", "/layer2/Add", [h, bias])
    h = b.node("LeakyRelu", "/layer2/act/LeakyRelu", [h], alpha=0.1)
    # Conv + BN + SiLU written as x * sigmoid(x).
    h = conv(b, "layer3.conv", h, 32, 32, bias=False)
    h = bn(b, "layer3.bn", h, 32)
    s = b.node("Sigmoid", "/layer3/act/Sigmoid", [h])
    h = b.node("Mul", "/layer3/act/Mul", [h, s])
    # Conv + BN + HardSwish.
    h = conv(b, "layer4.conv", h, 32, 32, stride=2, bias=False)
    h = bn(b, "layer4.bn", h, 32)
    h = b.node("HardSwish", "/layer4/act/HardSwish", [h])
    # Head.
    h = b.node("GlobalAveragePool", "/avgpool/GlobalAveragePool", [h])
    h = b.node("Flatten", "/Flatten", [h], axis=1)
    w = b.weight("fc.weight", [10, 32])
    fb = b.weight("fc.bias", [10], scale=0.1)
    b.nodes.append(helper.make_node("Gemm", [h, w, fb], ["output"], name="/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    return b.model(
        "tiny_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])],
        "Tiny CNN: Conv+BN+ReLU stem, one residual block, Conv+bias+LeakyReLU, "
        "Conv+BN+SiLU, Conv+BN+HardSwish, pooling head.")


# ---------------------------------------------------------------- tiny_transformer
VOCAB, D, HEADS, MLP, MAX_POS = 128, 32, 4, 128, 32


def layer_norm(b, scope, x):
    """Decomposed LayerNorm as torch exports it below opset 17."""
    p = f"/{scope}"
    ax = dict(axes=[-1], keepdims=1)
    mean = b.node("ReduceMean", f"{p}/ReduceMean", [x], **ax)
    d = b.node("Sub", f"{p}/Sub", [x, mean])
    sq = b.node("Pow", f"{p}/Pow", [d, b.const(f"{scope}.two", np.array(2.0, np.float32))])
    var = b.node("ReduceMean", f"{p}/ReduceMean_1", [sq], **ax)
    ve = b.node("Add", f"{p}/Add", [var, b.const(f"{scope}.eps", np.array(1e-5, np.float32))])
    sd = b.node("Sqrt", f"{p}/Sqrt", [ve])
    n = b.node("Div", f"{p}/Div", [d, sd])
    g = b.const(f"{scope}.weight", (1.0 + 0.1 * rng.standard_normal(D)).astype(np.float32))
    be = b.const(f"{scope}.bias", (0.1 * rng.standard_normal(D)).astype(np.float32))
    n = b.node("Mul", f"{p}/Mul", [n, g])
    return b.node("Add", f"{p}/Add_1", [n, be])


def linear(b, scope, name, x, cin, cout):
    w = b.weight(f"{scope}.{name}.weight", [cin, cout])
    bias = b.weight(f"{scope}.{name}.bias", [cout], scale=0.02)
    y = b.node("MatMul", f"/{scope}/{name}/MatMul", [x, w])
    return b.node("Add", f"/{scope}/{name}/Add", [y, bias])


def make_tiny_transformer():
    b = Builder()
    ids = "input_ids"
    hd = D // HEADS
    wte = b.weight("transformer.wte.weight", [VOCAB, D], scale=0.02)
    wpe = b.weight("transformer.wpe.weight", [MAX_POS, D], scale=0.01)
    tok = b.node("Gather", "/wte/Gather", [wte, ids], axis=0)
    # Positions 0..seq-1 from Range over the input's seq dim, as torch.arange exports.
    shape = b.node("Shape", "/Shape", [ids])
    seq = b.node("Gather", "/Gather", [shape, b.const("index_1", np.array(1, np.int64))], axis=0)
    pos = b.node("Range", "/Range", [b.const("start_0", np.array(0, np.int64)), seq,
                                     b.const("step_1", np.array(1, np.int64))])
    pos_row = b.node("Unsqueeze", "/Unsqueeze", [pos, b.const("axes_0", np.array([0], np.int64))])
    pos_emb = b.node("Gather", "/wpe/Gather", [wpe, pos_row], axis=0)
    h = b.node("Add", "/Add", [tok, pos_emb])

    a = "h.0.attn"
    x = layer_norm(b, "h.0/ln_1", h)
    heads_shape = b.const("heads_shape", np.array([0, 0, HEADS, hd], np.int64))
    qkv = []
    for nm in ("q_proj", "k_proj", "v_proj"):
        t = linear(b, "h.0/attn", nm, x, D, D)
        t = b.node("Reshape", f"/h.0/attn/{nm}/Reshape", [t, heads_shape])
        perm = [0, 2, 3, 1] if nm == "k_proj" else [0, 2, 1, 3]
        qkv.append(b.node("Transpose", f"/h.0/attn/{nm}/Transpose", [t], perm=perm))
    q, k, v = qkv
    s = b.node("MatMul", "/h.0/attn/MatMul", [q, k])
    scale = b.const(f"{a}.scale", np.array(np.sqrt(hd), np.float32))
    s = b.node("Div", "/h.0/attn/Div", [s, scale])
    # Causal mask: key position > query position gets -1e4, added to the scores.
    axes_1 = b.const("axes_1", np.array([1], np.int64))
    qpos = b.node("Unsqueeze", "/h.0/attn/Unsqueeze", [pos, axes_1])
    kpos = b.node("Unsqueeze", "/h.0/attn/Unsqueeze_1", [pos, "axes_0"])
    future = b.node("Greater", "/h.0/attn/Greater", [kpos, qpos])
    neg = b.const(f"{a}.masked_bias", np.array(-1e4, np.float32))
    zero_f = b.const("zero_f", np.array(0.0, np.float32))
    m = b.node("Where", "/h.0/attn/Where", [future, neg, zero_f])
    s = b.node("Add", "/h.0/attn/Add", [s, m])
    p = b.node("Softmax", "/h.0/attn/Softmax", [s], axis=-1)
    o = b.node("MatMul", "/h.0/attn/MatMul_1", [p, v])
    o = b.node("Transpose", "/h.0/attn/Transpose", [o], perm=[0, 2, 1, 3])
    o = b.node("Reshape", "/h.0/attn/Reshape",
               [o, b.const("merge_shape", np.array([0, 0, D], np.int64))])
    o = linear(b, "h.0/attn", "c_proj", o, D, D)
    h = b.node("Add", "/h.0/Add", [h, o])

    x = layer_norm(b, "h.0/ln_2", h)
    f = linear(b, "h.0/mlp", "c_fc", x, D, MLP)
    # Exact GELU decomposed: 0.5 * x * (1 + erf(x / sqrt(2))).
    sqrt2 = b.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    g = b.node("Div", "/h.0/mlp/act/Div", [f, sqrt2])
    g = b.node("Erf", "/h.0/mlp/act/Erf", [g])
    g = b.node("Add", "/h.0/mlp/act/Add", [g, b.const("one", np.array(1.0, np.float32))])
    g = b.node("Mul", "/h.0/mlp/act/Mul", [f, g])
    g = b.node("Mul", "/h.0/mlp/act/Mul_1", [g, b.const("half", np.array(0.5, np.float32))])
    f = linear(b, "h.0/mlp", "c_proj", g, MLP, D)
    h = b.node("Add", "/h.0/Add_1", [h, f])

    h = layer_norm(b, "ln_f", h)
    head = b.weight("lm_head.weight", [D, VOCAB], scale=0.02)
    b.nodes.append(helper.make_node("MatMul", [h, head], ["logits"], name="/lm_head/MatMul"))
    return b.model(
        "tiny_transformer",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])],
        f"One GPT-2-like block (d={D}, {HEADS} heads, mlp {MLP}, vocab {VOCAB}, "
        f"seq <= {MAX_POS}) with decomposed LayerNorm and GELU.")


def unshaped_outputs(model, static):
    """Node outputs that shape inference gives no shape (or, if static, no fixed size)."""
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                            data_prop=True)
    infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    shaped = {vi.name for vi in infos if vi.type.tensor_type.HasField("shape") and
              (not static or all(d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim))}
    return [o for n in model.graph.node for o in n.output if o not in shaped]


def check(model, path, bind=None, range_derived=()):
    checker.check_model(model, full_check=True)
    unknown = unshaped_outputs(model, static=False)
    if unknown:
        raise SystemExit(f"{path}: no inferred shape for {unknown}")
    if bind:
        # With the symbolic dims bound (fxc --dim), every intermediate must be static, except
        # what hangs off Range: ONNX 1.12 cannot size a Range output (nor can it in torch's
        # exports of arange); the Adds that consume them are static again.
        bound = onnx.ModelProto()
        bound.CopyFrom(model)
        for i in bound.graph.input:
            for d in i.type.tensor_type.shape.dim:
                if d.dim_param in bind:
                    d.dim_value = bind[d.dim_param]
        for o in bound.graph.output:
            o.type.tensor_type.ClearField("shape")
        allowed = {o for n in model.graph.node if n.name in range_derived for o in n.output}
        unknown = [o for o in unshaped_outputs(bound, static=True) if o not in allowed]
        if unknown:
            raise SystemExit(f"{path}: with {bind}, no static shape for {unknown}")
    onnx.save(model, path)
    print(f"{path}: {len(model.graph.node)} nodes, {os.path.getsize(path)} bytes")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    check(make_tiny_cnn(), os.path.join(out, "tiny_cnn.onnx"))
    check(make_tiny_transformer(), os.path.join(out, "tiny_transformer.onnx"),
          bind={"batch": 2, "seq": 16},
          range_derived={"/Range", "/Unsqueeze", "/wpe/Gather", "/h.0/attn/Unsqueeze",
                         "/h.0/attn/Unsqueeze_1", "/h.0/attn/Greater", "/h.0/attn/Where"})


if __name__ == "__main__":
    main()
