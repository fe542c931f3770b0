// Command ffjordbench times training iterations of FFJORD's 2-D toy flow
// (a continuous normalizing flow, odeblock.CNF) and writes the weights
// file for the PyTorch + torchdiffeq peer (bench/torch_ffjord.py; the
// protocol is bench/compare_ffjord.sh's).
//
//	ffjordbench -trace exact -weights /tmp/w/exact.safetensors -save-only
//	GOMAXPROCS=1 ffjordbench -trace hutchinson -iters 5 -warmup 1
//
// The model: the field f(t, z) = W3·[tanh(W2·[tanh(W1·[z, t] + b1), t] +
// b2), t] + b3 on z ∈ R², width -width (the time concatenated to every
// layer's input, FFJORD's "concat" layers), PyTorch's default Linear
// initialisation; the state [z, Δ] of odeblock.CNF with the exact trace
// (autograd.TraceExact, two reverse passes) or Hutchinson's estimate with
// a Rademacher probe drawn afresh each iteration; dopri5 from t = 0 to 1
// at rtol = atol = -tol; the loss −mean log p(x) (CNF.LogProb, a standard
// normal base) of a fixed two-moons batch of -batch points; adjoint
// gradients (odeblock.Adjoint{}, torchdiffeq's default adjoint options);
// Adam, lr 1e-3. Everything is drawn from -seed, so the two traces share
// weights and data.
//
// With -weights it first writes the weights file (see Problem.Save: the
// weights, the data, the reference probe, and the reference values — the
// augmented right-hand side at [x, 0], the loss, NFE and every parameter's
// gradient of one forward and backward pass with the reference probe);
// -save-only stops there. Then it runs -warmup iterations, times -iters
// more and prints one JSON line:
//
//	{"config", "side": "adamnode", "trace", "iter_seconds": median seconds
//	 per iteration, "fwd_seconds": median seconds of its forward solve and
//	 loss, "fwd_nfe", "bwd_nfe": means over the timed iterations,
//	 "recovered": adjoint stretches re-solved (summed), "peak_rss_mb":
//	 VmHWM, "fwd_nfe_first", "bwd_nfe_first", "loss_first", "loss_last",
//	 "iters", "warmup", "threads" (GOMAXPROCS), "backend", "grad_mode"}
//
// Threads: set GOMAXPROCS (and, for the OpenBLAS build, OPENBLAS_NUM_THREADS=1).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adamnode/adamnode/tensor"
)

// Result is the JSON line printed for one run.
type Result struct {
	Config      string  `json:"config"`
	Side        string  `json:"side"`
	Trace       string  `json:"trace"`
	IterSeconds float64 `json:"iter_seconds"`
	FwdSeconds  float64 `json:"fwd_seconds"`
	FwdNFE      float64 `json:"fwd_nfe"`
	BwdNFE      float64 `json:"bwd_nfe"`
	Recovered   int     `json:"recovered"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`

	FwdNFEFirst int     `json:"fwd_nfe_first"`
	BwdNFEFirst int     `json:"bwd_nfe_first"`
	LossFirst   float64 `json:"loss_first"`
	LossLast    float64 `json:"loss_last"`
	Iters       int     `json:"iters"`
	Warmup      int     `json:"warmup"`
	Threads     int     `json:"threads"`
	Backend     string  `json:"backend"`
	GradMode    string  `json:"grad_mode"`
	Batch       int     `json:"batch"`
	Width       int     `json:"width"`
}

func main() {
	c := Config{D: 2, T1: 1, LR: 1e-3}
	flag.StringVar(&c.Trace, "trace", "exact", "divergence: exact or hutchinson")
	flag.IntVar(&c.Batch, "batch", 512, "samples per iteration")
	flag.IntVar(&c.Width, "width", 64, "width of the field's two hidden layers")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the weights, data and probes")
	tol := flag.Float64("tol", 1e-5, "rtol = atol of the forward and adjoint solves")
	iters := flag.Int("iters", 5, "timed iterations")
	warmup := flag.Int("warmup", 1, "untimed iterations before them (at least 1)")
	weights := flag.String("weights", "", "write the weights file here first (empty: none)")
	save := flag.Bool("save-only", false, "write -weights and stop")
	name := flag.String("name", "", "configuration name (default ffjord_TRACE_wWIDTH_bBATCH)")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the timed iterations here")
	flag.Parse()
	c.RTol, c.ATol = *tol, *tol
	c.Name = *name
	if c.Name == "" {
		c.Name = c.defaultName()
	}
	var bad string
	switch {
	case flag.NArg() > 0:
		bad = fmt.Sprintf("unexpected arguments %q", flag.Args())
	case *iters < 1 || *warmup < 1:
		bad = "-iters and -warmup must be at least 1"
	case *save && *weights == "":
		bad = "-save-only needs -weights"
	}
	if bad != "" {
		fmt.Fprintln(os.Stderr, "ffjordbench:", bad)
		flag.Usage()
		os.Exit(2)
	}
	if err := run(c, *weights, *save, *warmup, *iters, *prof); err != nil {
		fmt.Fprintln(os.Stderr, "ffjordbench:", err)
		os.Exit(1)
	}
}

func run(c Config, weights string, saveOnly bool, warmup, iters int, prof string) error {
	p, err := New(c)
	if err != nil {
		return err
	}
	if weights != "" {
		if err := os.MkdirAll(filepath.Dir(weights), 0o755); err != nil {
			return err
		}
		if err := p.Save(weights); err != nil {
			return err
		}
	}
	if saveOnly {
		return nil
	}
	r := Result{Config: c.Name, Side: "adamnode", Trace: c.Trace, Iters: iters, Warmup: warmup,
		Threads: runtime.GOMAXPROCS(0), Backend: tensor.Default().Name(), GradMode: "adjoint",
		Batch: c.Batch, Width: c.Width}
	for i := range warmup {
		st, err := p.Step()
		if err != nil {
			return err
		}
		if i == 0 {
			r.FwdNFEFirst, r.BwdNFEFirst, r.LossFirst = st.FwdNFE, st.BwdNFE, st.Loss
		}
	}
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	secs, fwd := make([]float64, iters), make([]float64, iters)
	for i := range secs {
		start := time.Now()
		st, err := p.Step()
		secs[i] = time.Since(start).Seconds()
		if err != nil {
			return err
		}
		fwd[i] = st.FwdSecs
		r.FwdNFE += float64(st.FwdNFE) / float64(iters)
		r.BwdNFE += float64(st.BwdNFE) / float64(iters)
		r.Recovered += st.Recovered
		r.LossLast = st.Loss
	}
	r.IterSeconds, r.FwdSeconds = median(secs), median(fwd)
	r.PeakRSSMB = vmHWM()
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return nil
}

// vmHWM returns the process's peak resident set size in MiB (VmHWM of
// /proc/self/status), or −1 where it cannot be read.
func vmHWM() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
