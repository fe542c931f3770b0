#!/usr/bin/python3
"""The PyTorch 1.13 + torchdiffeq peer of bench/cmd/mnistbench.

It loads the weights file mnistbench -out wrote (the paper's MNIST AdamNODE,
see package bench/mnistnode), checks that its loss at those weights equals
the Go side's, then times training iterations (forward, backward, an Adam
step at torch's defaults) and prints one JSON line with the same fields as
mnistbench.

    TORCHDIFFEQ=/path/to/torchdiffeq-source \
        /usr/bin/python3 bench/torch_mnist.py --weights mnist.safetensors --threads 2

The batch (images and labels) is the one in the weights file, which
mnistbench -batch N -out wrote from its -seed: --batch N (default 32) says
which size is meant and stops with an error when the file holds another, so
a batch-256 timing cannot run on a batch-32 file.

TORCHDIFFEQ is a directory holding the torchdiffeq package (its source
tree); torchdiffeq is not packaged by Debian. --mode adjoint uses
odeint_adjoint, --mode backprop odeint. --device cuda (or cuda:N) puts the
model, the batch and the solve's times on that GPU; each iteration then ends
with torch.cuda.synchronize() before its clock stops, and the JSON line adds
torch.cuda.max_memory_allocated in MB (device_peak_mb) and
torch.cuda.max_memory_reserved (device_pool_peak_mb), over the whole run.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import import_torchdiffeq, read_safetensors  # noqa: E402


class Field(nn.Module):
    """f(h, t): the convolutions of [x, t], t the last channel."""

    def __init__(self, c=5, nhid=50):
        super().__init__()
        self.convs = nn.ModuleDict({
            "1": nn.Conv2d(c + 1, nhid, 1),
            "2": nn.Conv2d(nhid + 1, nhid, 3, padding=1),
            "3": nn.Conv2d(nhid + 1, c, 1),
        })

    def forward(self, t, h):
        tt = torch.ones_like(h[:, :1]) * t
        z = F.relu(self.convs["1"](torch.cat([h, tt], 1)))
        tt = torch.ones_like(z[:, :1]) * t
        z = F.relu(self.convs["2"](torch.cat([z, tt], 1)))
        return self.convs["3"](torch.cat([z, tt], 1))


class AdamODE(nn.Module):
    """h' = -m/(sqrt(softplus(v)) + 1e-8), m' = sigmoid(r1)(-f - m),
    v' = sigmoid(r2)(f^2 - v); the state is (h, m, v) stacked along the
    batch axis, as in adamnode."""

    def __init__(self, f):
        super().__init__()
        self.f = f
        self.r1 = nn.Parameter(torch.tensor([-5.0]))
        self.r2 = nn.Parameter(torch.tensor([5.0]))
        self.nfe = 0

    def forward(self, t, z):
        self.nfe += 1
        h, m, v = z.chunk(3, dim=0)
        g = self.f(t, h)
        s = torch.sqrt(F.softplus(v)) + 1e-8
        dh = -m / s
        dm = torch.sigmoid(self.r1) * (-g - m)
        dv = torch.sigmoid(self.r2) * (g * g - v)
        return torch.cat([dh, dm, dv], 0)


class Model(nn.Module):
    def __init__(self, odeint, c=5, nhid=50):
        super().__init__()
        self.c = c
        self.odeint = odeint
        self.init = nn.Sequential(
            nn.Conv2d(1, nhid, 1), nn.LeakyReLU(0.3),
            nn.Conv2d(nhid, nhid, 3, padding=1), nn.LeakyReLU(0.3),
            nn.Conv2d(nhid, 2 * c - 1, 1))
        self.dyn = AdamODE(Field(c, nhid))
        self.head = nn.Linear(c * 28 * 28, 10)
        self.times = torch.tensor([0.0, 1.0])

    def named_go(self):
        """The parameters under the names the weights file uses."""
        out = {}
        for i in (0, 2, 4):
            out["init.%d.weight" % i] = self.init[i].weight
            out["init.%d.bias" % i] = self.init[i].bias
        for k in ("1", "2", "3"):
            out["f.%s.weight" % k] = self.dyn.f.convs[k].weight
            out["f.%s.bias" % k] = self.dyn.f.convs[k].bias
        out["head.weight"] = self.head.weight
        out["head.bias"] = self.head.bias
        out["r1"] = self.dyn.r1
        out["r2"] = self.dyn.r2
        return out

    def forward(self, x):
        z = torch.cat([x, self.init(x)], 1)
        h0, m0 = z[:, :self.c], z[:, self.c:]
        z0 = torch.cat([h0, m0, m0 * m0], 0)
        zt = self.odeint(self.dyn, z0, self.times, rtol=1e-4, atol=1e-4, method="dopri5")[-1]
        h = zt.chunk(3, dim=0)[0]
        return self.head(h.flatten(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mode", choices=["adjoint", "backprop"], default="adjoint")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda / cuda:N")
    ap.add_argument("--batch", type=int, default=32,
                    help="images in the batch: the weights file must hold a batch of this size (mnistbench -batch N -out)")
    a = ap.parse_args()
    if a.iters < 1 or a.warmup < 1 or a.threads < 1 or a.batch < 1:
        sys.exit("torch_mnist.py: --iters, --warmup, --threads and --batch must be at least 1")
    torch.set_num_threads(a.threads)
    tde = import_torchdiffeq("torch_mnist.py")
    odeint = tde.odeint_adjoint if a.mode == "adjoint" else tde.odeint

    tensors, meta = read_safetensors(a.weights)
    if meta.get("format") != "adamnode-mnistnode/1":
        sys.exit("torch_mnist.py: %s is not a weights file of mnistbench (format %r)" % (a.weights, meta.get("format")))
    model = Model(odeint)
    with torch.no_grad():
        for name, p in model.named_go().items():
            if name not in tensors:
                sys.exit("torch_mnist.py: %s has no tensor %r" % (a.weights, name))
            t = tensors[name]
            if tuple(t.shape) != tuple(p.shape):
                sys.exit("torch_mnist.py: %s: %r has shape %s, the model's is %s" % (a.weights, name, tuple(t.shape), tuple(p.shape)))
            p.copy_(t)
    dev = torch.device(a.device)
    model.times = model.times.to(dev)
    model.to(dev)
    x = tensors["input"]
    labels = torch.tensor(json.loads(meta["labels"]), dtype=torch.long)
    if x.shape[0] != a.batch or labels.shape[0] != a.batch:
        sys.exit("torch_mnist.py: %s holds a batch of %d images and %d labels, not --batch %d: "
                 "write it with mnistbench -batch %d -out FILE" % (a.weights, x.shape[0], labels.shape[0], a.batch, a.batch))
    x, labels = x.to(dev), labels.to(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    # The loss at the file's weights must be the Go side's.
    with torch.no_grad():
        model.dyn.nfe = 0
        loss0 = F.cross_entropy(model(x), labels).item()
    want = float(meta["check.loss"])
    if abs(loss0 - want) > 1e-3 * abs(want):
        sys.exit("torch_mnist.py: the loss at the file's weights is %.7g, the Go side's %.7g: "
                 "the models differ; not timing" % (loss0, want))

    opt = torch.optim.Adam(model.parameters())
    secs, fwd, bwd = [], [], []
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        opt.zero_grad()
        model.dyn.nfe = 0
        loss = F.cross_entropy(model(x), labels)
        nf = model.dyn.nfe
        loss.backward()
        nb = model.dyn.nfe - nf
        opt.step()
        sync()
        dt = time.perf_counter() - t0
        if i >= a.warmup:
            secs.append(dt)
            fwd.append(nf)
            bwd.append(nb)
    print(json.dumps({
        "side": "pytorch", "iter_seconds": statistics.median(secs),
        "fwd_nfe": statistics.mean(fwd), "bwd_nfe": statistics.mean(bwd),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loss_first": loss0, "iters": a.iters, "warmup": a.warmup,
        "threads": torch.get_num_threads(), "grad_mode": a.mode, "device": str(dev), "batch": a.batch,
        **({"device_peak_mb": torch.cuda.max_memory_allocated(dev) / 2**20,
            "device_pool_peak_mb": torch.cuda.max_memory_reserved(dev) / 2**20} if dev.type == "cuda" else {}),
    }))


if __name__ == "__main__":
    main()
