#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the GPU step's whole models to ONNX at a fixed batch (static shapes, random
weights, nothing downloaded): ResNet-50, ViT-B/16 and the GPT-2-small-like decoder of
bench/export_models.py, whose builders and weight preparation it reuses.

    python3 bench/gpu/export_gpu_models.py --out DIR [--batch 8] [--seq 128] [--only NAME ...]

Writes DIR/<name>_b<batch>.onnx (skipped when present) and prints one JSON line per
model: name, file, input name and shape."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import export_models as em  # noqa: E402
import torch  # noqa: E402

MODELS = ["resnet50", "vit_b_16", "gpt2_small"]


def make(name, batch, seq):
    model, example, input_name = em.MODELS[name]["make"]()
    if example.dtype.is_floating_point:
        example = torch.randn(batch, *example.shape[1:])
    else:
        example = torch.randint(0, 50257, (batch, seq))
    return model, example, input_name


def export(name, batch, seq, path):
    torch.manual_seed(0)
    model, example, input_name = make(name, batch, seq)
    em.no_zero_layers(model)
    if example.dtype.is_floating_point:
        em.realistic_norms(model, example)
    model.eval()
    tmp = path + ".tmp"
    try:
        torch.onnx.export(model, (example,), tmp, opset_version=em.OPSET,
                          input_names=[input_name], output_names=["output"])
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return input_name, list(example.shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--only", nargs="*", default=MODELS)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name in a.only:
        path = os.path.join(a.out, f"{name}_b{a.batch}.onnx")
        if os.path.exists(path):
            print(json.dumps({"name": name, "file": path, "cached": True}), flush=True)
            continue
        input_name, shape = export(name, a.batch, a.seq, path)
        print(json.dumps({"name": name, "file": path, "input": input_name, "shape": shape}),
              flush=True)


if __name__ == "__main__":
    main()
