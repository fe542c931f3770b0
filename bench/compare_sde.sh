#!/usr/bin/env bash
# compare_sde.sh — a neural SDE training iteration (bench/cmd/sdebench) timed
# in Go (this repository) and in PyTorch + torchsde (bench/torch_sde.py),
# side by side on the same weights and data.
#
#   TORCHSDE=/tmp/torchsde bench/compare_sde.sh [-r ROUNDS] [-i ITERS]
#       [-w WARMUP] [-t "THREADS ..."] [-m "METHODS ..."] [-o DIR]
#
# Defaults: 5 rounds, 10 timed iterations after 2 warm-up, threads "1 2",
# methods "reversible_heun euler", DIR out/sde-compare. BATCH (512), DIM (8),
# WIDTH (64) and STEPS (64) in the environment size the model.
#
# 1. Builds sdebench (with -tags openblas where libopenblas links).
# 2. Writes one check file per method (weights, data, one Brownian path's
#    increments, Go's float64 loss and gradients) and has the PyTorch side
#    reproduce the loss and gradients to 1e-9 before anything is timed: one
#    failure stops the run.
# 3. For each thread count, method and round: one Go process and one
#    PyTorch process, alternating who goes first (Go in odd rounds); each
#    reports the median of its timed iterations. Go: GOMAXPROCS=T,
#    OPENBLAS_NUM_THREADS=1. PyTorch: torch.set_num_threads(T),
#    OMP_NUM_THREADS=T, OPENBLAS_NUM_THREADS=1 and OMP_WAIT_POLICY from
#    TORCH_OMP_WAIT_POLICY (default PASSIVE here: libgomp's spinning workers
#    make a 2-thread PyTorch iteration 10-40x slower when other processes
#    share the cores; set it empty for libgomp's own policy).
# 4. Writes DIR/results.jsonl, DIR/checks.jsonl, DIR/env.txt, DIR/table.md.
set -euo pipefail

rounds=5 iters=10 warmup=2 threads="1 2" methods="reversible_heun euler" out=out/sde-compare
usage() { sed -n '6,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:i:w:t:m:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	i) iters=$OPTARG ;;
	w) warmup=$OPTARG ;;
	t) threads=$OPTARG ;;
	m) methods=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
. bench/openblas_core.sh
if [ -z "${TORCHSDE:-}" ]; then
	echo "compare_sde.sh: set TORCHSDE to a directory holding the torchsde package (a copy of its source)" >&2
	exit 1
fi
export TORCHSDE
size=(-batch "${BATCH:-512}" -dim "${DIM:-8}" -width "${WIDTH:-64}" -steps "${STEPS:-64}")
pol=${TORCH_OMP_WAIT_POLICY-PASSIVE}

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/sdebench
tags=openblas
if ! echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o "$tmp/probe" 2>/dev/null; then
	echo "compare_sde.sh: libopenblas does not link: building sdebench without -tags openblas" >&2
	tags=
fi
go build ${tags:+-tags $tags} -o "$bin" ./bench/cmd/sdebench

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), cores: $(nproc)"
	echo "openblas: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs from it)')"
	echo "go: $(go version) (sdebench built with tags: ${tags:-none})"
	echo "torch: $($python -c 'import torch; print(torch.__version__)'), torchsde: $TORCHSDE ($(git -C "$TORCHSDE" rev-parse HEAD 2>/dev/null || echo 'no git'))"
	echo "model: ${size[*]}; methods: $methods"
	echo "rounds: $rounds, iters: $iters, warmup: $warmup, threads: $threads, PyTorch OMP_WAIT_POLICY: ${pol:-unset}"
	echo "load before the checks: $(uptime)"
} >"$out/env.txt"

: >"$out/checks.jsonl"
for m in $methods; do
	"$bin" -method "$m" "${size[@]}" -check "$tmp/$m.json" -save-only
	"$python" bench/torch_sde.py --check-only "$tmp/$m.json" >>"$out/checks.jsonl"
done

