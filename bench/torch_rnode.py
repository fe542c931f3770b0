#!/usr/bin/env python3
"""examples/rnode in PyTorch 1.13 + torchdiffeq: a continuous normalizing
flow with RNODE's kinetic-energy and Jacobian-Frobenius regularisation
(Finlay et al. 2020), the trace and the Frobenius norm both from one
autograd.grad(f, z, e, create_graph=True) with a Gaussian probe e drawn per
solve, trained through odeint_adjoint, written as a PyTorch user writes it.
The data and the initial weights come from the check file the Go example
writes:

    go test ./examples/rnode -run TestPeer -weights /tmp/rnode.safetensors
    TORCHDIFFEQ=DIR python3 bench/torch_rnode.py /tmp/rnode.safetensors            # the check
    TORCHDIFFEQ=DIR python3 bench/torch_rnode.py /tmp/rnode.safetensors --time 5   # the timing

(bench/models_peer.py has the options; bench/compare_models.sh runs it all.)
The model and training loop are the lines between the "lines:" markers.
"""
import models_peer

tdq = models_peer.setup("torch_rnode.py")
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchdiffeq import odeint_adjoint  # noqa: E402


# lines: begin
class RNODE(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
        self.e = None  # Hutchinson's probe, drawn before each solve

    def forward(self, t, s):
        with torch.enable_grad():
            z = s[:, :2].requires_grad_(True)
            dz = self.net(torch.cat([z, t.expand(len(z), 1)], 1))
            eJ = torch.autograd.grad(dz, z, self.e, create_graph=True)[0]
        return torch.cat([dz, (eJ * self.e).sum(1, keepdim=True), (dz ** 2).sum(1, keepdim=True), (eJ ** 2).sum(1, keepdim=True)], 1)


def train(model, x, iters, batch):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(iters):
        xb = x[torch.randperm(len(x))[:batch]]
        model.e = torch.randn_like(xb)
        s = odeint_adjoint(model, torch.cat([xb, torch.zeros(batch, 3)], 1), torch.tensor([0.0, 1.0]), rtol=1e-5, atol=1e-5)[-1]
        logp = torch.distributions.Normal(0.0, 1.0).log_prob(s[:, :2]).sum(1) + s[:, 2]
        loss = -logp.mean() + 0.01 * (s[:, 3] + s[:, 4]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
# lines: end


models_peer.main(globals(), RNODE, lambda m, d, n: train(m, d["x"], n, d["config"]["batch"]), field=lambda m: m)
