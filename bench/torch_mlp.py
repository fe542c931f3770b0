#!/usr/bin/env python3
"""PyTorch + torchdiffeq peer of the MLP neural-ODE benchmark family.

Runs the problems of package bench/mlpfamily in PyTorch (written for 1.13)
with torchdiffeq, from the weights files the Go command writes
(`mlpbench -config NAME -out DIR` writes DIR/NAME.safetensors):

    TORCHDIFFEQ=/tmp/torchdiffeq python3 bench/torch_mlp.py \
        --threads 1 --iters 10 --warmup 2 DIR/NAME.safetensors [...]

TORCHDIFFEQ names a directory holding the torchdiffeq package (the
directory with torchdiffeq/__init__.py in it); it is put first on sys.path.
torchdiffeq is run as it is, except that when scipy is not installed a stub
of scipy.integrate is registered before the import (torchdiffeq imports
solve_ivp at load time for its "scipy_solver" method, which is not used).

For each file it

1. rebuilds the problem from the file: f's Linear layers (f.1, f.3, ...:
   the positions in the Go Sequential, whose position 0 is the time
   concatenation), the family's raw scalars (gamma, or r1 and r2), h0, m0,
   the target and the configuration (metadata "config"). The
   configuration's "dtype" (float32 if absent) is the model's: in
   float64 the model, the data and the times are torch.float64, built from
   the file's F64 tensors as they are (mlpbench -dtype float64 stores every
   tensor in the run's dtype; nothing is rounded through float32);
2. checks that its right-hand side F(t, z0) at t = 0 and t = T1/2 equals
   the saved reference values (check.rhs0, check.rhs_mid) to 1e-5 relative
   in float32, 1e-12 in float64 (max |torch - go| <= tol * max |go|, per
   part of the state), and that the loss of a forward solve from z0 equals
   the saved one (check.loss) to 1e-4 relative in float32, 1e-6 in float64
   (the solves' rtol: the two dopri5 implementations agree only to their
   accuracy); if either fails it prints the discrepancy, times nothing and
   exits with status 1;
3. runs --warmup untimed and --iters timed training iterations (forward
   solve, MSE loss, backward, Adam step; odeint_adjoint in adjoint mode,
   odeint in backprop mode) and prints one JSON line with the fields of the
   Go command's (side "pytorch", "dtype" included), plus the checks'
   errors. A checkpoint-mode
   configuration has no torchdiffeq equivalent: it is checked, not timed,
   and its line says "skipped".

Threads: --threads N sets torch.set_num_threads(N) and, before torch is
imported, OMP_NUM_THREADS=N; --blas-threads K (default 1) sets
OPENBLAS_NUM_THREADS=K. Debian's torch runs its GEMMs in the system
OpenBLAS (the pthreads build), whose threads set_num_threads does not
govern; the default K = 1 is the Go side's setting (its OpenBLAS runs
single-threaded and its engine splits GEMMs over GOMAXPROCS workers; torch
runs each GEMM in one call). With N = K = 2 on a 2-core machine the OpenMP
and OpenBLAS pools oversubscribe the cores, and with another process on
the machine libgomp's spinning workers (OMP_WAIT_POLICY unset or ACTIVE)
slow an iteration by 10-40x: see bench/README.md. The JSON line records
OMP_WAIT_POLICY.

NFE: the forward NFE counts calls of the dynamics during the forward solve
(the first-step selection's included). The backward NFE counts, in adjoint
mode, the calls of the dynamics inside torchdiffeq's augmented dynamics
(one VJP each); in backprop mode, the evaluations whose output autograd
pulled a gradient back through (a hook on each output).
"""

import argparse
import json
import math
import os
import resource
import statistics
import sys
import time

FORMAT = "adamnode-mlpfamily/1"
# The checks' relative tolerances per dtype. The right-hand side: float32
# rounding, and float64 rounding with room for the two sides' summation
# orders and math kernels (measured: 4e-16 in float64, 2e-7 in float32).
# The loss of a forward solve: the two dopri5 implementations agree only to
# the solve's own accuracy (torchdiffeq steps past t1 and interpolates), so
# float64 cannot be held tighter than the configurations' rtol, 1e-6
# (measured on the base's families: up to 9e-8 in float64, 2e-7 in float32).
RHS_RTOL = {"float32": 1e-5, "float64": 1e-12}
LOSS_RTOL = {"float32": 1e-4, "float64": 1e-6}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="weights files written by mlpbench")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads: torch.set_num_threads, OMP_NUM_THREADS (default 1)")
    ap.add_argument("--blas-threads", type=int, default=1, help="OpenBLAS threads: OPENBLAS_NUM_THREADS (default 1)")
    ap.add_argument("--iters", type=int, default=10, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=2, help="untimed iterations before them (at least 1)")
    ap.add_argument("--check-only", action="store_true", help="run the checks, time nothing")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda / cuda:N: the model, data and solve on that GPU, "
                    "each iteration synchronised before its clock stops")
    a = ap.parse_args()
    if a.threads < 1 or a.blas_threads < 1 or a.iters < 1 or a.warmup < 1:
        ap.error("--threads, --blas-threads, --iters and --warmup must be at least 1")
    return a