load1() { cut -d" " -f1 /proc/loadavg; }
res=$out/results.jsonl
: >"$res"
tag() { "$python" -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line); d["round"] = int(sys.argv[1]); d["load1"] = float(sys.argv[2]); print(json.dumps(d))' "$1" "$2"; }
go_run() {
	GOMAXPROCS=$1 OPENBLAS_NUM_THREADS=1 timeout 600 "$bin" -method "$2" "${size[@]}" -iters "$iters" -warmup "$warmup" |
		tag "$3" "$(load1)" >>"$res" || echo "compare_sde.sh: go $*: failed" >&2
}
torch_run() (
	if [ -n "$pol" ]; then export OMP_WAIT_POLICY=$pol; else unset OMP_WAIT_POLICY; fi
	timeout 600 "$python" bench/torch_sde.py --skip-check --threads "$1" --iters "$iters" --warmup "$warmup" "$tmp/$2.json" |
		tag "$3" "$(load1)" >>"$res" || echo "compare_sde.sh: pytorch $*: failed" >&2
)
for t in $threads; do
	echo "threads $t: load before: $(uptime)" >>"$out/env.txt"
	for m in $methods; do
		for r in $(seq 1 "$rounds"); do
			echo "threads $t, $m, round $r" >&2
			if [ $((r % 2)) -eq 1 ]; then
				go_run "$t" "$m" "$r"
				torch_run "$t" "$m" "$r"
			else
				torch_run "$t" "$m" "$r"
				go_run "$t" "$m" "$r"
			fi
		done
	done
	echo "threads $t: load after: $(uptime)" >>"$out/env.txt"
done

"$python" - "$res" "$out/checks.jsonl" >"$out/table.md" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs.setdefault((d["threads"], d["method"]), {"adamnode": [], "pytorch": []})[d["side"]].append(d)
med = statistics.median
out = ["| threads | method (Go gradient / torchsde) | Go s/iter | PyTorch s/iter | ratio PT/Go | forward s Go / PT "
       "| Go peak RSS MiB (iterations' own) | PT peak RSS MiB (iterations' own) | Go peak heap MiB | spread Go/PT % | rounds | load |",
       "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for key in sorted(runs):
    g, p = runs[key]["adamnode"], runs[key]["pytorch"]
    if not g or not p:
        continue
    gs, ps = [r["iter_seconds"] for r in g], [r["iter_seconds"] for r in p]
    spread = lambda s: (max(s) - min(s)) / med(s) * 100
    rss = lambda rs: f"{max(r['peak_rss_mb'] for r in rs):.0f} ({max(r['peak_rss_mb'] - r['base_rss_mb'] for r in rs):.1f})"
    fw = lambda rs: med(r["fwd_seconds"] for r in rs)
    out.append(f"| {key[0]} | {key[1]} ({g[0]['grad_mode']} / {p[0]['grad_mode']}) | {med(gs):.4f} | {med(ps):.4f} "
               f"| {med(ps) / med(gs):.2f} | {fw(g):.4f} / {fw(p):.4f} | {rss(g)} | {rss(p)} "
               f"| {max(r['peak_heap_mb'] for r in g):.1f} | {spread(gs):.0f}/{spread(ps):.0f} | {len(g)}/{len(p)} "
               f"| {med(r['load1'] for r in g + p):.2f} |")
out.append("\ns/iter: the median over the rounds of each process's median over its timed iterations (forward solve, "
           "loss, backward pass, Adam step, a new Brownian path); ratio: PyTorch / Go (> 1: Go faster); peak RSS: the "
           "largest VmHWM of the rounds, in brackets its growth over the VmHWM before the first iteration (the "
           "iterations' own memory, PyTorch's import and Go's runtime left out); Go peak heap: live Go heap after the "
           "forward solve and after the backward pass; spread: (max − min) / median of the rounds; load: the median "
           "1-minute load average as the runs started.\n")
out.append("Checks (PyTorch float64 against Go's float64 loss and gradients on one fixed path, before timing):\n")
for line in open(sys.argv[2]):
    c = json.loads(line)
    out.append(f"- {c['config']}: loss {c['check_loss']:.15f} vs Go {c['check_loss_go']:.15f} (relative "
               f"{c['check_loss_rel_err']:.1e}), gradients max relative {max(c['check_grad_rel_err'].values()):.1e}")
print("\n".join(out))
EOF
echo "wrote $out/table.md, $res, $out/env.txt" >&2
