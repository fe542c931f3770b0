#!/usr/bin/env python3
"""PyTorch's elementwise maps, timed as tensor.BenchmarkMap times
adamnode's: a [512, 64] input drawn uniformly from the same range, written
into a preallocated output (out=), one thread, ns per element, in float32
or (--dtype float64) float64.

    /usr/bin/python3 bench/torch_maps.py [--threads 1] [--repeat 5] [--dtype float32]

Prints one line per map: the median over --repeat runs of the time per
element, each run the mean of enough calls to take about 0.2 s. The Python
call costs about a microsecond a call, 0.03 ns per element at this size;
--shape 4096,1024 makes it negligible.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

MAPS = [
    # name, low, high, f(x, out)
    ("Exp", -10, 10, lambda x, out: torch.exp(x, out=out)),
    ("Tanh", -5, 5, lambda x, out: torch.tanh(x, out=out)),
    ("Sigmoid", -10, 10, lambda x, out: torch.sigmoid(x, out=out)),
    ("Softplus", -10, 10, lambda x, out: torch._C._nn.softplus(x, 1, 20, out=out)),
    ("Log", 1e-3, 100, lambda x, out: torch.log(x, out=out)),
    ("Sqrt", 0, 100, lambda x, out: torch.sqrt(x, out=out)),
    ("ReLU", -1, 1, lambda x, out: torch.clamp_min(x, 0, out=out)),
]


def time_map(f, x, out):
    f(x, out)
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            f(x, out)
        dt = time.perf_counter() - t0
        if dt > 0.2:
            return dt / n
        n *= 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shape", default="512,64", help="rows,cols of the input (default 512,64)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows, cols = (int(s) for s in args.shape.split(","))
    gen = torch.Generator().manual_seed(3)
    dtype = getattr(torch, args.dtype)
    print("torch %s, %d thread(s), %s [%d, %d], CPU capability %s" % (
        torch.__version__, args.threads, args.dtype, rows, cols, torch.backends.cpu.get_cpu_capability()
        if hasattr(torch.backends, "cpu") else "?"))
    for name, lo, hi, f in MAPS:
        x = torch.rand(rows, cols, generator=gen, dtype=dtype) * (hi - lo) + lo
        out = torch.empty_like(x)
        ref = {"Softplus": F.softplus(x), "ReLU": F.relu(x)}.get(name)
        f(x, out)
        if ref is not None and not torch.allclose(out, ref):
            raise SystemExit("torch_maps.py: %s's out= form differs from its functional form" % name)
        ts = [time_map(f, x, out) for _ in range(args.repeat)]
        print("%-9s %.3f ns per element (runs %s)" % (
            name, statistics.median(ts) / x.numel() * 1e9,
            " ".join("%.3f" % (t / x.numel() * 1e9) for t in ts)))


if __name__ == "__main__":
    main()
