"""examples/neuralcde in PyTorch: torchcde's time-series classification
example (clockwise vs anticlockwise irregularly sampled 2-D spirals) with
the same data (drawn alike, not the same draws), model, sizes and
training as the Go program.

torchcde is not installed here, so its two pieces the example uses are
written out by hand: the natural cubic spline (natural_cubic_coeffs and
NaturalCubicSpline, `spline` below) and cdeint's vector field
z' = f(z)·X'(t) (`CDEFunc`), solved with torchdiffeq's odeint (dopri5,
rtol = atol = 1e-3, backprop through the solver: torchdiffeq's
odeint_adjoint, torchcde's default, solves the state backwards, which the
Go program finds drifting on this problem; Go's default, the adjoint
along the forward solution, has no torchdiffeq counterpart).

    PYTHONPATH=/path/to/torchdiffeq python3 bench/neuralcde_torch.py --iters 5

With --weights FILE (written by `go test ./examples/neuralcde -run TestPeer
-weights FILE`) it trains nothing: it loads Go's weights (float64) and
fixed batch, checks one forward and backward pass against Go's backprop
pass (loss, NFE and every gradient; exit status 1 if they differ: the
check's odeint gets the end time as step_t, for torchdiffeq's dopri5 steps
past the end and interpolates back to it, where Go's last step is cut
short to land on it, which at rtol 1e-3 changes the loss by 1e-4), then,
with --time N, runs --warmup and N timed training iterations on that batch
(forward, loss, backward, Adam step) and prints one JSON line: the median
seconds per iteration, the mean forward NFE, the peak RSS (VmHWM), as the
Go side's (bench/compare_seq.sh runs both).

    PYTHONPATH=/path/to/torchdiffeq python3 bench/neuralcde_torch.py --threads 1 --weights FILE --time 20

For the line-count comparison with examples/neuralcde/main.go
(bench/count_lines.py): the model and its training loop (CDEFunc, Model,
train, accuracy) are the lines between the "lines:" markers; the
hand-written spline, which torchcde would supply, is not counted.
The default run reaches 100% test accuracy (train loss 0.0006); it took
51 s on 2 cores (torch 1.13, float64) with other work running: not a
timing comparison.
"""
import argparse
import json
import math
import statistics
import struct
import sys
import time

import torch
from torchdiffeq import odeint

CHANNELS = 3  # t, x, y


def spirals(gen, n, p, noise):
    """n spirals (t·cos(±4πt + φ), t·sin(±4πt + φ)) at p sorted uniform
    times in [0, 1] each, with channels [t, x, y]; label 1 anticlockwise."""
    labels = torch.randint(0, 2, (n,), generator=gen)
    t = torch.rand(n, p, generator=gen, dtype=torch.float64).sort(dim=1).values
    phase = 2 * math.pi * torch.rand(n, 1, generator=gen, dtype=torch.float64)
    a = (2 * labels - 1).unsqueeze(1) * 4 * math.pi * t + phase
    x = t * torch.cos(a) + noise * torch.randn(n, p, generator=gen, dtype=torch.float64)
    y = t * torch.sin(a) + noise * torch.randn(n, p, generator=gen, dtype=torch.float64)
    return torch.stack([t, x, y], dim=2), labels


def spline(knots, obs):
    """Natural cubic spline of obs [B, n, C] at knots [n]: returns X'(t)."""
    n, h = len(knots), knots[1:] - knots[:-1]
    delta = (obs[:, 1:] - obs[:, :-1]) / h[None, :, None]
    a = torch.diag(2 * (h[:-1] + h[1:])) + torch.diag(h[1:-1], 1) + torch.diag(h[1:-1], -1)
    r = 6 * (delta[:, 1:] - delta[:, :-1])
    zero = obs.new_zeros(obs.shape[0], 1, obs.shape[2])
    m = torch.cat([zero, torch.linalg.solve(a, r), zero], dim=1)
    b = delta - h[None, :, None] * (2 * m[:, :-1] + m[:, 1:]) / 6
    c = m[:, :-1] / 2
    d = (m[:, 1:] - m[:, :-1]) / (6 * h[None, :, None])

    def derivative(t):
        i = int(torch.clamp(torch.searchsorted(knots, t.detach().reshape(1), right=True) - 1, 0, n - 2))
        s = t - knots[i]
        return b[:, i] + 2 * c[:, i] * s + 3 * d[:, i] * s * s

    return derivative


