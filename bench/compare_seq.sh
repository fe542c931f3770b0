#!/usr/bin/env bash
# compare_seq.sh — the latent ODE (examples/latentode) and the neural CDE
# (examples/neuralcde) timed per training iteration in Go and in PyTorch +
# torchdiffeq (bench/latentode_torch.py, bench/neuralcde_torch.py), side by
# side on identical weights and batches.
#
#   TORCHDIFFEQ=TORCHDIFFEQ_DIR bench/compare_seq.sh [-r ROUNDS] [-i ITERS]
#       [-w WARMUP] [-t "THREADS ..."] [-o DIR]
#
# Defaults: 3 rounds, 20 timed iterations after 2 warm-up ones, threads
# "1 2", DIR out/seq-compare/DATE. TORCHDIFFEQ names a directory holding
# the torchdiffeq package (torchdiffeq/__init__.py), e.g.
#   mkdir -p /tmp/tdq && git -C TORCHDIFFEQ_REPO archive HEAD torchdiffeq | tar -x -C /tmp/tdq
#
# 1. Builds the two examples' test binaries (go test -c) into a temporary
#    directory, with -tags openblas as make does where libopenblas links
#    (TAGS= in the environment: pure Go).
# 2. Each writes its weights file (TestPeer -weights: the example's default
#    model from its seed, one fixed training batch, the reference loss, NFE
#    and gradients of one backprop pass); each PyTorch peer loads it and
#    checks one pass against those values (both sides then take the same
#    steps: see the peers' docs for the step_t the check needs) before
#    anything is timed: a failed check stops the run.
# 3. Waits (at most LOAD_WAIT seconds, default 300) until the 1-minute load
#    is below LOAD_MAX (default 0.6).
# 4. For each thread count and round, runs every configuration below once,
#    one process each, Go's first in odd rounds and PyTorch's first in even
#    ones; each process runs WARMUP + ITERS training iterations (forward,
#    loss, backward, Adam step) on the fixed batch and prints one JSON line
#    (the median seconds per iteration over ITERS, the mean NFE, the peak
#    RSS: VmHWM of the process). Go runs with GOMAXPROCS=T and
#    OPENBLAS_NUM_THREADS=1; PyTorch with --threads T (torch.set_num_threads),
#    OMP_NUM_THREADS=T and OPENBLAS_NUM_THREADS=1.
#      latentode  Go: -mode backprop (the example's), -mode interpolated
#                 PyTorch: odeint interpolating at the output times (the
#                 example's, as Go's Backprop does)
#      neuralcde  Go: -mode interpolated (the example's), -mode backprop
#                 PyTorch: odeint, backprop through the solver (the example's)
# 5. Writes DIR/results.jsonl (every run's line, with "round" and "load1"),
#    DIR/checks.jsonl, DIR/env.txt and DIR/table.md.
set -euo pipefail

rounds=3 iters=20 warmup=2 threads="1 2" out=out/seq-compare/$(date -u +%Y-%m-%d)
usage() { sed -n '7,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:i:w:t:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	i) iters=$OPTARG ;;
	w) warmup=$OPTARG ;;
	t) threads=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
. bench/openblas_core.sh
if [ -z "${TORCHDIFFEQ:-}" ] || [ ! -f "$TORCHDIFFEQ/torchdiffeq/__init__.py" ]; then
	echo "compare_seq.sh: set TORCHDIFFEQ to a directory holding torchdiffeq/__init__.py" >&2
	exit 1
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tags=${TAGS-openblas}
if [ "$tags" = openblas ] && ! echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o "$tmp/probe" 2>/dev/null; then
	echo "compare_seq.sh: libopenblas does not link: building without -tags openblas" >&2
	tags=
fi
for m in latentode neuralcde; do
	go test -c ${tags:+-tags "$tags"} -o "$tmp/$m.test" "./examples/$m"
done

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
	echo "cores: $(nproc)"
	echo "openblas: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- examples/latentode examples/neuralcde bench/latentode_torch.py bench/neuralcde_torch.py 2>/dev/null || echo ' (these files differ from it)')"
	echo "go: $(go version) (test binaries built with tags: ${tags:-none})"
	echo "python: $($python --version 2>&1)"
	echo "torch: $($python -c 'import torch; print(torch.__version__)')"
	echo "torchdiffeq: $(sed -n 's/^__version__ = //p' "$TORCHDIFFEQ/torchdiffeq/__init__.py")"
	echo "rounds: $rounds, iters: $iters, warmup: $warmup, threads: $threads"
	echo "load before the checks: $(uptime)"
} >"$out/env.txt"

export PYTHONPATH=$TORCHDIFFEQ${PYTHONPATH:+:$PYTHONPATH}
echo "writing and checking the weights files" >&2
: >"$out/checks.jsonl"
for m in latentode neuralcde; do
	(cd "$tmp" && "./$m.test" -test.run '^TestPeer$' -weights "$tmp/$m.safetensors" >/dev/null)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$python" "bench/${m}_torch.py" --threads 1 --weights "$tmp/$m.safetensors" |
		"$python" -c 'import json, sys; d = json.loads(sys.stdin.read()); d["model"] = sys.argv[1]; print(json.dumps(d))' "$m" >>"$out/checks.jsonl"
done