ARGS = parse_args()
# Before torch loads OpenMP and OpenBLAS.
for _var, _n, _flag in (("OMP_NUM_THREADS", ARGS.threads, "--threads"),
                        ("OPENBLAS_NUM_THREADS", ARGS.blas_threads, "--blas-threads")):
    if os.environ.get(_var, str(_n)) != str(_n):
        sys.exit(f"torch_mlp.py: {_var}={os.environ[_var]} but {_flag} {_n}; unset it or make them equal")
    os.environ[_var] = str(_n)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


from peer import import_torchdiffeq, read_safetensors  # noqa: E402

torchdiffeq = import_torchdiffeq("torch_mlp.py")


# ---------------------------------------------------------------- the model

ACTS = {"tanh": torch.tanh, "softplus": F.softplus, "relu": F.relu}


class Field(nn.Module):
    """f(h, t) = MLP([h, t]): Linear(D+1 -> W), act, (Linear(W -> W), act) x
    (L-1), Linear(W -> D); the time is the last input column, as the Go
    TimeConcat appends it."""

    def __init__(self, cfg, tensors):
        super().__init__()
        self.act = ACTS[cfg["act"]]
        self.lins = nn.ModuleList()
        for i in range(cfg["layers"] + 1):
            k = 2 * i + 1  # positions in the Go Sequential: 0 is the time concat
            w, b = tensors[f"f.{k}.weight"], tensors[f"f.{k}.bias"]
            lin = nn.Linear(w.shape[1], w.shape[0], dtype=w.dtype)
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(b)
            self.lins.append(lin)
        want_in = cfg["d"] + 1
        for lin in self.lins[:-1]:
            if lin.in_features != want_in or lin.out_features != cfg["width"]:
                raise ValueError(f"layer {lin} does not fit width {cfg['width']}, d {cfg['d']}")
            want_in = cfg["width"]
        if self.lins[-1].in_features != want_in or self.lins[-1].out_features != cfg["d"]:
            raise ValueError(f"output layer {self.lins[-1]} does not fit width {cfg['width']}, d {cfg['d']}")

    def forward(self, t, h):
        x = torch.cat([h, t.to(h.dtype).expand(h.shape[0], 1)], 1)
        for lin in self.lins[:-1]:
            x = self.act(lin(x))
        return self.lins[-1](x)


def scalar(tensors, name):
    v = tensors[name]
    if v.shape != (1,):
        raise ValueError(f"{name} has shape {tuple(v.shape)}, want (1,)")
    return nn.Parameter(v.clone())


class NODE(nn.Module):
    """h' = f(h, t)."""
    parts = 1

    def __init__(self, cfg, tensors):
        super().__init__()
        self.f = Field(cfg, tensors)

    def forward(self, t, z):
        return self.f(t, z)


class HBNODE(nn.Module):
    """h' = -m, m' = f(h, t) - gamma*m, gamma = sigmoid(gamma_raw): as
    odeblock.HBNODE.Eval."""
    parts = 2

    def __init__(self, cfg, tensors):
        super().__init__()
        self.f = Field(cfg, tensors)
        self.gamma = scalar(tensors, "gamma")

    def forward(self, t, z):
        h, m = z.chunk(2, 0)
        gamma = torch.sigmoid(self.gamma)
        return torch.cat([-m, self.f(t, h) - m * gamma], 0)