# lines: begin
class CDEFunc(torch.nn.Module):
    def __init__(self, hidden, width):
        super().__init__()
        self.hidden = hidden
        self.net = torch.nn.Sequential(torch.nn.Linear(hidden, width), torch.nn.ReLU(),
                                       torch.nn.Linear(width, hidden * CHANNELS), torch.nn.Tanh())
        self.dX = None

    def forward(self, t, z):
        f = self.net(z).view(z.shape[0], self.hidden, CHANNELS)
        return (f @ self.dX(t).unsqueeze(-1)).squeeze(-1)


class Model(torch.nn.Module):
    def __init__(self, hidden, width):
        super().__init__()
        self.initial = torch.nn.Linear(CHANNELS, hidden)
        self.func = CDEFunc(hidden, width)
        self.readout = torch.nn.Linear(hidden, 2)

    def forward(self, knots, obs, tol):
        self.func.dX = spline(knots, obs)
        z0 = self.initial(obs[:, 0])  # X(t_0): the spline interpolates
        zT = odeint(self.func, z0, knots[[0, -1]], rtol=tol, atol=tol, method="dopri5")[-1]
        return self.readout(zT)


def train(args, model, knots, obs, labels, gen):
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    perm, losses, start = torch.empty(0, dtype=torch.long), [], time.time()
    for it in range(1, args.iters + 1):
        if len(perm) < args.batch:
            perm = torch.randperm(len(labels), generator=gen)
        idx, perm = perm[:args.batch], perm[args.batch:]
        loss = torch.nn.functional.cross_entropy(model(knots, obs[idx], args.tol), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if it % 20 == 0 or it == 1 or args.iters < 20:
            print(f"iter {it:3d}  loss {loss.item():.4f}  {time.time() - start:4.1f}s", flush=True)
    return losses


@torch.no_grad()
def accuracy(model, knots, obs, labels, tol):
    return (model(knots, obs, tol).argmax(dim=1) == labels).double().mean().item()
# lines: end


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", type=int, default=256)
    p.add_argument("--test", type=int, default=256)
    p.add_argument("--points", type=int, default=64)
    p.add_argument("--noise", type=float, default=0.1)
    p.add_argument("--hidden", type=int, default=8)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--iters", type=int, default=240)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--weights", help="peer mode: the weights file of examples/neuralcde TestPeer -weights")
    p.add_argument("--time", type=int, default=0, help="peer mode: timed iterations (0: the check only)")
    p.add_argument("--warmup", type=int, default=2, help="peer mode: untimed iterations before them")
    p.add_argument("--loss-rtol", type=float, default=1e-9, help="peer mode: limit of the check on the loss (relative)")
    p.add_argument("--grad-rtol", type=float, default=1e-7, help="peer mode: on each gradient (max abs error / max abs)")
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.set_default_dtype(torch.float64)
    if args.weights:
        peer(args)
        return
    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)
    xtr, ytr = spirals(gen, args.train, args.points, args.noise)
    xte, yte = spirals(gen, args.test, args.points, args.noise)
    knots = torch.linspace(0, 1, args.points)
    model = Model(args.hidden, args.width)
    untrained, start = accuracy(model, knots, xte, yte, args.tol), time.time()
    train(args, model, knots, xtr, ytr, gen)
    print(f"trained in {time.time() - start:.1f}s; test accuracy {100 * accuracy(model, knots, xte, yte, args.tol):.1f}%"
          f" (untrained {100 * untrained:.1f}%)")


