#!/usr/bin/env bash
# compare_models.sh — six models researchers write, each as a Go example and
# as its PyTorch 1.13 (+ torchdiffeq) twin, checked equal on identical
# weights and then timed per training iteration side by side: the
# Hamiltonian network (examples/hnn, bench/torch_hnn.py), RNODE
# (examples/rnode, bench/torch_rnode.py), a CNF with its own exact trace
# (examples/cnf, bench/torch_cnf.py), a WGAN-GP (examples/gradpenalty,
# bench/torch_gradpenalty.py), the latent ODE (examples/latentode,
# bench/latentode_torch.py) and the neural CDE (examples/neuralcde,
# bench/neuralcde_torch.py).
#
#   TORCHDIFFEQ=TORCHDIFFEQ_DIR bench/compare_models.sh [-r ROUNDS]
#       [-i ITERS] [-c CHUNKS] [-w WARMUP] [-t "THREADS ..."] [-o DIR] [-u]
#
# Defaults: 3 rounds; per process WARMUP (2) untimed iterations, then CHUNKS
# (5) chunks of ITERS (5) timed ones; threads "1 2"; DIR
# out/models-compare/DATE. TORCHDIFFEQ names a directory holding the
# torchdiffeq package (torchdiffeq/__init__.py), e.g.
#   mkdir -p /tmp/tdq && git -C TORCHDIFFEQ_REPO archive HEAD torchdiffeq | tar -x -C /tmp/tdq
# -u also rewrites the PyTorch references the examples' tests compare with
# (examples/{hnn,rnode,cnf,gradpenalty}/testdata/torch.safetensors).
#
# 1. Builds the six examples' test binaries twice (go test -c): with
#    -tags openblas where libopenblas links (as make does), and without
#    (gonum's pure-Go BLAS interface over the project's own kernels).
# 2. The checks, before anything is timed (a failed one stops the run):
#    each Go example writes its check file (TestPeer -weights: the
#    example's model from its seed, one batch of its data, the random
#    draws of one iteration and Go's losses and gradients of that
#    iteration, backprop through dopri5); the PyTorch twin runs its own
#    training loop for one iteration on them and compares (float64: 1e-12
#    on the loss and on every gradient, max |torch - go| / max |go|;
#    the latent ODE, float32: 1e-6; the neural CDE: 1e-11, see
#    bench/README.md). Written to DIR/checks.jsonl.
# 3. Waits (at most LOAD_WAIT seconds, default 120) until the 1-minute
#    load is below LOAD_MAX (default 0.6); records the load either way.
# 4. For each thread count and round, runs every configuration once, one
#    process each, Go's first in odd rounds and PyTorch's first in even
#    ones. Go: GOMAXPROCS=T, OPENBLAS_NUM_THREADS=1; PyTorch:
#    torch.set_num_threads(T), OMP_NUM_THREADS=T, OPENBLAS_NUM_THREADS=1.
#      hnn, rnode, cnf  the example's loop (adjoint) on its batch; Go in
#                       both builds, the HNN also with the old workaround
#                       (-grad hvp: the gradient as HVP with a zero
#                       direction); PyTorch with odeint_adjoint
#      gradpenalty      five critic steps and a generator step
#      latentode        Go backprop (the example's), PyTorch odeint
#      neuralcde        Go interpolated adjoint (the example's), PyTorch
#                       odeint (backprop, its example's)
#    A process prints one JSON line: seconds per training iteration (the
#    median over its chunks, or over its iterations for the latent ODE and
#    the neural CDE), evaluations of the field, the peak RSS.
# 5. Profiles each Go model (the OpenBLAS build, 1 thread, 60 iterations;
#    the latent ODE and the neural CDE 100) once: DIR/profile-MODEL.txt
#    (go tool pprof -top).
# 6. Writes DIR/results.jsonl (every run's line, with "round" and "load1"),
#    DIR/env.txt, DIR/lines.md (bench/count_lines.py) and DIR/table.md.
set -euo pipefail

rounds=3 iters=5 chunks=5 warmup=2 threads="1 2" out=out/models-compare/$(date -u +%Y-%m-%d) update=
usage() { sed -n '12,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:i:c:w:t:o:uh" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	i) iters=$OPTARG ;;
	c) chunks=$OPTARG ;;
	w) warmup=$OPTARG ;;
	t) threads=$OPTARG ;;
	o) out=$OPTARG ;;
	u) update=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
. bench/openblas_core.sh
if [ -z "${TORCHDIFFEQ:-}" ] || [ ! -f "$TORCHDIFFEQ/torchdiffeq/__init__.py" ]; then
	echo "compare_models.sh: set TORCHDIFFEQ to a directory holding torchdiffeq/__init__.py" >&2
	exit 1