class AdamNODE(nn.Module):
    """h' = -m/s(v), m' = a1*(-f(h, t) - m), v' = a2*(f(h, t)^2 - v) with
    a1 = sigmoid(r1), a2 = sigmoid(r2), s(v) = sqrt(softplus(v)) + eps: as
    odeblock.AdamNODE.Eval with ScaleSoftplus (mlpfamily's choice)."""
    parts = 3

    def __init__(self, cfg, tensors):
        super().__init__()
        self.f = Field(cfg, tensors)
        self.r1 = scalar(tensors, "r1")
        self.r2 = scalar(tensors, "r2")
        # Go adds eps in the problem's dtype: rounded to float32 there.
        self.eps = float(cfg["eps"]) if dtype_of(cfg) == "float64" else float(np.float32(cfg["eps"]))

    def forward(self, t, z):
        h, m, v = z.chunk(3, 0)
        g = self.f(t, h)
        a1 = torch.sigmoid(self.r1)
        a2 = torch.sigmoid(self.r2)
        s = torch.sqrt(F.softplus(v)) + self.eps
        dh = -(m / s)
        dm = -(g + m) * a1
        dv = (g * g - v) * a2
        return torch.cat([dh, dm, dv], 0)


FAMILIES = {"node": NODE, "hbnode": HBNODE, "adamnode": AdamNODE}
TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def dtype_of(cfg):
    """The configuration's dtype: "float32" (also when it names none, as
    files written before mlpfamily's dtype axis) or "float64"."""
    dt = cfg.get("dtype") or "float32"
    if dt not in TORCH_DTYPES:
        raise ValueError(f"{cfg.get('name')}: dtype {dt!r} not supported (want float32 or float64)")
    return dt


class Counted(nn.Module):
    """The dynamics with their evaluations counted: calls, and (when hooks
    is set) gradients pulled back through an output."""

    def __init__(self, dyn):
        super().__init__()
        self.dyn = dyn
        self.calls = 0
        self.pulled = 0
        self.hooks = False

    def _pulled(self, g):
        self.pulled += 1

    def forward(self, t, z):
        self.calls += 1
        out = self.dyn(t, z)
        if self.hooks and out.requires_grad:
            out.register_hook(self._pulled)
        return out


class Problem:
    def __init__(self, path, device="cpu"):
        # Read in float64, exact for F32 and F64 tensors alike, then cast
        # to the run's dtype (exact too: the file holds that dtype).
        tensors, meta = read_safetensors(path, dtype=np.float64)
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path}: format {meta.get('format')!r}, want {FORMAT!r}")
        self.path = path
        self.meta = meta
        self.cfg = cfg = json.loads(meta["config"])
        self.dtype_name = dtype_of(cfg)
        self.dtype = TORCH_DTYPES[self.dtype_name]
        self.dev = torch.device(device)
        self.tensors = tensors = {k: v.to(self.dtype).to(self.dev) for k, v in tensors.items()}
        self.dyn = FAMILIES[cfg["family"]](cfg, tensors).to(self.dev)
        self.func = Counted(self.dyn)
        self.h0, self.m0, self.target = tensors["h0"], tensors["m0"], tensors["target"]
        B, D = cfg["batch"], cfg["d"]
        for name, x in (("h0", self.h0), ("m0", self.m0), ("target", self.target)):
            if tuple(x.shape) != (B, D):
                raise ValueError(f"{path}: {name} has shape {tuple(x.shape)}, want ({B}, {D})")
        if cfg["family"] == "node":
            self.z0 = self.h0.clone()
        elif cfg["family"] == "hbnode":
            self.z0 = torch.cat([self.h0, self.m0], 0)
        else:
            self.z0 = torch.cat([self.h0, self.m0, self.m0 * self.m0], 0)
        self.t = torch.tensor([0.0, cfg["t1"]], dtype=self.dtype, device=self.dev)
        self.opt = torch.optim.Adam(self.dyn.parameters(), lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8)
        self.solve_kw = dict(rtol=cfg["rtol"], atol=cfg["atol"], method="dopri5")

    # -- checks

    def check_rhs(self):
        """Returns the largest relative error (max |diff| / max |go| per part)
        of F(t, z0) at t = 0 and t = T1/2 against the saved values."""
        worst = 0.0
        P = self.dyn.parts
        with torch.no_grad():
            for key, t in (("check.rhs0", 0.0), ("check.rhs_mid", self.cfg["t1"] / 2)):
                want = self.tensors[key]
                got = self.dyn(torch.tensor(t, dtype=self.dtype, device=self.dev), self.z0)
                if got.shape != want.shape:
                    raise ValueError(f"{self.path}: F(t, z0) has shape {tuple(got.shape)}, {key} {tuple(want.shape)}")
                for g, w in zip(got.chunk(P, 0), want.chunk(P, 0)):
                    scale = w.abs().max().item()
                    err = (g - w).abs().max().item()
                    worst = max(worst, err / scale if scale > 0 else err)
        return worst

    def forward_loss(self):
        with torch.no_grad():
            before = self.func.calls
            z = torchdiffeq.odeint(self.func, self.z0, self.t, **self.solve_kw)[-1]
            loss = F.mse_loss(z[: self.cfg["batch"]], self.target).item()
            return loss, self.func.calls - before

    # -- training

    def step(self):
        """One training iteration; returns (loss, fwd NFE, bwd NFE)."""
        adjoint = self.cfg["mode"] == "adjoint"
        f = self.func
        f.hooks = not adjoint
        self.opt.zero_grad()
        c0 = f.calls
        solve = torchdiffeq.odeint_adjoint if adjoint else torchdiffeq.odeint
        z = solve(f, self.z0, self.t, **self.solve_kw)[-1]
        loss = F.mse_loss(z[: self.cfg["batch"]], self.target)
        c1, p1 = f.calls, f.pulled
        loss.backward()
        bwd = (f.calls - c1) if adjoint else (f.pulled - p1)
        self.opt.step()
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)
        return loss.item(), c1 - c0, bwd


