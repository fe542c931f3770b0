#!/usr/bin/env bash
# Memory and time of the paper's MNIST AdamNODE (batch 32, dopri5 at 1e-4,
# OpenBLAS build) in every gradient mode as the horizon t1 grows: one
# process per (mode, t1), so that each peak RSS is its own; prints each
# run's JSON line, then a Markdown table.
#
#   bench/horizon_mnist.sh
#
# Settings (environment): T1S ("1 4 16"), MODES ("adjoint backprop
# checkpoint recursive"), BUDGET (8: recursive's states), ITERS (2),
# THREADS (2), OUT (a file for the JSON lines; default: none kept).
set -euo pipefail
cd "$(dirname "$0")/.."
T1S=${T1S:-1 4 16}
MODES=${MODES:-adjoint backprop checkpoint recursive}
BUDGET=${BUDGET:-8}
ITERS=${ITERS:-2}
THREADS=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OUT=${OUT:-$work/runs.jsonl}
go build -tags openblas -o "$work/mnistbench" ./bench/cmd/mnistbench
for t1 in $T1S; do
  for mode in $MODES; do
    GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=1 "$work/mnistbench" -iters "$ITERS" -mode "$mode" -budget "$BUDGET" -t1 "$t1" | tee -a "$OUT"
  done
done
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print()
print("| t1 | mode | s/iter | NFE fwd / bwd | states kept | peak RSS MB |")
print("|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['t1']:g} | {r['grad_mode']} | {r['iter_seconds']:.2f} | {r['fwd_nfe']:.0f} / {r['bwd_nfe']:.0f} | {r['stored']} | {r['peak_rss_mb']:.0f} |")
PY
