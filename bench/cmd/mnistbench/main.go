// Command mnistbench times training iterations of the paper's MNIST
// AdamNODE (package mnistnode: batch 32, dopri5 at 1e-4) and writes the
// weights file the PyTorch peer (bench/torch_mnist.py) loads.
//
//	mnistbench -out mnist.safetensors -iters 5 -mode adjoint
//	mnistbench -mode recursive -budget 8 -t1 16
//
// It writes the weights file (unless -out is empty), runs -warmup
// iterations, times -iters more (each: forward, backward, an Adam step at
// torch's defaults) and prints one JSON line:
//
//	{"side": "adamnode", "iter_seconds": median seconds per iteration,
//	 "fwd_nfe", "bwd_nfe": mean NFE of the timed iterations,
//	 "peak_rss_mb": the process's peak RSS, "loss_first": the first
//	 iteration's loss (at the file's weights), "iters", "warmup",
//	 "threads" (GOMAXPROCS), "grad_mode", "t1", "stored": the most
//	 states of the forward solution the mode kept (BlockStats.Stored),
//	 "recovered": stretches the adjoint re-solved (BlockStats.Recovered)}
//
// Threads: set GOMAXPROCS (and, in the OpenBLAS build,
// OPENBLAS_NUM_THREADS=1: the backend parallelises over GOMAXPROCS
// workers itself).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/bench/mnistnode"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Result is the JSON line printed.
type Result struct {
	Side        string  `json:"side"`
	IterSeconds float64 `json:"iter_seconds"`
	FwdNFE      float64 `json:"fwd_nfe"`
	BwdNFE      float64 `json:"bwd_nfe"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	LossFirst   float64 `json:"loss_first"`
	Iters       int     `json:"iters"`
	Warmup      int     `json:"warmup"`
	Threads     int     `json:"threads"`
	GradMode    string  `json:"grad_mode"`
	T1          float64 `json:"t1"`
	Stored      int     `json:"stored"`
	Recovered   int     `json:"recovered"`
}

func main() {
	var (
		iters  = flag.Int("iters", 5, "timed iterations")
		warmup = flag.Int("warmup", 1, "untimed iterations before them (at least 1)")
		out    = flag.String("out", "", "write the weights file here first (empty: none)")
		mode   = flag.String("mode", "adjoint", "gradient mode: "+strings.Join(odeblock.GradModeNames(), ", "))
		seed   = flag.Uint64("seed", 1, "seed of the weights and the batch")
		t1     = flag.Float64("t1", 1, "end of the integration interval [0, t1] (the paper's: 1)")
		budget = flag.Int("budget", 0, "states kept by -mode recursive (0: odeblock.DefaultBudget)")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mnistbench [-out FILE] [-iters N] [-warmup N] [-mode M] [-budget K] [-t1 T] [-seed S]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	gm, err := odeblock.ParseGradMode(*mode)
	if _, ok := gm.(odeblock.Recursive); ok {
		gm = odeblock.Recursive{Budget: *budget}
	}
	if flag.NArg() > 0 || *iters < 1 || *warmup < 1 || err != nil || *budget < 0 || !(*t1 > 0) || math.IsInf(*t1, 0) {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*seed, gm, *mode, *out, *iters, *warmup, *t1); err != nil {
		fmt.Fprintln(os.Stderr, "mnistbench:", err)
		os.Exit(1)
	}
}

func run(seed uint64, gm odeblock.GradMode, mode, out string, iters, warmup int, t1 float64) error {
	m := mnistnode.New(seed, gm)
	m.Block.Times = []float64{0, t1}
	x, labels := mnistnode.Batch(seed, 32)
	if out != "" {
		if err := m.Save(out, x, labels); err != nil {
			return err
		}
	}
	params := m.Params()
	opt := optim.NewAdam(params, optim.AdamDefaults())
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	defer tp.Release()
	step := func() (float64, error) {
		tp.Reset()
		autograd.ZeroGrads(params)
		l, err := m.Loss(tp, x, labels)
		if err != nil {
			return 0, err
		}
		if err := tp.Backward(l); err != nil {
			return 0, err
		}
		opt.Step()
		return float64(l.Item()), nil
	}
	res := Result{Side: "adamnode", Iters: iters, Warmup: warmup, Threads: runtime.GOMAXPROCS(0), GradMode: mode, T1: t1}
	var secs []float64
	for i := range warmup + iters {
		t0 := time.Now()
		loss, err := step()
		if err != nil {
			return fmt.Errorf("iteration %d: %w", i+1, err)
		}
		if i == 0 {
			res.LossFirst = loss
		}
		if i >= warmup {
			secs = append(secs, time.Since(t0).Seconds())
			st := m.Block.Stats()
			res.FwdNFE += float64(st.Forward.NFE) / float64(iters)
			res.BwdNFE += float64(st.Backward.NFE) / float64(iters)
			res.Stored = max(res.Stored, st.Stored)
			res.Recovered = max(res.Recovered, st.Recovered)
		}
	}
	slices.Sort(secs)
	res.IterSeconds = secs[len(secs)/2]
	if len(secs)%2 == 0 {
		res.IterSeconds = (secs[len(secs)/2-1] + secs[len(secs)/2]) / 2
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		res.PeakRSSMB = float64(ru.Maxrss) / 1024
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
