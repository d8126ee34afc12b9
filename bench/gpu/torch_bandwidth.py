#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch.compile on the shapes of bench/gpu/bandwidth.cu: stream copy, the chain
sigmoid(1.5 x + 0.25) * x, LayerNorm and Softmax over rows of 1024 floats.

    python3 bench/gpu/torch_bandwidth.py MIB RUNS

Prints the same columns as bandwidth.cu (median, fastest, GB/s with bytes = inputs
read once + outputs written once). Exits 3 when torch or CUDA is missing."""
import sys

try:
    import torch
except ImportError:
    print("skipped: python3 has no torch")
    sys.exit(3)
if not torch.cuda.is_available():
    print("skipped: torch sees no CUDA device")
    sys.exit(3)

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 256
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
n = int(mib * 1024 * 1024 / 4)
cols = 1024
rows = max(1, n // cols)
dev = "cuda"
x = torch.rand(n, device=dev) * 2 - 1
m = torch.rand(rows, cols, device=dev) * 2 - 1
w = torch.ones(cols, device=dev)
b = torch.zeros(cols, device=dev)


def copy(x):
    return x.clone()


def chain(x):
    return torch.sigmoid(x * 1.5 + 0.25) * x


def layernorm(m):
    return torch.nn.functional.layer_norm(m, (cols,), w, b, 1e-5)


def softmax(m):
    return torch.softmax(m, dim=-1)


def time_it(f, a):
    for _ in range(3):
        f(a)
    torch.cuda.synchronize()
    t = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f(a)
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e))
    t.sort()
    return t[len(t) // 2], t[0]


print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; torch.compile (default mode)")
for name, f, a in [("copy", copy, x), ("chain", chain, x), ("layernorm", layernorm, m),
                   ("softmax", softmax, m)]:
    cf = torch.compile(f)
    med, fastest = time_it(cf, a)
    bw = 2.0 * a.numel() * 4 / (med * 1e6)
    print(f"torch.compile {name:<10} median {med:8.3f} ms (fastest {fastest:8.3f})  {bw:7.1f} GB/s")