def main():
    torch.set_num_threads(ARGS.threads)
    backend = f"torch {torch.__version__} + torchdiffeq {torchdiffeq.__version__}"
    status = 0
    for path in ARGS.files:
        p = Problem(path, ARGS.device)
        cfg = p.cfg
        res = {"config": cfg["name"], "side": "pytorch", "dtype": p.dtype_name}
        rhs_tol, loss_tol = RHS_RTOL[p.dtype_name], LOSS_RTOL[p.dtype_name]
        rhs_err = p.check_rhs()
        loss0, nfe0 = p.forward_loss()
        want_loss = float(p.meta["check.loss"])
        loss_err = abs(loss0 - want_loss) / abs(want_loss)
        res.update(rhs_rel_err=rhs_err, check_loss=loss0, check_loss_go=want_loss, check_loss_rel_err=loss_err,
                   check_fwd_nfe=nfe0, check_fwd_nfe_go=int(p.meta["check.fwd_nfe"]))
        if not (rhs_err <= rhs_tol) or not (loss_err <= loss_tol):
            print(f"torch_mlp.py: {path}: the PyTorch problem does not reproduce the Go one in {p.dtype_name} "
                  f"(F(t, z0) relative error {rhs_err:.3g}, limit {rhs_tol}; initial loss {loss0!r} vs {want_loss!r}, "
                  f"relative error {loss_err:.3g}, limit {loss_tol}): not timed", file=sys.stderr)
            res["error"] = "check failed"
            print(json.dumps(res), flush=True)
            status = 1
            continue
        if ARGS.check_only:
            res["skipped"] = "--check-only"
            print(json.dumps(res), flush=True)
            continue
        if cfg["mode"] not in ("adjoint", "backprop"):
            print(f"torch_mlp.py: {cfg['name']}: gradient mode {cfg['mode']!r} has no torchdiffeq equivalent: not timed",
                  file=sys.stderr)
            res["skipped"] = f"{cfg['mode']} mode has no torchdiffeq equivalent"
            print(json.dumps(res), flush=True)
            continue
        for i in range(ARGS.warmup):
            loss, fn, bn = p.step()
            if i == 0:
                res.update(fwd_nfe_first=fn, bwd_nfe_first=bn, loss_first=loss)
        secs, fwd, bwd = [], 0.0, 0.0
        for _ in range(ARGS.iters):
            t0 = time.perf_counter()
            loss, fn, bn = p.step()
            secs.append(time.perf_counter() - t0)
            fwd += fn / ARGS.iters
            bwd += bn / ARGS.iters
        if not math.isfinite(loss):
            print(f"torch_mlp.py: {cfg['name']}: loss {loss}", file=sys.stderr)
            status = 1
        res.update(iter_seconds=statistics.median(secs), fwd_nfe=fwd, bwd_nfe=bwd,
                   peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   loss_last=loss, iters=ARGS.iters, warmup=ARGS.warmup, threads=torch.get_num_threads(),
                   blas_threads=ARGS.blas_threads, omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""),
                   backend=backend, grad_mode=cfg["mode"], device=str(p.dev))
        if p.dev.type == "cuda":
            res["device_peak_mb"] = torch.cuda.max_memory_allocated(p.dev) / 2**20
        print(json.dumps(res), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
