#!/usr/bin/env python3
"""The JAX + diffrax peer of bench/cmd/mlpbench for the MLP family.

It loads weights files that mlpbench -out wrote (package bench/mlpfamily),
checks the right-hand side at t = 0 and the initial loss against the Go
side's reference values before timing anything, then times training
iterations — the forward solve, the gradients (diffrax's BacksolveAdjoint for
the adjoint mode, RecursiveCheckpointAdjoint, i.e. backpropagation through
the solver, for backprop), an Adam step (torch's defaults: lr from the
configuration, betas 0.9, 0.999, eps 1e-8) — as one jax.jit-compiled
function, and prints one JSON line per file with mlpbench's fields.

    python3 bench/jax_mlp.py FILE... [--iters 10] [--warmup 2]

The solve: dopri5 (diffrax.Dopri5) from 0 to T1 at the configuration's rtol
and atol with the I controller (diffrax.PIDController, its defaults), the
first step chosen by diffrax, the RMS error norm. float32 matrix products
run at full precision (jax_default_matmul_precision "highest", no TF32), as
PyTorch's do by default; float64 configurations enable jax_enable_x64. The
NFE reported are diffrax's step counts times six plus one (dopri5 with
FSAL); the forward's comes from the solve's statistics, the backward's is
not counted (null). Needs jax, diffrax, numpy and torch (for the safetensors
reader shared with the PyTorch peers).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import read_safetensors  # noqa: E402

FORMAT = "adamnode-mlpfamily/1"
RHS_RTOL = {"float32": 1e-5, "float64": 1e-12}
LOSS_RTOL = {"float32": 1e-4, "float64": 1e-6}


def load(path):
    """Returns (cfg, meta, numpy arrays in the run's dtype)."""
    tensors, meta = read_safetensors(path, dtype=np.float64)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: format {meta.get('format')!r}, want {FORMAT!r}")
    cfg = json.loads(meta["config"])
    dt = cfg.get("dtype") or "float32"
    arrays = {k: v.numpy().astype(dt) for k, v in tensors.items()}
    return cfg, meta, arrays, dt


def build(cfg, arrays, dt):
    """Returns (params, the dynamics F(t, z, params), z0, target)."""
    import jax.numpy as jnp
    import jax.nn as jnn

    act = {"tanh": jnp.tanh, "softplus": jnn.softplus, "relu": jnn.relu}[cfg["act"]]
    n = cfg["layers"] + 1
    params = {"W": [jnp.asarray(arrays[f"f.{2 * i + 1}.weight"]) for i in range(n)],
              "b": [jnp.asarray(arrays[f"f.{2 * i + 1}.bias"]) for i in range(n)]}
    fam = cfg["family"]
    for s in {"hbnode": ["gamma"], "adamnode": ["r1", "r2"]}.get(fam, []):
        params[s] = jnp.asarray(arrays[s])
    eps = float(cfg["eps"]) if dt == "float64" else float(np.float32(cfg["eps"]))

    def field(p, t, h):
        x = jnp.concatenate([h, jnp.full((h.shape[0], 1), t, dtype=h.dtype)], 1)
        for i in range(n - 1):
            x = act(x @ p["W"][i].T + p["b"][i])
        return x @ p["W"][-1].T + p["b"][-1]

    def dynamics(t, z, p):
        if fam == "node":
            return field(p, t, z)
        if fam == "hbnode":
            h, m = jnp.split(z, 2, 0)
            return jnp.concatenate([-m, field(p, t, h) - m * jnn.sigmoid(p["gamma"])], 0)
        h, m, v = jnp.split(z, 3, 0)
        g = field(p, t, h)
        s = jnp.sqrt(jnn.softplus(v)) + eps
        return jnp.concatenate([-(m / s), -(g + m) * jnn.sigmoid(p["r1"]), (g * g - v) * jnn.sigmoid(p["r2"])], 0)

    h0, m0 = jnp.asarray(arrays["h0"]), jnp.asarray(arrays["m0"])
    z0 = {"node": h0, "hbnode": jnp.concatenate([h0, m0], 0),
          "adamnode": jnp.concatenate([h0, m0, m0 * m0], 0)}[fam]
    return params, dynamics, z0, jnp.asarray(arrays["target"])


def run(path, args):
    cfg, meta, arrays, dt = load(path)
    import jax
    if dt == "float64":
        jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_default_matmul_precision", "highest")
    import jax.numpy as jnp
    import diffrax

    res = {"config": cfg["name"], "side": "diffrax", "dtype": dt, "device": str(jax.devices()[0])}
    params, dynamics, z0, target = build(cfg, arrays, dt)
    B = cfg["batch"]
    mode = cfg["mode"]
    if mode not in ("adjoint", "backprop"):
        res["skipped"] = f"{mode} mode has no diffrax equivalent here"
        return res
    adjoint = diffrax.BacksolveAdjoint() if mode == "adjoint" else diffrax.RecursiveCheckpointAdjoint()

    def solve(p):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(dynamics), diffrax.Dopri5(), t0=0.0, t1=float(cfg["t1"]), dt0=None,
                                  y0=z0, args=p, saveat=diffrax.SaveAt(t1=True), adjoint=adjoint,
                                  stepsize_controller=diffrax.PIDController(rtol=cfg["rtol"], atol=cfg["atol"]),
                                  max_steps=10000)
        return sol.ys[-1], sol.stats["num_steps"]

    def loss_fn(p):
        zT, steps = solve(p)
        return jnp.mean((zT[:B] - target) ** 2), steps

    # The checks, before anything is timed.
    rhs = np.asarray(dynamics(0.0, z0, params))
    want = arrays["check.rhs0"]
    rel = float(np.max(np.abs(rhs - want)) / max(np.max(np.abs(want)), 1e-300))
    loss0 = float(jax.jit(loss_fn)(params)[0])
    want_loss = float(meta["check.loss"])
    loss_rel = abs(loss0 - want_loss) / abs(want_loss)
    res.update(rhs_rel_err=rel, check_loss=loss0, check_loss_go=want_loss, check_loss_rel_err=loss_rel)
    if not (rel <= RHS_RTOL[dt]) or not (loss_rel <= LOSS_RTOL[dt]):
        res["error"] = "check failed"
        return res

    lr, b1, b2, ae = cfg["lr"], 0.9, 0.999, 1e-8

    @jax.jit
    def step(p, m, v, k):
        (loss, steps), g = jax.value_and_grad(loss_fn, has_aux=True)(p)
        k = k + 1
        m = jax.tree_util.tree_map(lambda a, b: b1 * a + (1 - b1) * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: b2 * a + (1 - b2) * b * b, v, g)
        c1, c2 = 1 - b1 ** k, 1 - b2 ** k
        p = jax.tree_util.tree_map(lambda w, a, b: w - lr * (a / c1) / (jnp.sqrt(b / c2) + ae), p, m, v)
        return p, m, v, k, loss, steps

    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    k = jnp.asarray(0, dtype=jnp.float64 if dt == "float64" else jnp.float32)
    p = params
    secs = []
    for i in range(args.warmup + args.iters):
        t0 = time.perf_counter()
        p, m, v, k, loss, steps = step(p, m, v, k)
        jax.block_until_ready((p, loss))
        if i >= args.warmup:
            secs.append(time.perf_counter() - t0)
    res.update(iter_seconds=statistics.median(secs), fwd_nfe=6 * int(steps) + 1, bwd_nfe=None,
               loss_last=float(loss), iters=args.iters, warmup=args.warmup, grad_mode=mode,
               backend=f"jax {jax.__version__} + diffrax {diffrax.__version__}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 1:
        sys.exit("jax_mlp.py: --iters and --warmup must be at least 1")
    status = 0
    for path in args.files:
        res = run(path, args)
        status |= "error" in res
        print(json.dumps(res), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