fi
export TORCHDIFFEQ PYTHONPATH=$TORCHDIFFEQ${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
new="hnn rnode cnf gradpenalty"
all="$new latentode neuralcde"
builds="openblas gonum"
if ! echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o "$tmp/probe" 2>/dev/null; then
	echo "compare_models.sh: libopenblas does not link: the pure-Go build only" >&2
	builds=gonum
fi
for m in $all; do
	for b in $builds; do
		tags=
		[ "$b" = openblas ] && tags="-tags openblas"
		# shellcheck disable=SC2086
		go test -c $tags -o "$tmp/$m.$b.test" "./examples/$m"
	done
done

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
	echo "cores: $(nproc)"
	echo "openblas: $(openblas_core) kernels (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
	echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- examples bench 2>/dev/null || echo ' (examples/ or bench/ differ from it)')"
	echo "go: $(go version) (builds: $builds)"
	echo "python: $($python --version 2>&1)"
	echo "torch: $($python -c 'import torch; print(torch.__version__)')"
	echo "torchdiffeq: $(sed -n 's/^__version__ = //p' "$TORCHDIFFEQ/torchdiffeq/__init__.py")"
	echo "OMP_WAIT_POLICY: ${OMP_WAIT_POLICY:-unset, the libgomp default}"
	echo "rounds: $rounds, per process: $warmup warm-up iterations, $chunks chunks of $iters; threads: $threads"
	echo "load before the checks: $(uptime)"
} >"$out/env.txt"
"$python" bench/count_lines.py >"$out/lines.md"

echo "writing and checking the check files" >&2
: >"$out/checks.jsonl"
first=${builds%% *}
for m in $new; do
	(cd "examples/$m" && "$tmp/$m.$first.test" -test.run '^TestPeer$' -weights "$tmp/$m.safetensors" >/dev/null)
	ref=()
	[ -n "$update" ] && ref=(--write-ref "examples/$m/testdata/torch.safetensors")
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$python" "bench/torch_$m.py" --threads 1 "$tmp/$m.safetensors" "${ref[@]}" >>"$out/checks.jsonl"
done
for m in latentode neuralcde; do
	tol=1e-6
	[ $m = neuralcde ] && tol=1e-11
	(cd "examples/$m" && "$tmp/$m.$first.test" -test.run '^TestPeer$' -weights "$tmp/$m.safetensors" >/dev/null)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$python" "bench/${m}_torch.py" --threads 1 --weights "$tmp/$m.safetensors" \
		--loss-rtol "$tol" --grad-rtol "$tol" |
		"$python" -c 'import json, sys; d = json.loads(sys.stdin.read()); d["model"] = sys.argv[1]; d["tol"] = float(sys.argv[2]); print(json.dumps(d))' "$m" "$tol" >>"$out/checks.jsonl"
done

load1() { cut -d" " -f1 /proc/loadavg; }
lmax=${LOAD_MAX:-0.6} lwait=${LOAD_WAIT:-120} waited=0
while awk -v l="$(load1)" -v m="$lmax" 'BEGIN { exit !(l >= m) }' && [ "$waited" -lt "$lwait" ]; do
	echo "compare_models.sh: load $(load1) >= $lmax: waiting (${waited}s so far)" >&2
	sleep 30
	waited=$((waited + 30))
done
echo "load wait: ${waited}s (limit ${lwait}s, LOAD_MAX $lmax); at the start: $(uptime)" >>"$out/env.txt"

res=$out/results.jsonl
: >"$res"
tag() { # round load build: adds them to each JSON line
	"$python" -c 'import json, sys
r, load, build = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line); d["round"] = r; d["load1"] = load; d.setdefault("build", build); print(json.dumps(d))' "$@"
}
tmo=${RUN_TIMEOUT:-300}
fail() { echo "compare_models.sh: $*" | tee -a "$out/failures.txt" >&2; }
go_run() { # model build threads round [flags]
	local m=$1 b=$2 t=$3 r=$4 l
	shift 4
	l=$(load1)
	local timed=(-timed "$iters" -chunks "$chunks" -warmup "$warmup")
	case $m in latentode | neuralcde) timed=(-timed $((iters * chunks)) -warmup "$warmup") ;; esac
	(cd "examples/$m" && GOMAXPROCS=$t OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$tmp/$m.$b.test" -test.run '^TestPeer$' \
		"${timed[@]}" "$@") | tag "$r" "$l" "$b" >>"$res" || fail "go $m $b $* ($t threads, round $r) failed"
}
torch_run() { # model threads round
	local m=$1 t=$2 r=$3 l
	l=$(load1)
	case $m in
	latentode | neuralcde)
		OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$python" "bench/${m}_torch.py" --threads "$t" \
			--weights "$tmp/$m.safetensors" --time $((iters * chunks)) --warmup "$warmup" --loss-rtol 1e-3 --grad-rtol 1e-3 |
			"$python" -c 'import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line); d["model"] = sys.argv[1]; print(json.dumps(d))' "$m" | tag "$r" "$l" "torch" >>"$res" ;;
	*)
		OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=1 timeout "$tmo" "$python" "bench/torch_$m.py" --threads "$t" \
			"$tmp/$m.safetensors" --time "$iters" --chunks "$chunks" --warmup "$warmup" | tag "$r" "$l" "torch" >>"$res" ;;
	esac || fail "pytorch $m ($t threads, round $r) failed"
}
go_all() {
	for b in $builds; do
		for m in $all; do
			go_run "$m" "$b" "$1" "$2"
		done
		go_run hnn "$b" "$1" "$2" -grad hvp
	done
}
torch_all() {
	for m in $all; do
		torch_run "$m" "$1" "$2"
	done
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

prof=${builds%% *}
for m in $all; do
	timed=(-timed 20 -chunks 3 -warmup 1)
	case $m in latentode | neuralcde) timed=(-timed 100 -warmup 1) ;; esac
	(cd "examples/$m" && GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 "$tmp/$m.$prof.test" -test.run '^TestPeer$' "${timed[@]}" \
		-test.cpuprofile "$tmp/$m.prof" >/dev/null) &&
		go tool pprof -top -nodecount=25 "$tmp/$m.$prof.test" "$tmp/$m.prof" >"$out/profile-$m.txt" 2>/dev/null ||
		fail "profile of $m failed"
