#!/usr/bin/env python3
"""examples/hnn in PyTorch 1.13 + torchdiffeq: a Hamiltonian neural network
(Greydanus et al. 2019) trained through odeint_adjoint on a pendulum's
trajectories, written as a PyTorch user writes it. The data and the initial
weights come from the check file the Go example writes:

    go test ./examples/hnn -run TestPeer -weights /tmp/hnn.safetensors
    TORCHDIFFEQ=DIR python3 bench/torch_hnn.py /tmp/hnn.safetensors            # the check
    TORCHDIFFEQ=DIR python3 bench/torch_hnn.py /tmp/hnn.safetensors --time 5   # the timing

(bench/models_peer.py has the options; bench/compare_models.sh runs it all.)
The model and training loop are the lines between the "lines:" markers.
"""
import models_peer

tdq = models_peer.setup("torch_hnn.py")
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchdiffeq import odeint_adjoint  # noqa: E402


# lines: begin
class HNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.H = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))

    def forward(self, t, x):
        with torch.enable_grad():
            x.requires_grad_(True)
            dH = torch.autograd.grad(self.H(x).sum(), x, create_graph=True)[0]
        return torch.cat([dH[:, 1:], -dH[:, :1]], 1)  # q' = dH/dp, p' = -dH/dq


def train(model, x0, xs, ts, iters, batch):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(iters):
        idx = torch.randperm(len(x0))[:batch]
        pred = odeint_adjoint(model, x0[idx], ts, rtol=1e-6, atol=1e-6)
        loss = ((pred - xs[:, idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
# lines: end


models_peer.main(globals(), HNN, lambda m, d, n: train(m, d["x0"], d["xs"], d["ts"], n, d["config"]["batch"]),
                 field=lambda m: m)
