#!/usr/bin/env python3
"""examples/gradpenalty in PyTorch 1.13: a WGAN-GP (Gulrajani et al. 2017)
on eight Gaussians, the gradient penalty from
torch.autograd.grad(create_graph=True), five critic steps per generator
step, written as a PyTorch user writes it. The data and the initial weights
come from the check file the Go example writes:

    go test ./examples/gradpenalty -run TestPeer -weights /tmp/gp.safetensors
    TORCHDIFFEQ=DIR python3 bench/torch_gradpenalty.py /tmp/gp.safetensors             # the check
    TORCHDIFFEQ=DIR python3 bench/torch_gradpenalty.py /tmp/gp.safetensors --time 5    # the timing

(bench/models_peer.py has the options; torchdiffeq is imported but unused;
bench/compare_models.sh runs it all.) The check runs one iteration (five
critic steps and a generator step, six losses) with Go's draws and compares
the losses and the gradients of the last steps (the critic's after the
generator's backward, as both loops leave them). The model and training
loop are the lines between the "lines:" markers.
"""
import models_peer

models_peer.setup("torch_gradpenalty.py")
import torch  # noqa: E402
from torch import nn  # noqa: E402


# lines: begin
def make_models():
    G = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))
    D = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1))
    return G, D


def gradient_penalty(D, real, fake):
    a = torch.rand(len(real), 1)
    x = (a * real + (1 - a) * fake).requires_grad_(True)
    g = torch.autograd.grad(D(x).sum(), x, create_graph=True)[0]
    return ((g.norm(dim=1) - 1) ** 2).mean()


def train(G, D, data, iters, batch):
    optG = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    losses = []
    for _ in range(iters):
        for _ in range(5):
            real = data[torch.randperm(len(data))[:batch]]
            fake = G(torch.randn(batch, 2)).detach()
            lossD = D(fake).mean() - D(real).mean() + 10 * gradient_penalty(D, real, fake)
            optD.zero_grad()
            lossD.backward()
            optD.step()
            losses.append(lossD.item())
        lossG = -D(G(torch.randn(batch, 2))).mean()
        optG.zero_grad()
        lossG.backward()
        optG.step()
        losses.append(lossG.item())
    return losses
# lines: end


models_peer.main(globals(), make_models, lambda m, d, n: train(*m, d["data"], n, d["config"]["batch"]))
