#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch eager and torch.compile on the GPU step's whole models (the modules
bench/gpu/export_gpu_models.py exports, same batch), float32 with TF32 off as in
fxc's CUDA executor (cuDNN FMA math, cuBLASLt COMPUTE_32F).

    python3 bench/gpu/torch_models.py --batch 8 [--seq 128] [--runs 20] [--only NAME ...]
           [--no-compile]

One JSON line per model and mode: {"name", "mode": "eager"|"compile", "median_ms",
"min_ms", "compile_s"}; or {"name", "mode", "error"}. Times: CUDA events around the
forward pass, median over --runs after 3 warm-up runs. Exits 3 when torch or CUDA is
missing."""
import argparse
import json
import os
import sys
import time

try:
    import torch
except ImportError:
    print(json.dumps({"skipped": "python3 has no torch"}))
    sys.exit(3)
if not torch.cuda.is_available():
    print(json.dumps({"skipped": "torch sees no CUDA device"}))
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_gpu_models as eg  # noqa: E402

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True


def time_forward(f, x, runs):
    with torch.no_grad():
        for _ in range(3):
            f(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            f(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], times[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=eg.MODELS)
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()
    for name in a.only:
        torch.manual_seed(0)
        model, example, _ = eg.make(name, a.batch, a.seq)
        model = model.cuda().eval()
        x = example.cuda()
        modes = ["eager"] if a.no_compile else ["eager", "compile"]
        for mode in modes:
            row = {"name": name, "mode": mode, "device": torch.cuda.get_device_name(0),
                   "torch": torch.__version__}
            try:
                f = model
                t0 = time.time()
                if mode == "compile":
                    f = torch.compile(model)
                    with torch.no_grad():
                        f(x)
                    torch.cuda.synchronize()
                row["compile_s"] = round(time.time() - t0, 1)
                row["median_ms"], row["min_ms"] = time_forward(f, x, a.runs)
            except Exception as e:  # report and go on with the next model
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
