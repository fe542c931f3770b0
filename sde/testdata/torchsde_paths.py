"""Solve sde's comparison problems with torchsde on the increments Go wrote.

Reads torchsde_increments.json (written by
`go test ./sde -run TestTorchsdePaths -torchsde.write`): the weights of the
test's neural SDE, y0, the output times, the step dt and, per step of the
grid, the Brownian increment W and its space-time Levy area H. Solves with
torchsde's euler, milstein (and its grad_free option), srk, heun and
reversible_heun on those increments (a BaseBrownian that replays them) in
float64 and writes every path to torchsde_paths.json, with the loss
L = sum over the output times of sum(y**2)/2 and its gradients with respect
to every parameter and y0 (backpropagated through sdeint, and for
reversible_heun also through sdeint_adjoint with adjoint_reversible_heun),
which TestTorchsdePaths and TestTorchsdeGradients compare with adamnode's.

The golden file was made with torchsde at commit
eb3a00e31cbd56176270066ed2f62c394cf6acb7 (google-research/torchsde, 2024-12-30)
and Debian's PyTorch 1.13:

    PYTHONPATH=<torchsde source> /usr/bin/python3 sde/testdata/torchsde_paths.py

torchsde imports the `trampoline` package for its BrownianInterval, which is
not used here; a stand-in module is installed if it is missing.

The SDE (batch 3 of 2 elements; names as in sde/gradient_test.go):
    f(t, y) = (1 + t/2) tanh(y W^T + b)
    g(t, y) = 0.5 sigmoid(a * y + c)            diagonal, and scalar as [3, 2, 1]
    g(t, y) = 0.3 tanh(y V^T) viewed [3, 2, 2]  general
    g(t, y) = (1 + t/2) C, C of shape [3, 2, 2]  additive (torchsde's srk is then
                                                Rossler's SRA1: adamnode's sra1)
"""

import json
import math
import os
import sys
import types

if "trampoline" not in sys.modules:
    try:
        import trampoline  # noqa: F401
    except ImportError:
        stub = types.ModuleType("trampoline")

        class TailCall(Exception):
            pass

        def _unused(*args, **kwargs):
            raise RuntimeError("trampoline stand-in: BrownianInterval is not used here")

        stub.TailCall = TailCall
        stub.trampoline = _unused
        sys.modules["trampoline"] = stub

import torch  # noqa: E402
import torchsde  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Replay(torchsde.BaseBrownian):
    """The increments of a fixed grid of steps of size dt from 0."""

    __slots__ = ("_W", "_H", "_dt", "_shape")

    def __init__(self, steps, shape, dt):
        self._W = [torch.tensor(s["W"], dtype=torch.float64).view(*shape) for s in steps]
        self._H = [torch.tensor(s["H"], dtype=torch.float64).view(*shape) for s in steps]
        self._dt = dt
        self._shape = torch.Size(shape)

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        ta, tb = float(ta), float(tb)
        k = round(ta / self._dt)
        if abs(ta - k * self._dt) > 1e-12 or abs(tb - ta - self._dt) > 1e-12 or not 0 <= k < len(self._W):
            raise ValueError(f"[{ta}, {tb}] is not a step of the grid")
        W = self._W[k]
        if return_A:
            raise ValueError("no space-space Levy area")
        if return_U:
            return W, self._dt * (0.5 * W + self._H[k])  # U = int W(s, u) du = h (W/2 + H)
        return W

    def __repr__(self):
        return f"Replay(dt={self._dt}, steps={len(self._W)})"

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
        return "space-time"


class Neural(torch.nn.Module):
    def __init__(self, noise, params, sde_type):
        super().__init__()
        self.noise_type = noise
        self.sde_type = sde_type
        self.p = torch.nn.ParameterDict({k: torch.nn.Parameter(torch.tensor(v["data"], dtype=torch.float64).view(*v["shape"]))
                                         for k, v in params.items() if k != "y0"})

    def f(self, t, y):
        return (1 + float(t) / 2) * torch.tanh(y @ self.p["W"].T + self.p["b"])

    def g(self, t, y):
        if self.noise_type == "additive":
            return (1 + float(t) / 2) * self.p["C"]
        if self.noise_type == "general":
            return 0.3 * torch.tanh(y @ self.p["V"].T).view(y.shape[0], y.shape[1], -1)
        g = 0.5 * torch.sigmoid(self.p["a"] * y + self.p["c"])
        if self.noise_type == "scalar":
            return g.unsqueeze(-1)
        return g


CASES = [
    ("euler", "euler", "ito", {}),
    ("milstein", "milstein", "ito", {}),
    ("milstein_grad_free", "milstein", "ito", {"grad_free": True}),
    ("srk", "srk", "ito", {}),
    ("heun", "heun", "stratonovich", {}),
    ("reversible_heun", "reversible_heun", "stratonovich", {}),
]


def loss_and_grads(sde, y0, ys):
    """L = sum over the output times of sum(y**2)/2, and dL/d(every parameter, y0)."""
    loss = 0.5 * (ys ** 2).sum()
    names = list(sde.p.keys())
    grads = torch.autograd.grad(loss, [sde.p[k] for k in names] + [y0])
    return {"loss": loss.item(), "grads": {k: g.reshape(-1).tolist() for k, g in zip(names + ["y0"], grads)}}


def main():
    with open(os.path.join(HERE, "torchsde_increments.json")) as f:
        inc = json.load(f)
    ts = torch.tensor(inc["ts"], dtype=torch.float64)
    dt = inc["dt"]
    out = {"torchsde": "eb3a00e31cbd56176270066ed2f62c394cf6acb7", "torch": torch.__version__, "paths": {}, "grads": {}}
    for pr in inc["problems"]:
        noise = pr["noise"]
        shape = pr["shape"]
        bm = Replay(pr["steps"], shape, dt)
        paths, grads = {}, {}
        for key, method, sde_type, options in CASES:
            if noise == "general" and method in ("milstein", "srk"):
                continue
            if noise == "additive" and method == "milstein":
                continue
            sde = Neural(noise, pr["params"], sde_type)
            y0 = torch.tensor(pr["params"]["y0"]["data"], dtype=torch.float64).view(*pr["params"]["y0"]["shape"])
            y0.requires_grad_(True)
            ys = torchsde.sdeint(sde, y0, ts, bm=bm, method=method, dt=dt, options=dict(options))
            paths[key] = ys.detach().reshape(len(ts), -1).tolist()
            assert all(math.isfinite(v) for row in paths[key] for v in row)
            grads[key] = loss_and_grads(sde, y0, ys)
            if method == "reversible_heun":
                # torchsde's algebraically reversible backward pass.
                ys = torchsde.sdeint_adjoint(sde, y0, ts, bm=bm, method=method, dt=dt,
                                             adjoint_method="adjoint_reversible_heun")
                grads[key + "_adjoint"] = loss_and_grads(sde, y0, ys)
        out["paths"][noise] = paths
        out["grads"][noise] = grads
    with open(os.path.join(HERE, "torchsde_paths.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
