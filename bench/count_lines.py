#!/usr/bin/env python3
"""Counts the lines of each model and its training loop in Go and in PyTorch
and prints the table (Markdown; --json for one JSON line per model).

The counted region of a file lies between a line holding "lines: begin" and
one holding "lines: end" (in a comment: `// lines: begin` in Go,
`# lines: begin` in Python); a file may hold several regions, which add up.
Inside them every line counts but blank lines and lines that are only a
comment (`//` or `/* ... */` in Go, `#` or a docstring in Python); a line of
code with a comment after it counts.

    python3 bench/count_lines.py            # from the repository's root
    python3 bench/count_lines.py --limit 1.5   # exit status 1 if a ratio exceeds it
"""
import argparse
import json
import os
import re
import sys

# model, Go file, PyTorch file
PAIRS = [
    ("Hamiltonian NN", "examples/hnn/main.go", "bench/torch_hnn.py"),
    ("RNODE (kinetic + Jacobian)", "examples/rnode/main.go", "bench/torch_rnode.py"),
    ("CNF, exact trace", "examples/cnf/main.go", "bench/torch_cnf.py"),
    ("WGAN-GP", "examples/gradpenalty/main.go", "bench/torch_gradpenalty.py"),
    ("latent ODE", "examples/latentode/main.go", "bench/latentode_torch.py"),
    ("neural CDE", "examples/neuralcde/main.go", "bench/neuralcde_torch.py"),
]


def count(path):
    """Returns the code lines inside path's "lines:" regions."""
    go = path.endswith(".go")
    n, inside, found, in_block, in_doc = 0, False, False, False, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if re.search(r"\blines: begin\b", s):
                inside, found = True, True
                continue
            if re.search(r"\blines: end\b", s):
                inside = False
                continue
            if not inside or not s:
                continue
            if go:
                if in_block:
                    in_block = "*/" not in s
                    continue
                if s.startswith("//"):
                    continue
                if s.startswith("/*"):
                    in_block = "*/" not in s[2:]
                    continue
            else:
                if in_doc:
                    if in_doc in s:
                        in_doc = None
                    continue
                if s.startswith("#"):
                    continue
                m = re.match(r'^[rbuRBU]?("""|\'\'\')', s)
                if m:
                    q = m.group(1)
                    if q not in s[m.end():]:
                        in_doc = q
                    continue
            n += 1
    if not found:
        raise SystemExit(f"{path}: no 'lines: begin' marker")
    if inside:
        raise SystemExit(f"{path}: a 'lines: begin' without its 'lines: end'")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--limit", type=float, default=0, help="exit 1 if a Go/PyTorch ratio exceeds it")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = []
    for name, gof, pyf in PAIRS:
        g, p = count(os.path.join(root, gof)), count(os.path.join(root, pyf))
        rows.append((name, g, p, g / p, gof, pyf))
    if args.json:
        for name, g, p, r, gof, pyf in rows:
            print(json.dumps({"model": name, "go": g, "pytorch": p, "ratio": round(r, 3), "go_file": gof, "pytorch_file": pyf}))
    else:
        print("| model | Go lines | PyTorch lines | Go / PyTorch | Go | PyTorch |")
        print("|---|---:|---:|---:|---|---|")
        for name, g, p, r, gof, pyf in rows:
            print(f"| {name} | {g} | {p} | {r:.2f} | `{gof}` | `{pyf}` |")
    over = [r for r in rows if args.limit and r[3] > args.limit]
    if over:
        print(f"over {args.limit}: " + ", ".join(r[0] for r in over), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
