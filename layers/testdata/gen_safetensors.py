#!/usr/bin/env python3
"""Writes the hand-made safetensors files of this directory, from the format
spec alone (https://github.com/huggingface/safetensors), with the Python
standard library only -- independent of the Go writer under test.

Run from this directory:  python3 gen_safetensors.py

Byte layout of every file:

    [0, 8)       N = len(header), unsigned 64-bit little-endian
    [8, 8+N)     header: UTF-8 JSON object
    [8+N, end)   data buffer; each tensor's bytes are data[begin:end] for its
                 "data_offsets": [begin, end], elements little-endian, row-major

tiny_f32.safetensors -- what layers.LoadParams reads in TestLoadHandMade:

    header (JSON, keys in this order, then spaces up to N % 8 == 0):
      "__metadata__": {"format": "pt", "note": "hand-made"}
      "fc.weight":    F32 [2, 3], data_offsets [8, 32]
      "fc.bias":      F32 [2],    data_offsets [0, 8]
    data buffer (32 bytes): the bias first, then the weight
      [0, 8)    fc.bias   =  1.5, -2.5                    ('<2f')
      [8, 32)   fc.weight =  0.5, -1, 2, 0.25, 3, -0.125  ('<6f')

mixed.safetensors -- other dtypes, a zero-size tensor and a scalar; compact
header, not padded, no metadata:

      "x64":    F64 [2]     [0, 16)   -1.5, 1e-300          ('<2d')
      "ids":    I64 [3]     [16, 40)  1, -2, 3              ('<3q')
      "half":   F16 [2]     [40, 44)  1.0, -2.0             ('<2e': 0x3c00, 0xc000)
      "empty":  F32 [0, 3]  [44, 44)  no elements
      "scalar": F64 []      [44, 52)  3.25                  ('<d')
"""
import json
import struct


def write(path, header, data, pad):
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if pad:
        h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.write(data)


bias = struct.pack("<2f", 1.5, -2.5)
weight = struct.pack("<6f", 0.5, -1, 2, 0.25, 3, -0.125)
write(
    "tiny_f32.safetensors",
    {
        "__metadata__": {"format": "pt", "note": "hand-made"},
        "fc.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [8, 32]},
        "fc.bias": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    },
    bias + weight,
    pad=True,
)

data = (
    struct.pack("<2d", -1.5, 1e-300)
    + struct.pack("<3q", 1, -2, 3)
    + struct.pack("<2e", 1.0, -2.0)
    + struct.pack("<d", 3.25)
)
write(
    "mixed.safetensors",
    {
        "x64": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
        "ids": {"dtype": "I64", "shape": [3], "data_offsets": [16, 40]},
        "half": {"dtype": "F16", "shape": [2], "data_offsets": [40, 44]},
        "empty": {"dtype": "F32", "shape": [0, 3], "data_offsets": [44, 44]},
        "scalar": {"dtype": "F64", "shape": [], "data_offsets": [44, 52]},
    },
    data,
    pad=False,
)