load1() { cut -d" " -f1 /proc/loadavg; }
lmax=${LOAD_MAX:-0.6} lwait=${LOAD_WAIT:-300} waited=0
while awk -v l="$(load1)" -v m="$lmax" 'BEGIN { exit !(l >= m) }' && [ "$waited" -lt "$lwait" ]; do
	echo "compare_seq.sh: load $(load1) >= $lmax: waiting (${waited}s so far)" >&2
	sleep 30
	waited=$((waited + 30))
done
echo "load wait: ${waited}s (limit ${lwait}s, LOAD_MAX $lmax); at the start: $(uptime)" >>"$out/env.txt"

res=$out/results.jsonl
: >"$res"
tag() { "$python" -c 'import json, sys
r, load = int(sys.argv[1]), float(sys.argv[2])
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line); d["round"] = r; d["load1"] = load; print(json.dumps(d))' "$1" "$2"; }
tmo=${RUN_TIMEOUT:-300}
go_run() { # model threads round mode
	local l
	l=$(load1)
	(cd "$tmp" && GOMAXPROCS=$2 OPENBLAS_NUM_THREADS=1 timeout "$tmo" "./$1.test" -test.run '^TestPeer$' \
		-timed "$iters" -warmup "$warmup" -mode "$4") | tag "$3" "$l" >>"$res" ||
		echo "compare_seq.sh: go $1 $4 ($2 threads, round $3) failed" | tee -a "$out/failures.txt" >&2
}
torch_run() { # model threads round [flags]
	local l m=$1 t=$2 r=$3
	shift 3
	l=$(load1)
	OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$python" "bench/${m}_torch.py" --threads "$t" \
		--weights "$tmp/$m.safetensors" --time "$iters" --warmup "$warmup" "$@" | tag "$r" "$l" >>"$res" ||
		echo "compare_seq.sh: pytorch $m $* ($t threads, round $r) failed" | tee -a "$out/failures.txt" >&2
}
go_all() {
	go_run latentode "$1" "$2" backprop
	go_run latentode "$1" "$2" interpolated
	go_run neuralcde "$1" "$2" interpolated
	go_run neuralcde "$1" "$2" backprop
}
torch_all() {
	torch_run latentode "$1" "$2"
	torch_run neuralcde "$1" "$2"
}
for t in $threads; do
	echo "threads $t: load before: $(uptime)" >>"$out/env.txt"
	for r in $(seq 1 "$rounds"); do
		echo "threads $t, round $r" >&2
		if [ $((r % 2)) -eq 1 ]; then
			go_all "$t" "$r"
			torch_all "$t" "$r"
		else
			torch_all "$t" "$r"
			go_all "$t" "$r"
		fi
	done
	echo "threads $t: load after: $(uptime)" >>"$out/env.txt"
done

"$python" - "$res" "$out/checks.jsonl" >"$out/table.md" <<'EOF'
import json, statistics, sys
med = statistics.median
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs.setdefault((d["model"], d["threads"], d["side"], d["mode"]), []).append(d)
pairs = [("latentode", "backprop", "backprop", "each as its example runs: both interpolate at the output times"),
         ("latentode", "interpolated", "backprop", "both interpolating at the output times (Go: adjoint along the forward solution)"),
         ("neuralcde", "interpolated", "backprop", "each as its example runs"),
         ("neuralcde", "backprop", "backprop", "the same algorithm (backprop through dopri5)")]
out = ["| model | threads | Go mode | PyTorch mode | Go s/iter | PyTorch s/iter | ratio PT/Go | Go NFE f+b | PT NFE f | "
       "Go peak RSS MiB | PT peak RSS MiB | rounds | what |",
       "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
for t in sorted({k[1] for k in runs}):
    for model, gm, pm, what in pairs:
        g, p = runs.get((model, t, "adamnode", gm)), runs.get((model, t, "pytorch", pm))
        if not g or not p:
            continue
        gs, ps = med(r["iter_seconds"] for r in g), med(r["iter_seconds"] for r in p)
        out.append(f"| {model} | {t} | {gm} | {pm} | {gs:.4f} | {ps:.4f} | {ps / gs:.1f} "
                   f"| {med(r['fwd_nfe'] for r in g):.0f}+{med(r['bwd_nfe'] for r in g):.0f} | {med(r['fwd_nfe'] for r in p):.0f} "
                   f"| {max(r['peak_rss_mb'] for r in g):.0f} | {max(r['peak_rss_mb'] for r in p):.0f} | {len(g)}/{len(p)} | {what} |")
out.append("\ns/iter: the median over the rounds of each process's median over its timed iterations (forward, loss, "
           "backward, Adam step on one fixed batch); ratio: PyTorch / Go (> 1: Go faster); NFE: evaluations of the "
           "field per iteration, forward + backward (Go's backprop counts its recorded stages' backward as backward "
           "NFE; PyTorch's are forward only); peak RSS: the largest VmHWM of the rounds, of the whole process (Go: "
           "the test binary; PyTorch: the interpreter with torch loaded).\n")
out.append("Checks (PyTorch against Go's reference pass, before timing, both taking the same steps):\n")
for line in open(sys.argv[2]):
    c = json.loads(line)
    out.append(f"- {c['model']}: loss {c['check_loss']:.9g} vs Go {c['check_loss_go']:.9g} (rel {c['check_loss_rel_err']:.1e}), "
               f"NFE {c['check_fwd_nfe']} vs {c['check_fwd_nfe_go']}, gradients max rel {c['check_grad_rel_err_max']:.1e} "
               f"({c['check_grad_worst']})")
print("\n".join(out))
EOF
echo "wrote $out/table.md, $res, $out/env.txt" >&2
