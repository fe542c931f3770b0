#!/usr/bin/env bash
# compare_ffjord.sh — FFJORD's 2-D toy flow (bench/cmd/ffjordbench) timed in
# Go (this repository, OpenBLAS build) and in PyTorch + torchdiffeq
# (bench/torch_ffjord.py), side by side, with the exact trace and with
# Hutchinson's estimator.
#
#   TORCHDIFFEQ=/tmp/torchdiffeq bench/compare_ffjord.sh [-r ROUNDS] [-i ITERS]
#       [-w WARMUP] [-t "THREADS ..."] [-x "TRACES ..."] [-o DIR]
#
# Defaults: 3 rounds, 5 timed iterations after 1 warm-up, threads "1 2",
# traces "exact hutchinson", DIR out/ffjord-compare. WIDTH (default 64)
# and BATCH (default 512) in the environment size the model.
#
# 1. Builds bench/cmd/ffjordbench with -tags openblas into a temporary
#    directory (without the tag where libopenblas does not link).
# 2. Writes one weights file per trace (the same weights and data: one
#    seed; in a temporary directory, removed at the end) and has the PyTorch side check each of them — the augmented
#    right-hand side at [x, 0], the loss of a forward and adjoint pass, the
#    gradients — before anything is timed: one failure stops the run.
# 3. Waits until the 1-minute load average is below LOAD_MAX (default 0.6),
#    polling every 30 s for at most LOAD_WAIT seconds (default 1200; the
#    run goes on after that and env.txt says so): other processes on the
#    machine distort both sides' timings.
# 4. For each thread count, each trace, each round: one Go process and one
#    PyTorch process, alternating who goes first (Go in odd rounds); each
#    runs WARMUP + ITERS training iterations and reports the median of the
#    ITERS. Go runs with GOMAXPROCS=T and OPENBLAS_NUM_THREADS=1, PyTorch
#    with torch.set_num_threads(T), OMP_NUM_THREADS=T and
#    OPENBLAS_NUM_THREADS=1 (TORCH_BLAS_THREADS and TORCH_OMP_WAIT_POLICY as
#    in compare_mlp.sh). Each process gets RUN_TIMEOUT seconds (default 600).
# 5. Writes DIR/results.jsonl (every run's JSON line with "round" and
#    "load1" added), DIR/checks.jsonl, DIR/env.txt (date, CPU, versions,
#    load before and after each thread count) and DIR/table.md.
set -euo pipefail

rounds=3 iters=5 warmup=1 threads="1 2" traces="exact hutchinson" out=out/ffjord-compare
usage() { sed -n '7,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:i:w:t:x:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	i) iters=$OPTARG ;;
	w) warmup=$OPTARG ;;
	t) threads=$OPTARG ;;
	x) traces=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
. bench/openblas_core.sh
if [ -z "${TORCHDIFFEQ:-}" ]; then
	echo "compare_ffjord.sh: set TORCHDIFFEQ to a directory holding the torchdiffeq package:" >&2
	echo "  git clone https://github.com/rtqichen/torchdiffeq /tmp/torchdiffeq   # or any copy of its source" >&2
	echo "  export TORCHDIFFEQ=/tmp/torchdiffeq" >&2
	exit 1
fi
export TORCHDIFFEQ
width=${WIDTH:-64} batch=${BATCH:-512}

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/ffjordbench
tags=openblas
if ! echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o "$tmp/probe" 2>/dev/null; then
	echo "compare_ffjord.sh: libopenblas does not link: building ffjordbench without -tags openblas" >&2
	tags=
fi
go build ${tags:+-tags $tags} -o "$bin" ./bench/cmd/ffjordbench

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
	echo "openblas: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
	echo "cores: $(nproc)"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs from it)')"
	echo "go: $(go version) (ffjordbench built with tags: ${tags:-none})"
	echo "python: $($python --version 2>&1)"
	echo "torch: $($python -c 'import torch; print(torch.__version__)')"
	echo "torchdiffeq: $TORCHDIFFEQ ($(sed -n 's/^__version__ = //p' "$TORCHDIFFEQ/torchdiffeq/__init__.py"))"
	echo "model: width $width, batch $batch, traces: $traces"
	echo "rounds: $rounds, iters: $iters, warmup: $warmup, threads: $threads, PyTorch OpenBLAS threads: ${TORCH_BLAS_THREADS:-1}, PyTorch OMP_WAIT_POLICY: ${TORCH_OMP_WAIT_POLICY:-unset}"
	echo "load before the checks: $(uptime)"
} >"$out/env.txt"

echo "writing and checking the weights files" >&2
files=()
for x in $traces; do
	f=$tmp/weights/$x.safetensors
	"$bin" -trace "$x" -width "$width" -batch "$batch" -weights "$f" -save-only
	files+=("$f")
done
"$python" bench/torch_ffjord.py --check-only "${files[@]}" >"$out/checks.jsonl"

load1() { cut -d" " -f1 /proc/loadavg; }
lmax=${LOAD_MAX:-0.6} lwait=${LOAD_WAIT:-1200}
waited=0
while awk -v l="$(load1)" -v m="$lmax" 'BEGIN { exit !(l >= m) }'; do
	if [ "$waited" -ge "$lwait" ]; then
		echo "compare_ffjord.sh: the load is still $(load1) after ${waited}s: timing anyway" >&2
		break
	fi
	echo "compare_ffjord.sh: load $(load1) >= $lmax: waiting (${waited}s so far)" >&2
	sleep 30
	waited=$((waited + 30))
