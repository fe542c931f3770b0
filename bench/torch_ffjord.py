#!/usr/bin/env python3
"""PyTorch + torchdiffeq peer of the FFJORD benchmark (bench/cmd/ffjordbench).

Runs FFJORD's 2-D toy flow in PyTorch (written for 1.13) with torchdiffeq,
from the weights file the Go command writes
(`ffjordbench -trace exact -weights FILE -save-only`):

    TORCHDIFFEQ=/tmp/torchdiffeq python3 bench/torch_ffjord.py \
        --threads 1 --iters 5 --warmup 1 FILE [...]

TORCHDIFFEQ names a directory holding the torchdiffeq package (see
bench/peer.py).

The model is FFJORD's (Grathwohl et al. 2019, github.com/rtqichen/ffjord)
toy flow written out: the field f(t, z) = L3([tanh(L2([tanh(L1([z, t])),
t])), t]) (nn.Linear layers, the time concatenated to every layer's input
as FFJORD's "concat" layers do), the state s = [z, Δ] of shape [B, 3] as
one tensor (as the Go side's odeblock.CNF; FFJORD passes the tuple (z, Δ),
which torchdiffeq's default norm would weigh differently), dΔ/dt = −tr(∂f/∂z)
computed as FFJORD's odefunc computes it: inside torch.set_grad_enabled(True),
with the state made to require a gradient, the exact trace by one
torch.autograd.grad(f[:, i].sum(), z, create_graph=True) per dimension
(divergence_bf), Hutchinson's by one autograd.grad(f, z, e,
create_graph=True) (divergence_approx) with a Rademacher probe e drawn
before each solve (FFJORD's before_odeint). The loss is −mean log p(x),
log p(x) = log N(z(1); 0, I) − Δ(1); gradients by
torchdiffeq.odeint_adjoint with method dopri5, rtol = atol from the file,
the adjoint's options torchdiffeq's defaults (adjoint_rtol/atol = rtol/atol,
the mixed norm over the state, its adjoint and each parameter's gradient);
Adam, lr from the file.

For each file it

1. rebuilds the problem (W1, b1, W2, b2, W3, b3, the data x, the reference
   probe, the configuration in the metadata "config");
2. checks that the augmented right-hand side at [x, 0], t = 0 and T1/2,
   equals the saved one (check.rhs0, check.rhs_mid) to 1e-5 relative
   (max |torch - go| <= 1e-5 * max |go|), that the loss of one forward and
   adjoint-backward pass (with the saved probe for Hutchinson) equals
   check.loss to 1e-4 relative, and that the gradients of the output
   layer's weight W3 equal check.grad.W3 to --grad-rtol relative (default
   1e-3: two adaptive adjoint solves at rtol 1e-5 agree about that well);
   every parameter's gradient error and both sides' NFE are reported. If a
   check fails it prints the discrepancy, times nothing and exits with
   status 1;
3. runs --warmup untimed and --iters timed training iterations (probe,
   forward solve, loss, backward, Adam step) and prints one JSON line with
   the fields of the Go command's (side "pytorch"; fwd_seconds: the median
   time of the forward solve and the loss), plus the checks'.

Threads: as bench/torch_mlp.py (--threads N: torch.set_num_threads(N),
OMP_NUM_THREADS=N; --blas-threads K: OPENBLAS_NUM_THREADS=K, default 1).

NFE: the forward NFE counts calls of the dynamics during the forward solve
(the first-step selection's included), the backward NFE the calls inside
torchdiffeq's augmented dynamics of the adjoint solve. Peak RSS: VmHWM of
/proc/self/status.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

FORMAT = "adamnode-ffjord/1"
RHS_RTOL = 1e-5
LOSS_RTOL = 1e-4


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="weights files written by ffjordbench")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads: torch.set_num_threads, OMP_NUM_THREADS (default 1)")
    ap.add_argument("--blas-threads", type=int, default=1, help="OpenBLAS threads: OPENBLAS_NUM_THREADS (default 1)")
    ap.add_argument("--iters", type=int, default=5, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=1, help="untimed iterations before them (at least 1)")
    ap.add_argument("--seed", type=int, default=1, help="torch.manual_seed for the training iterations' probes")
    ap.add_argument("--grad-rtol", type=float, default=1e-3, help="limit of the W3 gradient's relative error (default 1e-3)")
    ap.add_argument("--check-only", action="store_true", help="run the checks, time nothing")
    a = ap.parse_args()
    if a.threads < 1 or a.blas_threads < 1 or a.iters < 1 or a.warmup < 1:
        ap.error("--threads, --blas-threads, --iters and --warmup must be at least 1")
    return a


ARGS = parse_args()
# Before torch loads OpenMP and OpenBLAS.
for _var, _n, _flag in (("OMP_NUM_THREADS", ARGS.threads, "--threads"),
                        ("OPENBLAS_NUM_THREADS", ARGS.blas_threads, "--blas-threads")):
    if os.environ.get(_var, str(_n)) != str(_n):
        sys.exit(f"torch_ffjord.py: {_var}={os.environ[_var]} but {_flag} {_n}; unset it or make them equal")
    os.environ[_var] = str(_n)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from peer import import_torchdiffeq, read_safetensors  # noqa: E402

torchdiffeq = import_torchdiffeq("torch_ffjord.py")

PARAMS = ["W1", "b1", "W2", "b2", "W3", "b3"]


# ---------------------------------------------------------------- the model

def divergence_bf(f, z):
    """FFJORD's divergence_bf: one reverse pass per dimension."""
    sum_diag = 0.0
    for i in range(z.shape[1]):
        sum_diag += torch.autograd.grad(f[:, i].sum(), z, create_graph=True)[0].contiguous()[:, i].contiguous()
    return sum_diag.contiguous()


