#!/usr/bin/env python3
"""PyTorch + torchsde peer of the neural SDE benchmark (bench/cmd/sdebench).

Runs the neural SDE of sdebench in PyTorch (written for 1.13) with torchsde,
from the check file the Go command writes
(`sdebench -method reversible_heun -check FILE -save-only`):

    TORCHSDE=/tmp/torchsde python3 bench/torch_sde.py --threads 2 --iters 10 --warmup 2 FILE

TORCHSDE names a directory holding the torchsde package (torchsde/__init__.py),
e.g. a copy of the source of github.com/google-research/torchsde. torchsde
imports the small `trampoline` package (not in Debian) for its
BrownianInterval; where it is missing, a stand-in with the same contract
(generators that yield sub-generators and raise TailCall) is installed.

The model: drift f(t, y) = L3(tanh(L2(tanh(L1(y))))), diffusion
g(t, y) = sigmoid(Lg(y)) (nn.Linear layers holding the file's weights),
noise_type "diagonal"; y(0) = x, solved to t = 1 with dt = 1/steps; the loss
is nn.functional.mse_loss(y(1), target); Adam. The method's gradient:

    reversible_heun  sde_type "stratonovich", torchsde.sdeint_adjoint with
                     adjoint_method "adjoint_reversible_heun" (torchsde's
                     exact reversible backward)
    euler            sde_type "ito", torchsde.sdeint, backpropagated through

It

1. (unless --skip-check) checks, in float64 on the file's Brownian increments (a BaseBrownian
   that replays them), that the loss and every parameter's gradient equal
   the Go side's to --rtol (default 1e-9; max |torch - go| / max |go| per
   tensor); if not, it prints the discrepancy, times nothing and exits
   with status 1;
2. in float32, runs --warmup untimed and --iters timed training iterations
   (each with a new torchsde.BrownianInterval, as sdeint makes when bm is
   not given) and prints one JSON line with the Go command's fields
   (side "pytorch"; peak_rss_mb: VmHWM; base_rss_mb: VmHWM before the first
   iteration).

Threads: --threads N sets torch.set_num_threads(N) and OMP_NUM_THREADS=N;
--blas-threads K sets OPENBLAS_NUM_THREADS=K (default 1), as the other peers.
"""

import argparse
import json
import os
import statistics
import sys
import time
import types


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help="check file written by sdebench -check")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--blas-threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument("--check-only", action="store_true", help="run the check, time nothing")
    ap.add_argument("--skip-check", action="store_true",
                    help="time without the check (run it with --check-only first), so that the peak memory is the iterations'")
    a = ap.parse_args()
    if a.threads < 1 or a.blas_threads < 1 or a.iters < 1 or a.warmup < 1:
        ap.error("--threads, --blas-threads, --iters and --warmup must be at least 1")
    return a


ARGS = parse_args()
for _var, _n in (("OMP_NUM_THREADS", ARGS.threads), ("OPENBLAS_NUM_THREADS", ARGS.blas_threads)):
    os.environ[_var] = str(_n)


def _install_trampoline():
    try:
        import trampoline  # noqa: F401
        return
    except ImportError:
        pass
    mod = types.ModuleType("trampoline")

    class TailCall(Exception):
        def __init__(self, call):
            super().__init__()
            self.call = call

    def run(gen):
        stack, value = [gen], None
        while True:
            try:
                nxt = stack[-1].send(value)
            except StopIteration as stop:
                stack.pop()
                value = stop.value
                if not stack:
                    return value
                continue
            except TailCall as tail:
                stack[-1], value = tail.call, None
                continue
            stack.append(nxt)
            value = None

    mod.TailCall = TailCall
    mod.trampoline = run
    sys.modules["trampoline"] = mod


d = os.environ.get("TORCHSDE")
if not d or not os.path.isfile(os.path.join(d, "torchsde", "__init__.py")):
    sys.exit("torch_sde.py: set TORCHSDE to a directory holding the torchsde package (torchsde/__init__.py)")
sys.path.insert(0, d)
_install_trampoline()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchsde  # noqa: E402

torch.set_num_threads(ARGS.threads)
NAMES = ["f1.weight", "f1.bias", "f2.weight", "f2.bias", "f3.weight", "f3.bias", "g.weight", "g.bias"]