done

"$python" - "$res" "$out/checks.jsonl" >"$out/table.md" <<'EOF'
import json, statistics, sys
med = statistics.median
runs = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    build = "torch" if d["side"] == "pytorch" else d["build"]
    runs.setdefault((d["model"], d["threads"], d["side"], build, d["mode"]), []).append(d)
models = [("hnn", "adjoint", "adjoint"), ("rnode", "adjoint", "adjoint"), ("cnf", "adjoint", "adjoint"),
          ("gradpenalty", "-", "-"), ("latentode", "backprop", "backprop"), ("neuralcde", "interpolated", "backprop")]
builds = sorted({k[3] for k in runs if k[2] == "adamnode"}, reverse=True)  # openblas, gonum
head = "| model | threads | PyTorch s/iter | " + " | ".join(f"Go {b} s/iter | PT/Go {b}" for b in builds) + \
       " | NFE f+b Go / PT | peak RSS MiB Go / PT | rounds |"
out = [head, "|" + "---|" * (head.count("|") - 1)]
for t in sorted({k[1] for k in runs}):
    for m, gm, pm in models:
        p = runs.get((m, t, "pytorch", "torch", pm))
        if not p:
            continue
        ps = med(r["iter_seconds"] for r in p)
        cells, g0 = [], None
        for b in builds:
            g = runs.get((m, t, "adamnode", b, gm))
            if not g:
                cells.append("– | –")
                continue
            g0 = g0 or g
            gs = med(r["iter_seconds"] for r in g)
            cells.append(f"{gs:.4f} | **{ps / gs:.2f}**")
        nfe = (f"{med(r['fwd_nfe'] for r in g0):.0f}+{med(r.get('bwd_nfe', 0) for r in g0):.0f} / "
               f"{med(r['fwd_nfe'] for r in p):.0f}+{med(r.get('bwd_nfe', 0) for r in p):.0f}") if g0 and m != "gradpenalty" else "–"
        rss = f"{max(r['peak_rss_mb'] for r in g0):.0f} / {max(r['peak_rss_mb'] for r in p):.0f}" if g0 else "–"
        out.append(f"| {m} | {t} | {ps:.4f} | " + " | ".join(cells) + f" | {nfe} | {rss} | {len(p)} |")
out.append("\ns/iter: the median over the rounds of each process's median (over its chunks of iterations, or over its "
           "iterations for the latent ODE and the neural CDE) of the seconds per training iteration; PT/Go: PyTorch's "
           "over Go's (> 1: Go faster). NFE: evaluations of the field per iteration, forward + backward (PyTorch's "
           "latent ODE and neural CDE: forward only, backprop makes none). Peak RSS: the largest VmHWM of the rounds.\n")
out.append("The HNN's gradient inside its field, GradOf against the old workaround (HVP with a zero direction), Go only:\n")
out.append("| threads | build | GradOf s/iter | HVP s/iter | HVP / GradOf |")
out.append("|---:|---|---:|---:|---:|")
for t in sorted({k[1] for k in runs}):
    for b in builds:
        g, h = runs.get(("hnn", t, "adamnode", b, "adjoint")), runs.get(("hnn", t, "adamnode", b, "adjoint-hvp"))
        if g and h:
            gs, hs = med(r["iter_seconds"] for r in g), med(r["iter_seconds"] for r in h)
            out.append(f"| {t} | {b} | {gs:.4f} | {hs:.4f} | {hs / gs:.2f} |")
out.append("\nChecks (PyTorch's first iteration against Go's on the same weights, data and draws, before timing):\n")
for line in open(sys.argv[2]):
    c = json.loads(line)
    if "check_losses" in c:
        out.append(f"- {c['model']}: loss relative error {c['check_loss_rel_err']:.1e}, gradients {c['check_grad_rel_err_max']:.1e} "
                   f"(parameter {c['check_grad_worst']}), limit {c['tol']:g}")
    else:
        out.append(f"- {c['model']}: loss relative error {c['check_loss_rel_err']:.1e}, gradients {c['check_grad_rel_err_max']:.1e} "
                   f"({c['check_grad_worst']}), NFE {c['check_fwd_nfe']} = {c['check_fwd_nfe_go']}, limit {c['tol']:g}")
print("\n".join(out))
EOF
echo "wrote $out/table.md, $res, $out/env.txt, $out/lines.md" >&2