def divergence_approx(f, z, e):
    """FFJORD's divergence_approx: e^T (df/dz) e, one reverse pass."""
    e_dzdx = torch.autograd.grad(f, z, e, create_graph=True)[0]
    return (e_dzdx * e).view(z.shape[0], -1).sum(dim=1)


class Field(nn.Module):
    """f(t, z): Linear(D+1 -> W), tanh, Linear(W+1 -> W), tanh, Linear(W+1
    -> D), the time the last input column of every layer."""

    def __init__(self, tensors, cfg):
        super().__init__()
        w, d = cfg["width"], cfg["d"]
        self.l1, self.l2, self.l3 = nn.Linear(d + 1, w), nn.Linear(w + 1, w), nn.Linear(w + 1, d)
        with torch.no_grad():
            for lin, k in ((self.l1, "1"), (self.l2, "2"), (self.l3, "3")):
                wt, bt = tensors["W" + k], tensors["b" + k]
                if wt.shape != lin.weight.shape or bt.shape != lin.bias.shape:
                    raise ValueError(f"W{k} {tuple(wt.shape)}, b{k} {tuple(bt.shape)} do not fit {lin}")
                lin.weight.copy_(wt)
                lin.bias.copy_(bt)

    def forward(self, t, z):
        tt = torch.ones(z.shape[0], 1, dtype=z.dtype) * t.to(z.dtype)
        h = torch.tanh(self.l1(torch.cat([z, tt], 1)))
        h = torch.tanh(self.l2(torch.cat([h, tt], 1)))
        return self.l3(torch.cat([h, tt], 1))


