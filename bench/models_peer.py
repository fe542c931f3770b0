"""The PyTorch side of the model comparisons of bench/compare_models.sh
(torch_hnn.py, torch_rnode.py, torch_cnf.py, torch_gradpenalty.py): each of
those scripts holds its model and training loop between its "lines:"
markers, as a PyTorch user writes them, and hands them to main() below,
which runs them on a check file that the Go example's TestPeer writes
(go test ./examples/NAME -run TestPeer -weights FILE; the format is
examples/internal/peer's):

  --check (the default)  loads Go's initial weights (param.I, in the order of
      model.parameters()) and data, replaces torch's random draws
      (torch.randperm, randn, randn_like, rand, randint) by Go's, in the
      order the loop makes them, and runs the training loop for one
      iteration, with torchdiffeq's odeint_adjoint replaced by odeint
      (backprop through dopri5; Go's check runs odeblock.Backprop) given the
      last output time as step_t (Go's last step ends there, where
      torchdiffeq's steps past and interpolates back: only then do the two
      take the same steps) and its initial step selection run without
      gradients (torchdiffeq differentiates through its first step size,
      the only one it does not detach; Go's Backprop holds every step size
      fixed; left on, it moves the gradients by 1e-12 in the HNN, 2e-10 in
      the CNF). It compares the losses and the parameters' gradients after
      the iteration with Go's (go.losses, go.grad.I): the loss's relative
      error and each gradient's max |torch - go| / max |go|
      must be at most --tol (1e-12), else the exit status is 1. One JSON
      line reports it.
  --write-ref PATH  also writes torch's losses and gradients there
      (torch.losses, torch.grad.I, the weights' SHA-256 in the metadata):
      the reference the example's test compares Go with
      (examples/NAME/testdata/torch.safetensors).
  --time N  instead times the loop as it runs (odeint_adjoint where it
      calls it, torch's own random draws) on the file's data: --warmup
      iterations, then --chunks calls of N iterations each; prints one JSON
      line with the median over the chunks of a chunk's seconds per
      iteration, the evaluations of the field per iteration, the peak RSS.

torchdiffeq is imported from $TORCHDIFFEQ (bench/peer.py); everything is
float64 (torch.set_default_dtype).
"""

import argparse
import hashlib
import json
import os
import statistics
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import import_torchdiffeq, read_safetensors  # noqa: E402

ARGS = None


def setup(script):
    """Parses the command line, sets the threads (before torch is used) and
    float64, imports torchdiffeq; returns the torchdiffeq module."""
    global ARGS
    ap = argparse.ArgumentParser(description=f"{script}: see bench/models_peer.py")
    ap.add_argument("file", help="the check file of the Go example's TestPeer -weights")
    ap.add_argument("--tol", type=float, default=1e-12, help="the check's limit (relative)")
    ap.add_argument("--write-ref", metavar="PATH", help="write torch's losses and gradients there")
    ap.add_argument("--time", type=int, default=0, metavar="N", help="time chunks of N iterations instead of checking")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--chunks", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (set OMP_NUM_THREADS alike)")
    ARGS = ap.parse_args()
    tdq = import_torchdiffeq(script)
    import torch
    torch.set_num_threads(ARGS.threads)
    torch.set_default_dtype(torch.float64)
    return tdq


def _sha256(params):
    h = hashlib.sha256()
    for p in params:
        h.update(np.ascontiguousarray(p.detach().numpy(), dtype="<f8").tobytes())
    return h.hexdigest()