def read_safetensors(path):
    """The tensors (as float64 torch tensors) and the metadata of a
    safetensors file of F64 and F32 tensors (no safetensors module here):
    an 8-byte little-endian header length n, n bytes of JSON header, then
    the data, each tensor at its data_offsets."""
    with open(path, "rb") as fh:
        buf = fh.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header, data = json.loads(buf[8:8 + n]), buf[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    dtypes = {"F64": torch.float64, "F32": torch.float32}
    tensors = {k: torch.frombuffer(bytearray(data[e["data_offsets"][0]:e["data_offsets"][1]]), dtype=dtypes[e["dtype"]])
               .reshape(e["shape"]).double() for k, e in header.items()}
    return tensors, meta


def peer(args):
    """The --weights mode: check one pass against Go's, then time."""
    global odeint
    plain = odeint
    # The check: Model.forward's odeint with the end time as step_t, Go's steps.
    odeint = lambda f, z0, ts, **kw: plain(f, z0, ts, options=dict(step_t=ts), **kw)  # noqa: E731
    w, meta = read_safetensors(args.weights)
    cfg = json.loads(meta["config"])
    args.tol, args.lr = cfg["tol"], cfg["lr"]
    model = Model(cfg["hidden"], cfg["width"])
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.shape != w[n].shape:
                sys.exit(f"neuralcde_torch.py: {n}: {tuple(w[n].shape)} in the file, {tuple(p.shape)} here")
            p.copy_(w[n])
    nfe = [0]
    model.func.register_forward_hook(lambda *_: nfe.__setitem__(0, nfe[0] + 1))
    knots, obs, labels = w["knots"], w["obs"], w["labels"].long()
    loss = torch.nn.functional.cross_entropy(model(knots, obs, args.tol), labels)
    fwd = nfe[0]
    loss.backward()
    go_loss, go_nfe = float(meta["check.loss"]), int(meta["check.fwd_nfe"])
    errs = {n: ((p.grad - w["check.grad." + n]).abs().max() / w["check.grad." + n].abs().max()).item()
            for n, p in model.named_parameters()}
    check = {"check_loss": loss.item(), "check_loss_go": go_loss, "check_loss_rel_err": abs(loss.item() - go_loss) / abs(go_loss),
             "check_fwd_nfe": fwd, "check_fwd_nfe_go": go_nfe, "check_grad_rel_err_max": max(errs.values()),
             "check_grad_worst": max(errs, key=errs.get)}
    if fwd != go_nfe or check["check_loss_rel_err"] > args.loss_rtol or check["check_grad_rel_err_max"] > args.grad_rtol:
        print(json.dumps(check), file=sys.stderr)
        sys.exit(f"neuralcde_torch.py: the pass differs from Go's (NFE {fwd} vs {go_nfe}, loss rel err "
                 f"{check['check_loss_rel_err']:.1e} > {args.loss_rtol:g} or gradients {check['check_grad_rel_err_max']:.1e} > {args.grad_rtol:g})")
    if args.time <= 0:
        print(json.dumps(check))
        return
    odeint = plain  # the example's
    opt, secs, losses, nfes = torch.optim.Adam(model.parameters(), lr=args.lr), [], [], 0
    for i in range(args.warmup + args.time):
        start, nfe[0] = time.perf_counter(), 0
        loss = torch.nn.functional.cross_entropy(model(knots, obs, args.tol), labels)
        fwd = nfe[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if i >= args.warmup:
            secs.append(time.perf_counter() - start)
            nfes += fwd
    rss = next(float(line.split()[1]) / 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(json.dumps({"side": "pytorch", "model": "neuralcde", "mode": "backprop", "iter_seconds": statistics.median(secs),
                      "fwd_nfe": nfes / args.time, "peak_rss_mb": rss, "threads": torch.get_num_threads(), "iters": args.time,
                      "warmup": args.warmup, "loss_first": losses[0], "loss_last": losses[-1], **check}))


if __name__ == "__main__":
    main()