class CNF(nn.Module):
    """The augmented dynamics [f(t, z), -tr(df/dz)] on s = [z, Δ] [B, D+1],
    as FFJORD's ODEfunc (counting its calls)."""

    def __init__(self, field, d, exact):
        super().__init__()
        self.field = field
        self.d = d
        self.exact = exact
        self.e = None  # Hutchinson's probe, set before each solve
        self.calls = 0

    def forward(self, t, s):
        self.calls += 1
        with torch.set_grad_enabled(True):
            if not s.requires_grad:  # the forward solve (no_grad): the state is data
                s = s.detach().requires_grad_(True)
            z = s[:, : self.d]
            f = self.field(t, z)
            div = divergence_bf(f, z) if self.exact else divergence_approx(f, z, self.e)
            return torch.cat([f, -div.view(-1, 1)], 1)


class Problem:
    def __init__(self, path):
        tensors, meta = read_safetensors(path)
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path}: format {meta.get('format')!r}, want {FORMAT!r}")
        self.path, self.meta, self.tensors = path, meta, tensors
        self.cfg = cfg = json.loads(meta["config"])
        self.d = cfg["d"]
        self.exact = cfg["trace"] == "exact"
        self.field = Field(tensors, cfg)
        self.func = CNF(self.field, self.d, self.exact)
        self.x = tensors["x"]
        self.probe = tensors["probe"]
        B = cfg["batch"]
        for name, v in (("x", self.x), ("probe", self.probe)):
            if tuple(v.shape) != (B, self.d):
                raise ValueError(f"{path}: {name} has shape {tuple(v.shape)}, want ({B}, {self.d})")
        self.s0 = torch.cat([self.x, torch.zeros(B, 1)], 1)
        self.t = torch.tensor([0.0, cfg["t1"]], dtype=torch.float32)
        self.opt = torch.optim.Adam(self.field.parameters(), lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8)
        self.solve_kw = dict(rtol=cfg["rtol"], atol=cfg["atol"], method="dopri5")
        self.named = dict(zip(PARAMS, [self.field.l1.weight, self.field.l1.bias, self.field.l2.weight,
                                       self.field.l2.bias, self.field.l3.weight, self.field.l3.bias]))

    def loss_of(self, s1):
        z, delta = s1[:, : self.d], s1[:, self.d:]
        logpz = -0.5 * (z * z).sum(1, keepdim=True) - 0.5 * self.d * math.log(2 * math.pi)
        return -(logpz - delta).mean()

    # -- checks

    def check_rhs(self):
        """Largest relative error of the augmented dynamics at [x, 0]."""
        worst = 0.0
        self.func.e = self.probe
        for key, t in (("check.rhs0", 0.0), ("check.rhs_mid", self.cfg["t1"] / 2)):
            want = self.tensors[key]
            with torch.no_grad():
                got = self.func(torch.tensor(t, dtype=torch.float32), self.s0).detach()
            if got.shape != want.shape:
                raise ValueError(f"{self.path}: F(t, s0) has shape {tuple(got.shape)}, {key} {tuple(want.shape)}")
            scale = want.abs().max().item()
            err = (got - want).abs().max().item()
            worst = max(worst, err / scale if scale > 0 else err)
        return worst

    def check_pass(self):
        """One forward and backward pass with the saved probe (no Adam step):
        the loss, NFE and each gradient's relative error (max |diff| / max
        |go|) against the Go side's."""
        self.func.calls = 0
        self.opt.zero_grad()
        loss, fwd, bwd = self.grad_pass(self.probe)
        errs = {}
        for n, p in self.named.items():
            want = self.tensors["check.grad." + n]
            scale = want.abs().max().item()
            err = (p.grad - want).abs().max().item()
            errs[n] = err / scale if scale > 0 else err
        self.opt.zero_grad()
        return loss, fwd, bwd, errs

    # -- training

    def grad_pass(self, e):
        f = self.func
        f.e = e
        c0 = f.calls
        t0 = time.perf_counter()
        s1 = torchdiffeq.odeint_adjoint(f, self.s0, self.t, adjoint_params=tuple(self.field.parameters()),
                                        **self.solve_kw)[-1]
        loss = self.loss_of(s1)
        self.fwd_secs = time.perf_counter() - t0
        c1 = f.calls
        loss.backward()
        return loss.item(), c1 - c0, f.calls - c1

    def step(self):
        """One training iteration; returns (loss, fwd NFE, bwd NFE)."""
        self.opt.zero_grad()
        e = None if self.exact else torch.randint(0, 2, self.x.shape).to(self.x) * 2 - 1
        out = self.grad_pass(e)
        self.opt.step()
        return out


