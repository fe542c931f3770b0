#!/usr/bin/env python3
"""Markdown tables from the JSON lines of bench/compare_mlp.sh.

    python3 bench/mlp_table.py results.jsonl > table.md

One table per dtype and thread count (a float64 table's heading says
float64; lines without a "dtype" are float32), one row per configuration
(in the order they first appear), the medians over the rounds of each side's per-run median
seconds per iteration:

    Go s/iter, PyTorch s/iter   median over the rounds
    ratio                       PyTorch s/iter / Go s/iter (> 1: Go faster)
    Go NFE, PyTorch NFE         forward + backward evaluations per iteration
                                (median over the rounds)
    Go µs/NFE, PyTorch µs/NFE   s/iter over (forward + backward NFE), in µs
    spread                      (max - min) / median of the rounds' s/iter,
                                Go / PyTorch, in percent
    load                        the 1-minute load average as the runs
                                started (median over both sides' runs)

and under each table the geometric mean of the ratios.
"""

import json
import math
import statistics
import sys


def main(path):
    runs = {}
    order = []
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        d = json.loads(line)
        if "iter_seconds" not in d:
            continue
        side = "go" if d["side"] == "adamnode" else "torch"
        key = (d.get("dtype", "float32"), d["threads"], d["config"])
        if key not in runs:
            runs[key] = {"go": [], "torch": []}
            order.append(key)
        runs[key][side].append(d)

    def summary(rs):
        if not rs:
            return None
        secs = [r["iter_seconds"] for r in rs]
        med = statistics.median(secs)
        nfe = statistics.median(r["fwd_nfe"] + r["bwd_nfe"] for r in rs)
        fwd = statistics.median(r["fwd_nfe"] for r in rs)
        bwd = statistics.median(r["bwd_nfe"] for r in rs)
        return {"s": med, "nfe": nfe, "fwd": fwd, "bwd": bwd, "us": med / nfe * 1e6,
                "spread": (max(secs) - min(secs)) / med * 100, "n": len(rs)}

    def nfe(s):
        return f"{s['fwd']:g}+{s['bwd']:g}"

    out = []
    for dtype, threads in sorted({k[:2] for k in order}):
        suffix = "" if dtype == "float32" else f", {dtype}"
        out.append(f"### {threads} thread{'s' if threads > 1 else ''}{suffix}\n")
        out.append("| config | Go s/iter | PyTorch s/iter | ratio PT/Go | Go NFE f+b | PT NFE f+b "
                   "| Go µs/NFE | PT µs/NFE | spread Go/PT % | load |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        ratios = []
        for key in order:
            if key[:2] != (dtype, threads):
                continue
            g, t = summary(runs[key]["go"]), summary(runs[key]["torch"])
            dash = "—"
            row = [f"`{key[2]}`"]
            row.append(f"{g['s']:.4f}" if g else dash)
            row.append(f"{t['s']:.4f}" if t else "n/a (no torchdiffeq equivalent)" if key[2].endswith("_checkpoint") else dash)
            if g and t:
                ratios.append(t["s"] / g["s"])
                row.append(f"{t['s'] / g['s']:.2f}")
            else:
                row.append(dash)
            row.append(nfe(g) if g else dash)
            row.append(nfe(t) if t else dash)
            row.append(f"{g['us']:.0f}" if g else dash)
            row.append(f"{t['us']:.0f}" if t else dash)
            row.append(f"{g['spread']:.0f}" + (f"/{t['spread']:.0f}" if t else "") if g else dash)
            loads = [r["load1"] for r in runs[key]["go"] + runs[key]["torch"] if "load1" in r]
            row.append(f"{statistics.median(loads):.1f}" if loads else dash)
            out.append("| " + " | ".join(row) + " |")
        if ratios:
            gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            out.append(f"\nGeometric mean of PyTorch/Go over the {len(ratios)} configurations timed on both sides: "
                       f"{gm:.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}).\n")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1])