done
if awk -v l="$(load1)" -v m="$lmax" 'BEGIN { exit !(l < m) }'; then
	echo "load wait: ${waited}s until the 1-minute load was below $lmax; at the start: $(uptime)" >>"$out/env.txt"
else
	echo "load wait: gave up after ${waited}s, the 1-minute load not below $lmax; at the start: $(uptime)" >>"$out/env.txt"
fi

res=$out/results.jsonl
: >"$res"
tag() { "$python" -c 'import json, sys
r, load = int(sys.argv[1]), float(sys.argv[2])
for line in sys.stdin:
    d = json.loads(line); d["round"] = r; d["load1"] = load; print(json.dumps(d))' "$1" "$2"; }
tmo=${RUN_TIMEOUT:-600}
: >"$out/failures.txt"
failed() { echo "compare_ffjord.sh: $1 run of $3 ($2 threads, round $4) failed or ran past ${tmo}s" | tee -a "$out/failures.txt" >&2; }
go_run() {
	local l
	l=$(load1)
	GOMAXPROCS=$1 OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$bin" -trace "$2" -width "$width" -batch "$batch" \
		-iters "$iters" -warmup "$warmup" | tag "$3" "$l" >>"$res" || failed go "$@"
}
torch_run() ( # a subshell: OMP_WAIT_POLICY stays out of the Go runs
	local l b=${TORCH_BLAS_THREADS:-1}
	[ "$b" = T ] && b=$1
	l=$(load1)
	local pol=${TORCH_OMP_WAIT_POLICY:-}
	if [ -n "$pol" ]; then export OMP_WAIT_POLICY=$pol; else unset OMP_WAIT_POLICY; fi
	timeout "$tmo" "$python" bench/torch_ffjord.py --threads "$1" --blas-threads "$b" --iters "$iters" --warmup "$warmup" \
		"$tmp/weights/$2.safetensors" | tag "$3" "$l" >>"$res" || failed pytorch "$@"
)

for t in $threads; do
	echo "threads $t: load before: $(uptime)" >>"$out/env.txt"
	for x in $traces; do
		echo "threads $t: $x" >&2
		for r in $(seq 1 "$rounds"); do
			if [ $((r % 2)) -eq 1 ]; then
				go_run "$t" "$x" "$r"
				torch_run "$t" "$x" "$r"
			else
				torch_run "$t" "$x" "$r"
				go_run "$t" "$x" "$r"
			fi
		done
	done
	echo "threads $t: load after: $(uptime)" >>"$out/env.txt"
done

"$python" - "$res" "$out/checks.jsonl" >"$out/table.md" <<'EOF'
import json, statistics, sys
runs, order = {}, []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "iter_seconds" not in d:
        continue
    key = (d["threads"], d["trace"])
    if key not in runs:
        runs[key] = {"adamnode": [], "pytorch": []}
        order.append(key)
    runs[key][d["side"]].append(d)
med = statistics.median
out = ["| threads | trace | Go s/iter | PyTorch s/iter | ratio PT/Go | forward s Go / PT | Go peak RSS MiB "
       "| PT peak RSS MiB | Go NFE f+b | PT NFE f+b | spread Go/PT % | rounds | load |",
       "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for key in sorted(order):
    g, p = runs[key]["adamnode"], runs[key]["pytorch"]
    if not g or not p:
        continue
    gs, ps = [r["iter_seconds"] for r in g], [r["iter_seconds"] for r in p]
    nfe = lambda rs: f"{med(r['fwd_nfe'] for r in rs):g}+{med(r['bwd_nfe'] for r in rs):g}"
    spread = lambda s: (max(s) - min(s)) / med(s) * 100
    loads = [r["load1"] for r in g + p]
    fw = lambda rs: med(r["fwd_seconds"] for r in rs)
    out.append(f"| {key[0]} | {key[1]} | {med(gs):.4f} | {med(ps):.4f} | {med(ps) / med(gs):.2f} | {fw(g):.4f} / {fw(p):.4f} "
               f"| {max(r['peak_rss_mb'] for r in g):.0f} | {max(r['peak_rss_mb'] for r in p):.0f} "
               f"| {nfe(g)} | {nfe(p)} | {spread(gs):.0f}/{spread(ps):.0f} | {len(g)}/{len(p)} | {med(loads):.2f} |")
out.append("\ns/iter: the median over the rounds of each process's median over its timed iterations; "
           "ratio: PyTorch / Go (> 1: Go faster); forward s: the median time of the forward solve and the loss "
           "(the rest of an iteration is the adjoint backward pass and the Adam step); peak RSS: the largest VmHWM of the rounds; NFE: forward + "
           "backward evaluations per iteration (median); spread: (max − min) / median of the rounds' s/iter; "
           "load: the median 1-minute load average as the runs started.\n")
out.append("Checks (PyTorch against the Go reference values, before timing):\n")
for line in open(sys.argv[2]):
    c = json.loads(line)
    ge = c["check_grad_rel_err"]
    out.append(f"- {c['trace']}: right-hand side {c['rhs_rel_err']:.1e}, loss {c['check_loss_rel_err']:.1e} "
               f"({c['check_loss']:.6f} vs {c['check_loss_go']:.6f}), gradients max {max(ge.values()):.1e} "
               f"(W3 {ge['W3']:.1e}), NFE f+b {c['check_fwd_nfe']}+{c['check_bwd_nfe']} vs Go "
               f"{c['check_fwd_nfe_go']}+{c['check_bwd_nfe_go']}")
print("\n".join(out))
EOF
echo "wrote $out/table.md, $res, $out/env.txt" >&2