def vm_hwm_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return -1.0


def main():
    torch.set_num_threads(ARGS.threads)
    torch.manual_seed(ARGS.seed)
    backend = f"torch {torch.__version__} + torchdiffeq {torchdiffeq.__version__}"
    status = 0
    for path in ARGS.files:
        p = Problem(path)
        cfg = p.cfg
        res = {"config": cfg["name"], "side": "pytorch", "trace": cfg["trace"]}
        rhs_err = p.check_rhs()
        loss0, fwd0, bwd0, gerrs = p.check_pass()
        want_loss = float(p.meta["check.loss"])
        loss_err = abs(loss0 - want_loss) / abs(want_loss)
        res.update(rhs_rel_err=rhs_err, check_loss=loss0, check_loss_go=want_loss, check_loss_rel_err=loss_err,
                   check_grad_rel_err=gerrs,
                   check_fwd_nfe=fwd0, check_fwd_nfe_go=int(p.meta["check.fwd_nfe"]),
                   check_bwd_nfe=bwd0, check_bwd_nfe_go=int(p.meta["check.bwd_nfe"]))
        if res["check_fwd_nfe"] != res["check_fwd_nfe_go"]:
            print(f"torch_ffjord.py: {path}: forward NFE {fwd0} here, {res['check_fwd_nfe_go']} on the Go side",
                  file=sys.stderr)
        if not (rhs_err <= RHS_RTOL) or not (loss_err <= LOSS_RTOL) or not (gerrs["W3"] <= ARGS.grad_rtol):
            print(f"torch_ffjord.py: {path}: the PyTorch problem does not reproduce the Go one "
                  f"(right-hand side relative error {rhs_err:.3g}, limit {RHS_RTOL}; initial loss {loss0!r} vs "
                  f"{want_loss!r}, relative error {loss_err:.3g}, limit {LOSS_RTOL}; W3 gradient relative error "
                  f"{gerrs['W3']:.3g}, limit {ARGS.grad_rtol}): not timed", file=sys.stderr)
            res["error"] = "check failed"
            print(json.dumps(res), flush=True)
            status = 1
            continue
        if ARGS.check_only:
            res["skipped"] = "--check-only"
            print(json.dumps(res), flush=True)
            continue
        for i in range(ARGS.warmup):
            loss, fn, bn = p.step()
            if i == 0:
                res.update(fwd_nfe_first=fn, bwd_nfe_first=bn, loss_first=loss)
        secs, fsecs, fwd, bwd = [], [], 0.0, 0.0
        for _ in range(ARGS.iters):
            t0 = time.perf_counter()
            loss, fn, bn = p.step()
            secs.append(time.perf_counter() - t0)
            fsecs.append(p.fwd_secs)
            fwd += fn / ARGS.iters
            bwd += bn / ARGS.iters
        if not math.isfinite(loss):
            print(f"torch_ffjord.py: {cfg['name']}: loss {loss}", file=sys.stderr)
            status = 1
        res.update(iter_seconds=statistics.median(secs), fwd_seconds=statistics.median(fsecs), fwd_nfe=fwd, bwd_nfe=bwd, peak_rss_mb=vm_hwm_mb(),
                   loss_last=loss, iters=ARGS.iters, warmup=ARGS.warmup, threads=torch.get_num_threads(),
                   blas_threads=ARGS.blas_threads, omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""),
                   backend=backend, grad_mode="adjoint", batch=cfg["batch"], width=cfg["width"])
        print(json.dumps(res), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
