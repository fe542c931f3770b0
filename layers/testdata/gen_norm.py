"""Writes norm_torch.json: PyTorch's LayerNorm, GroupNorm and BatchNorm2d
on fixed inputs, in float64, for layers' TestNormMatchesPyTorch.

Run with Debian's python3-torch:
    python3 gen_norm.py > norm_torch.json
"""
import json
import sys

import torch

torch.manual_seed(5)
torch.set_default_dtype(torch.float64)
x = torch.randn(3, 4, 2, 3) * 2 + 0.5
x2 = torch.randn(3, 4, 2, 3) - 1


def affine(m):
    with torch.no_grad():
        m.weight.copy_(torch.randn(m.weight.shape))
        m.bias.copy_(torch.randn(m.bias.shape))
    return m.weight.flatten().tolist(), m.bias.flatten().tolist()


ln = torch.nn.LayerNorm([2, 3])
ln_w, ln_b = affine(ln)
gn = torch.nn.GroupNorm(2, 4)
gn_w, gn_b = affine(gn)
bn = torch.nn.BatchNorm2d(4)
bn_w, bn_b = affine(bn)
bn_train1 = bn(x)
bn_train2 = bn(x2)
bn.eval()
bn_eval = bn(x)
out = {
    "x": x.flatten().tolist(), "x2": x2.flatten().tolist(), "shape": list(x.shape),
    "layernorm": {"weight": ln_w, "bias": ln_b, "y": ln(x).flatten().tolist()},
    "groupnorm": {"weight": gn_w, "bias": gn_b, "y": gn(x).flatten().tolist()},
    "batchnorm": {
        "weight": bn_w, "bias": bn_b,
        "train1": bn_train1.flatten().tolist(), "train2": bn_train2.flatten().tolist(),
        "eval": bn_eval.flatten().tolist(),
        "running_mean": bn.running_mean.tolist(), "running_var": bn.running_var.tolist(),
    },
}
json.dump(out, sys.stdout)
