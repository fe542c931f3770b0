#!/usr/bin/env python3
"""examples/cnf in PyTorch 1.13 + torchdiffeq: a continuous normalizing flow
with its own exact trace (FFJORD's divergence_bf: one autograd.grad per
dimension), trained by maximum likelihood through odeint_adjoint, written as
a PyTorch user writes it. The data and the initial weights come from the
check file the Go example writes:

    go test ./examples/cnf -run TestPeer -weights /tmp/cnf.safetensors
    TORCHDIFFEQ=DIR python3 bench/torch_cnf.py /tmp/cnf.safetensors            # the check
    TORCHDIFFEQ=DIR python3 bench/torch_cnf.py /tmp/cnf.safetensors --time 5   # the timing

(bench/models_peer.py has the options; bench/compare_models.sh runs it all.)
The model and training loop are the lines between the "lines:" markers.
"""
import models_peer

tdq = models_peer.setup("torch_cnf.py")
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchdiffeq import odeint_adjoint  # noqa: E402


# lines: begin
class CNF(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))

    def forward(self, t, s):
        with torch.enable_grad():
            z = s[:, :2].requires_grad_(True)
            dz = self.net(torch.cat([z, t.expand(len(z), 1)], 1))
            tr = sum(torch.autograd.grad(dz[:, i].sum(), z, create_graph=True)[0][:, i] for i in range(2))
        return torch.cat([dz, tr[:, None]], 1)


def train(model, x, iters, batch):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(iters):
        xb = x[torch.randperm(len(x))[:batch]]
        s = odeint_adjoint(model, torch.cat([xb, torch.zeros(batch, 1)], 1), torch.tensor([0.0, 1.0]), rtol=1e-5, atol=1e-5)[-1]
        logp = torch.distributions.Normal(0.0, 1.0).log_prob(s[:, :2]).sum(1) + s[:, 2]
        loss = -logp.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
# lines: end


models_peer.main(globals(), CNF, lambda m, d, n: train(m, d["x"], n, d["config"]["batch"]), field=lambda m: m)