def write_safetensors(path, tensors, meta):
    """Writes float64 tensors (name -> torch tensor) and string metadata as
    a safetensors file."""
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        b = np.ascontiguousarray(t.detach().numpy(), dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


class _Draws:
    """torch's random functions replaced by Go's draws, in order."""
    NAMES = ("randperm", "randn", "randn_like", "rand", "randint")

    def __init__(self, torch, kinds, values):
        self.torch, self.queue, self.saved = torch, list(zip(kinds, values)), {}

    def __enter__(self):
        for n in self.NAMES:
            self.saved[n] = getattr(self.torch, n)
            setattr(self.torch, n, self._make(n))
        return self

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(self.torch, n, f)

    def _make(self, name):
        def draw(*args, **kwargs):
            if not self.queue:
                raise RuntimeError(f"torch.{name} called after Go's draws ran out")
            kind, v = self.queue.pop(0)
            if kind != name:
                raise RuntimeError(f"torch.{name} called where Go drew {kind}")
            return v.long() if name in ("randperm", "randint") else v.clone()
        return draw


def main(g, make_model, run, field=None):
    """Runs the check or the timing (see the module doc). g is the calling
    script's globals (whose odeint_adjoint the check replaces); make_model()
    builds the model (a module, or a tuple of modules whose parameters, in
    order, are Go's); run(model, data, iters) runs the training loop on the
    file's data (a dict of tensors, and "config": the file's configuration)
    and returns its losses; field(model), if given, is the module whose
    calls are the evaluations of the ODE's right-hand side (counted)."""
    import torch
    tensors, meta = read_safetensors(ARGS.file, dtype=np.float64)
    cfg = json.loads(meta["config"])
    data = {k: v for k, v in tensors.items() if not k.startswith(("param.", "draw.", "go."))}
    data["config"] = cfg
    nparams = sum(1 for k in tensors if k.startswith("param."))

    def fresh():
        model = make_model()
        mods = model if isinstance(model, tuple) else (model,)
        params = [p for m in mods for p in m.parameters()]
        if len(params) != nparams:
            sys.exit(f"{meta['model']}: {len(params)} parameters here, {nparams} in {ARGS.file}")
        with torch.no_grad():
            for i, p in enumerate(params):
                t = tensors[f"param.{i}"]
                if tuple(p.shape) != tuple(t.shape):
                    sys.exit(f"{meta['model']}: parameter {i}: {tuple(t.shape)} in the file, {tuple(p.shape)} here")
                p.copy_(t)
        return model, mods, params

    model, mods, params = fresh()
    nfe = {"fwd": 0, "bwd": 0}
    adjoint = "odeint_adjoint" in g

    def count(*_):  # an evaluation of the field: of the forward solve unless the adjoint's backward (grad mode on)
        nfe["bwd" if adjoint and torch.is_grad_enabled() else "fwd"] += 1
    if field is not None:
        field(model).register_forward_hook(count)
    if ARGS.time > 0:
        time_loop(torch, meta["model"], "adjoint" if adjoint else ("backprop" if field else "-"), lambda n: run(model, data, n), nfe)
        return
    sha = _sha256(params)
    if sha != meta["params_sha256"]:
        sys.exit(f"{meta['model']}: the weights read hash to {sha}, Go wrote {meta['params_sha256']}")
    tdq = sys.modules["torchdiffeq"]
    saved = {k: g[k] for k in ("odeint", "odeint_adjoint") if k in g}
    checked = lambda f, y0, t, **kw: tdq.odeint(f, y0, t, options=dict(step_t=t[-1:]), **kw)  # noqa: E731
    for k in saved:
        g[k] = checked
    # torchdiffeq differentiates through its first step size (its initial
    # step selection runs with gradients on, the later step sizes are
    # detached); Go's Backprop holds every step size fixed: so here.
    rk = sys.modules["torchdiffeq._impl.rk_common"]
    select = rk._select_initial_step
    rk._select_initial_step = torch.no_grad()(select)
    try:
        kinds = json.loads(meta["draws"])
        with _Draws(torch, kinds, [tensors[f"draw.{i}"] for i in range(len(kinds))]) as d:
            losses = run(model, data, 1)
            if d.queue:
                sys.exit(f"{meta['model']}: {len(d.queue)} of Go's draws left unused: the loops draw differently")
    finally:
        g.update(saved)
        rk._select_initial_step = select
    go_losses = tensors["go.losses"]
    if len(losses) != len(go_losses):
        sys.exit(f"{meta['model']}: {len(losses)} losses, Go {len(go_losses)}")
    loss_err = max(abs(l - gl) / abs(gl) for l, gl in zip(losses, go_losses.tolist()))
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]  # None: unused (H's last bias)
    errs = []
    for i, gr in enumerate(grads):
        gg = tensors[f"go.grad.{i}"]
        d = (gr - gg).abs().max().item()
        errs.append(d / gg.abs().max().item() if d > 0 else 0.0)
    worst = max(range(len(errs)), key=errs.__getitem__)
    out = {"model": meta["model"], "check_losses": losses, "check_loss_rel_err": loss_err,
           "check_grad_rel_err_max": errs[worst], "check_grad_worst": worst, "tol": ARGS.tol, "nfe": nfe["fwd"] + nfe["bwd"]}
    print(json.dumps(out))
    if ARGS.write_ref:
        ref = {"torch.losses": torch.tensor(losses)}
        ref.update({f"torch.grad.{i}": gr for i, gr in enumerate(grads)})
        write_safetensors(ARGS.write_ref, ref, {"model": meta["model"], "config": meta["config"], "params_sha256": sha,
                                                "torch": torch.__version__, "torchdiffeq": tdq.__version__})
    if not (loss_err <= ARGS.tol and errs[worst] <= ARGS.tol):
        sys.exit(f"{meta['model']}: torch and Go differ: loss {loss_err:.2e}, gradient {worst} {errs[worst]:.2e} (limit {ARGS.tol:g})")


def time_loop(torch, model, mode, train, nfe):
    """Times train(n): --warmup iterations, then --chunks chunks of --time."""
    first = train(ARGS.warmup)[0] if ARGS.warmup else None
    nfe["fwd"] = nfe["bwd"] = 0
    secs, last = [], None
    for _ in range(ARGS.chunks):
        start = time.perf_counter()
        losses = train(ARGS.time)
        secs.append((time.perf_counter() - start) / ARGS.time)
        first = losses[0] if first is None else first
        last = losses[-1]
    secs.sort()
    med = statistics.median(secs)
    n = ARGS.chunks * ARGS.time
    rss = next(float(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    print(json.dumps({"side": "pytorch", "model": model, "mode": mode, "build": "torch " + torch.__version__,
                      "iter_seconds": med, "spread_pct": 100 * (secs[-1] - secs[0]) / med,
                      "fwd_nfe": nfe["fwd"] / n, "bwd_nfe": nfe["bwd"] / n, "peak_rss_mb": rss,
                      "threads": torch.get_num_threads(), "iters": ARGS.time, "chunks": ARGS.chunks,
                      "loss_first": first, "loss_last": last}))
