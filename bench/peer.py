"""Helpers shared by the PyTorch peers of the benchmarks (torch_mlp.py,
torch_mnist.py): importing torchdiffeq from its source tree, and reading
the safetensors weights files the Go side writes (Debian packages neither
torchdiffeq nor the safetensors module)."""

import json
import os
import struct
import sys
import types

import numpy as np
import torch


def import_torchdiffeq(script):
    """Imports torchdiffeq from the directory $TORCHDIFFEQ (its source tree),
    with a stub of scipy.integrate when scipy is missing (torchdiffeq imports
    solve_ivp at load time for its "scipy_solver" method, unused here)."""
    d = os.environ.get("TORCHDIFFEQ")
    if not d:
        sys.exit(f"{script}: set TORCHDIFFEQ to a directory holding the torchdiffeq package "
                 "(torchdiffeq/__init__.py), e.g. a clone of https://github.com/rtqichen/torchdiffeq")
    if not os.path.isfile(os.path.join(d, "torchdiffeq", "__init__.py")):
        sys.exit(f"{script}: TORCHDIFFEQ={d}: no torchdiffeq/__init__.py there")
    sys.path.insert(0, d)
    try:
        import scipy.integrate  # noqa: F401
    except ImportError:
        scipy = types.ModuleType("scipy")
        integ = types.ModuleType("scipy.integrate")

        def solve_ivp(*a, **k):
            raise RuntimeError("scipy is not installed (stub registered by bench/peer.py)")
        integ.solve_ivp = solve_ivp
        scipy.integrate = integ
        sys.modules.setdefault("scipy", scipy)
        sys.modules.setdefault("scipy.integrate", integ)
    import torchdiffeq
    if not os.path.abspath(torchdiffeq.__file__).startswith(os.path.abspath(d)):
        sys.exit(f"{script}: torchdiffeq was imported from {torchdiffeq.__file__}, not from TORCHDIFFEQ={d}")
    return torchdiffeq


_DTYPES = {"F32": "<f4", "F64": "<f8"}


def read_safetensors(path, dtype=np.float32):
    """Returns (tensors, metadata): tensors maps a name to a torch tensor of
    the numpy dtype given (float32 unless given; np.float64 keeps F64
    tensors exact). The format: an 8-byte little-endian header length n, n
    bytes of JSON header, then the raw little-endian data, each tensor at
    its data_offsets (relative to the data's start)."""
    with open(path, "rb") as fh:
        buf = fh.read()
    if len(buf) < 8:
        raise ValueError(f"{path}: {len(buf)} bytes, shorter than a safetensors header length")
    (n,) = struct.unpack("<Q", buf[:8])
    if 8 + n > len(buf):
        raise ValueError(f"{path}: header of {n} bytes runs past the end of the {len(buf)}-byte file")
    header = json.loads(buf[8:8 + n].decode("utf-8"))
    data = memoryview(buf)[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, e in header.items():
        dt = _DTYPES.get(e["dtype"])
        if dt is None:
            raise ValueError(f"{path}: tensor {name}: dtype {e['dtype']} not supported")
        begin, end = e["data_offsets"]
        shape = [int(s) for s in e["shape"]]
        count = int(np.prod(shape)) if shape else 1
        if not (0 <= begin <= end <= len(data)) or end - begin != count * np.dtype(dt).itemsize:
            raise ValueError(f"{path}: tensor {name}: data_offsets [{begin}, {end}] do not fit shape {shape} of {e['dtype']}")
        arr = np.frombuffer(data[begin:end], dtype=dt).reshape(shape)
        tensors[name] = torch.from_numpy(arr.astype(dtype))
    return tensors, meta