def vm(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return float(line.split()[1]) / 1024
    return -1.0


class NeuralSDE(nn.Module):
    noise_type = "diagonal"

    def __init__(self, cfg, params, dtype):
        super().__init__()
        self.sde_type = "stratonovich" if cfg["method"] == "reversible_heun" else "ito"
        d, w = cfg["dim"], cfg["width"]
        self.f1, self.f2, self.f3, self.g1 = nn.Linear(d, w), nn.Linear(w, w), nn.Linear(w, d), nn.Linear(d, d)
        self.to(torch.float64)  # before the copy: the weights are float64 in the file
        with torch.no_grad():
            for name, p in zip(NAMES, self.ordered()):
                p.copy_(torch.tensor(params[name], dtype=torch.float64).view_as(p))
        self.to(dtype)

    def ordered(self):
        return [self.f1.weight, self.f1.bias, self.f2.weight, self.f2.bias,
                self.f3.weight, self.f3.bias, self.g1.weight, self.g1.bias]

    def f(self, t, y):
        return self.f3(torch.tanh(self.f2(torch.tanh(self.f1(y)))))

    def g(self, t, y):
        return torch.sigmoid(self.g1(y))


class Replay(torchsde.BaseBrownian):
    """The increments of a grid of equal steps on [0, 1]."""

    __slots__ = ("_dW", "_n", "_shape")

    def __init__(self, dW, shape):
        self._dW = [torch.tensor(w, dtype=torch.float64).view(*shape) for w in dW]
        self._n = len(dW)
        self._shape = torch.Size(shape)

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        ta, tb = float(ta), float(tb)
        k = round(ta * self._n)
        if not 0 <= k < self._n or abs(ta - k / self._n) > 1e-12 or abs(tb - (k + 1) / self._n) > 1e-12:
            raise ValueError(f"[{ta}, {tb}] is not a step of the grid of {self._n}")
        return self._dW[k]

    def __repr__(self):
        return f"Replay({self._n} steps)"

    @property
    def dtype(self):
        return torch.float64

    @property
    def device(self):
        return torch.device("cpu")

    @property
    def shape(self):
        return self._shape

    @property
    def levy_area_approximation(self):
        return "none"


def solve(sde, x, cfg, bm):
    ts = torch.tensor([0.0, 1.0], dtype=x.dtype)
    dt = 1.0 / cfg["steps"]
    if cfg["method"] == "reversible_heun":
        return torchsde.sdeint_adjoint(sde, x, ts, bm=bm, method="reversible_heun",
                                       adjoint_method="adjoint_reversible_heun", dt=dt)
    return torchsde.sdeint(sde, x, ts, bm=bm, method="euler", dt=dt)


def tensors(cfg, dtype):
    shape = (cfg["batch"], cfg["dim"])
    return (torch.tensor(cfg["x"], dtype=dtype).view(*shape), torch.tensor(cfg["target"], dtype=dtype).view(*shape))


def check(cfg):
    sde = NeuralSDE(cfg, cfg["params"], torch.float64)
    x, target = tensors(cfg, torch.float64)
    ys = solve(sde, x, cfg, Replay(cfg["dW"], (cfg["batch"], cfg["dim"])))
    loss = nn.functional.mse_loss(ys[-1], target)
    loss.backward()
    out = {"config": cfg["method"], "check_loss": loss.item(), "check_loss_go": cfg["loss"],
           "check_loss_rel_err": abs(loss.item() - cfg["loss"]) / abs(cfg["loss"]), "check_grad_rel_err": {}}
    for name, p in zip(NAMES, sde.ordered()):
        go = torch.tensor(cfg["grads"][name], dtype=torch.float64).view_as(p)
        out["check_grad_rel_err"][name] = ((p.grad - go).abs().max() / go.abs().max()).item()
    worst = max([out["check_loss_rel_err"]] + list(out["check_grad_rel_err"].values()))
    out["check_ok"] = worst <= ARGS.rtol
    return out


def main():
    with open(ARGS.file) as fh:
        cfg = json.load(fh)
    if cfg.get("format") != "adamnode-sde/1":
        sys.exit(f"torch_sde.py: {ARGS.file}: format {cfg.get('format')!r}, want 'adamnode-sde/1'")
    c = {} if ARGS.skip_check else check(cfg)
    if c and not c["check_ok"]:
        print(json.dumps(c), file=sys.stderr)
        sys.exit("torch_sde.py: the check failed: PyTorch's loss or gradients differ from Go's")
    if ARGS.check_only:
        print(json.dumps(c))
        return
    sde = NeuralSDE(cfg, cfg["params"], torch.float32)
    x, target = tensors(cfg, torch.float32)
    opt = torch.optim.Adam(sde.parameters(), lr=cfg["lr"])

    def step():
        opt.zero_grad()
        start = time.perf_counter()
        ys = solve(sde, x, cfg, None)
        loss = nn.functional.mse_loss(ys[-1], target)
        fwd = time.perf_counter() - start
        loss.backward()
        opt.step()
        return loss.item(), fwd

    r = {"config": f"sde_{cfg['method']}_b{cfg['batch']}_d{cfg['dim']}_w{cfg['width']}_n{cfg['steps']}",
         "side": "pytorch", "method": cfg["method"],
         "grad_mode": "adjoint_reversible_heun" if cfg["method"] == "reversible_heun" else "backprop",
         "iters": ARGS.iters, "warmup": ARGS.warmup, "threads": ARGS.threads, "blas_threads": ARGS.blas_threads,
         "torch": torch.__version__, "batch": cfg["batch"], "dim": cfg["dim"], "width": cfg["width"],
         "steps": cfg["steps"]}
    r["base_rss_mb"] = vm("VmHWM")
    for i in range(ARGS.warmup):
        loss, _ = step()
        if i == 0:
            r["loss_first"] = loss
    secs, fwds = [], []
    for _ in range(ARGS.iters):
        start = time.perf_counter()
        loss, fwd = step()
        secs.append(time.perf_counter() - start)
        fwds.append(fwd)
    r["loss_last"] = loss
    r["iter_seconds"] = statistics.median(secs)
    r["fwd_seconds"] = statistics.median(fwds)
    r["peak_rss_mb"] = vm("VmHWM")
    r.update(c)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
