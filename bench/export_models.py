#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the benchmark models to ONNX with random weights (nothing is downloaded).

Run with Debian's interpreter, which has torch 1.13 and torchvision 0.14:
    /usr/bin/python3 bench/export_models.py [--out bench/cache] [--only NAME ...] [--force]

Each model is written once to OUT/<name>.onnx and skipped when it is already there.
OUT/models.json lists every model with its inputs, so the benchmark steps know which
dims to bind and what to feed. Batch size 1; images 224x224; GPT-2 at sequence 128.
"""

import argparse
import json
import math
import os
import sys
import time

import onnx
import torch
import torch.nn as nn
import torchvision

# Opset 14: LayerNorm and GELU export decomposed (ReduceMean/Sub/Pow/.../Erf), the form
# most deployed exports have and the one fusion passes must recognize.
OPSET = 14


# ----------------------------------------------------------------- GPT-2-small-like
class Gpt2Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.d, self.heads = d, heads
        self.c_attn = nn.Linear(d, 3 * d)  # fused QKV projection, as in GPT-2
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, _ = x.shape
        # Python ints for the split and head sizes: taken from x.shape they would export
        # as Shape->Div->Slice chains that ONNX 1.12 shape inference cannot follow.
        q, k, v = self.c_attn(x).split(self.d, dim=2)
        hd = self.d // self.heads
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        # Causal mask from positions (key <= query) rather than a sliced [1024, 1024]
        # buffer, for the same reason.
        pos = torch.arange(t, device=x.device)
        causal = pos.unsqueeze(0) <= pos.unsqueeze(1)
        w = torch.where(causal, w, torch.tensor(-1e4, dtype=w.dtype))
        w = torch.softmax(w, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, t, self.d)
        return self.c_proj(o)


def gelu_new(x):
    """GPT-2's tanh GELU, written out as HF transformers does."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


class Gpt2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Gpt2Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp_proj(gelu_new(self.mlp_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    def __init__(self, vocab=50257, d=768, layers=12, heads=12, max_pos=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(max_pos, d)
        self.h = nn.ModuleList([Gpt2Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        pos = torch.arange(t, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        # LM head tied to the token embedding, as in GPT-2.
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


# ----------------------------------------------------------------- model table
def image_model(ctor, **kw):
    return lambda: (ctor(weights=None, **kw), torch.randn(1, 3, 224, 224), "input")


MODELS = {
    # ResNet-18 keeps its BatchNormalization nodes (TrainingMode.PRESERVE, no folding).
    "resnet18": dict(make=image_model(torchvision.models.resnet18), keep_bn=True),
    "resnet50": dict(make=image_model(torchvision.models.resnet50)),
    "mobilenet_v2": dict(make=image_model(torchvision.models.mobilenet_v2)),
    "efficientnet_b0": dict(make=image_model(torchvision.models.efficientnet_b0)),
    "vit_b_16": dict(make=image_model(torchvision.models.vit_b_16)),
    "convnext_tiny": dict(make=image_model(torchvision.models.convnext_tiny)),
    "gpt2_small": dict(
        make=lambda: (Gpt2(), torch.randint(0, 50257, (1, 128)), "input_ids"),
        dynamic={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
        dims={"batch": 1, "seq": 128}, int_max=50257),
    # The same model with its weights in an external data file, as every model over 2 GB
    # must be: measures the loader's external-data path.
    "gpt2_small_extdata": dict(derive="gpt2_small", dims={"batch": 1, "seq": 128},
                               int_max=50257),
}


def save_external(src, path):
    m = onnx.load(src)
    data = os.path.basename(path) + ".data"
    if os.path.exists(os.path.join(os.path.dirname(path), data)):
        os.remove(os.path.join(os.path.dirname(path), data))
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location=data, size_threshold=1024)


def realistic_norms(model, example):
    """Gives normalization layers non-trivial parameters and statistics.

    Fresh layers have gamma=1, beta=0, mean=0, var=1: Conv+BN folding would be a no-op
    (and the exporter dedups the identical tensors behind Identity nodes). Random affine
    parameters plus running statistics measured on a few random batches make the numbers
    look like a trained model's and keep deep nets' activations in range.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in model.modules():
        if isinstance(m, (nn.LayerNorm, nn.modules.batchnorm._BatchNorm)) and m.weight is not None:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(2, *example.shape[1:]))


def no_zero_layers(model):
    """Re-initializes layers that start at zero (torchvision's ViT head): with them the
    model's output is identically 0 and no equivalence check can fail."""
    for m in model.modules():
        w = getattr(m, "weight", None)
        if isinstance(m, (nn.Linear, nn.Conv2d)) and w is not None and not w.any():
            with torch.no_grad():
                w.normal_(0.0, 0.02)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.02)


def export(name, spec, path):
    if spec.get("derive"):
        src = os.path.join(os.path.dirname(path), spec["derive"] + ".onnx")
        if not os.path.exists(src):
            export(spec["derive"], MODELS[spec["derive"]], src)
        return save_external(src, path)
    torch.manual_seed(0)
    model, example, input_name = spec["make"]()
    no_zero_layers(model)
    if example.dtype.is_floating_point:
        realistic_norms(model, example)
    model.eval()
    output_name = "logits" if name.startswith("gpt2") else "output"
    kwargs = dict(opset_version=OPSET, input_names=[input_name], output_names=[output_name],
                  dynamic_axes=spec.get("dynamic"))
    if spec.get("keep_bn"):
        kwargs.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    tmp = path + ".tmp"
    # Grad stays enabled on purpose: under no_grad nn.MultiheadAttention (ViT) takes its
    # fused fast path, aten::_native_multi_head_attention, which has no ONNX export.
    try:
        torch.onnx.export(model, (example,), tmp, **kwargs)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def describe(name, spec, path):
    # Reading the header only (no external data) is enough for inputs and op counts.
    m = onnx.load(path, load_external_data=False)
    init = {t.name for t in m.graph.initializer}
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    inputs = []
    for i in m.graph.input:
        if i.name in init:
            continue
        tt = i.type.tensor_type
        inputs.append(dict(name=i.name, dtype=onnx.TensorProto.DataType.Name(tt.elem_type),
                           shape=[d.dim_param or d.dim_value for d in tt.shape.dim]))
    data = path + ".data"
    size = os.path.getsize(path) + (os.path.getsize(data) if os.path.exists(data) else 0)
    return dict(name=name, file=os.path.basename(path), bytes=size,
                nodes=len(m.graph.node), ops=ops, inputs=inputs, dims=spec.get("dims", {}),
                int_max=spec.get("int_max", 100))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "cache"))
    ap.add_argument("--only", nargs="*", help="export only these models")
    ap.add_argument("--force", action="store_true", help="re-export models already cached")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))

    manifest = []
    for name, spec in MODELS.items():
        path = os.path.join(args.out, name + ".onnx")
        wanted = not args.only or name in args.only
        if wanted and (args.force or not os.path.exists(path)):
            t0 = time.time()
            export(name, spec, path)
            print(f"exported {name} in {time.time() - t0:.1f} s", flush=True)
        if not os.path.exists(path):
            continue
        info = describe(name, spec, path)
        if spec.get("keep_bn") and not info["ops"].get("BatchNormalization"):
            sys.exit(f"{path}: BatchNormalization nodes were folded away; export is wrong")
        manifest.append(info)
        print(f"{name:<16} {info['bytes'] / 2**20:8.1f} MiB {info['nodes']:6d} nodes  "
              f"BN={info['ops'].get('BatchNormalization', 0)}", flush=True)

    # The manifest lists every model present in the cache, exported now or before.
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
