// Command mnistbench times training iterations of the paper's MNIST
// AdamNODE (package mnistnode: batch 32, dopri5 at 1e-4) and writes the
// weights file the PyTorch peer (bench/torch_mnist.py) loads.
//
//	mnistbench -out mnist.safetensors -iters 5 -mode adjoint
//	mnistbench -mode recursive -budget 8 -t1 16
//	mnistbench -batch 256 -out mnist-b256.safetensors -device cuda
//
// -batch N trains on N images (default the paper's 32), mnistnode.Batch's
// from -seed (a smaller batch is the first images of a larger one; the
// weights do not depend on it). The weights file holds the batch trained
// on and its loss, so the PyTorch peer needs the file written at the same
// -batch (its --batch checks it).
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
//	 "recovered": stretches the adjoint re-solved (BlockStats.Recovered),
//	 "replicas", "device", "batch",
//	 with -device cuda "device_peak_mb": the most device memory the
//	 backend had in use in the warm-up and timed iterations (cuda.Stats'
//	 PeakBytes, compared with torch.cuda.max_memory_allocated), and
//	 "device_pool_peak_mb": the most it held (PeakPoolBytes, with
//	 torch.cuda.max_memory_reserved), "launches_per_iter": the run-time
//	 kernels launched an iteration (cuda.Stats' Launches)}
//
// Threads: set GOMAXPROCS (and, in the OpenBLAS build,
// OPENBLAS_NUM_THREADS=1: the backend parallelises over GOMAXPROCS
// workers itself). With -replicas k the batch is split over k replicas of
// the model in goroutines, each with a one-worker backend, and their
// gradients are averaged before every Adam step (data-parallel, as
// train.RunReplicas and adamnode train --replicas): the NFE are then the
// mean of the replicas'. With -device cuda the model's GEMMs and
// convolutions run on the first GPU (package cuda: cuBLAS and cuDNN), and
// so do the elementwise work, the solvers and the optimizer (its run-time
// kernels, docs/gpu.md), one replica only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/bench/mnistnode"
	"github.com/adamnode/adamnode/cuda"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/internal/peakrss"
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
	Replicas    int     `json:"replicas"`
	Device      string  `json:"device"`
	Batch       int     `json:"batch"`
	KernelPath  string  `json:"kernel_path"` // tensor.KernelPath: avx512, avx2, neon or generic
	// With -device cuda: cuda.Stats' PeakBytes and PeakPoolBytes in MiB
	// over the warm-up and timed iterations (absent on the CPU).
	DevicePeakMB     *float64 `json:"device_peak_mb,omitempty"`
	DevicePoolPeakMB *float64 `json:"device_pool_peak_mb,omitempty"`
	// With -device cuda: the run-time kernels launched per iteration
	// (cuda.Stats' Launches, over the warm-up and timed iterations).
	LaunchesPerIter *float64 `json:"launches_per_iter,omitempty"`
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
		batch  = flag.Int("batch", 32, "images in the batch (the paper's: 32); a multiple of -replicas")
		reps   = flag.Int("replicas", 1, "data-parallel replicas of the model, each with one worker (the batch split over them)")
		shards = flag.Int("shards", 0, "solve the batch as this many separate ODEs at once, one per worker (odeblock.Block.Shards); 0 or 1: one solve")
		device = flag.String("device", "cpu", "where the GEMMs and convolutions run: cpu, or cuda (the first GPU; one replica)")
		prof   = flag.String("cpuprofile", "", "write a CPU profile of the timed iterations here (empty: none)")
		mprof  = flag.String("memprofile", "", "write a heap profile after the timed iterations here (empty: none)")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mnistbench [-out FILE] [-iters N] [-warmup N] [-mode M] [-budget K] [-t1 T] [-seed S] [-batch N] [-replicas K] [-shards K] [-device cpu|cuda] [-cpuprofile FILE] [-memprofile FILE]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	gm, err := odeblock.ParseGradMode(*mode)
	if _, ok := gm.(odeblock.Recursive); ok {
		gm = odeblock.Recursive{Budget: *budget}
	}
	if err := checkBatch(*batch, *reps); err != nil {
		fmt.Fprintln(flag.CommandLine.Output(), "mnistbench:", err)
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() > 0 || *iters < 1 || *warmup < 1 || err != nil || *budget < 0 || !(*t1 > 0) || math.IsInf(*t1, 0) || *shards < 0 || (*device != "cpu" && *device != "cuda") || (*device == "cuda" && *reps != 1) {
		flag.Usage()
		os.Exit(2)
	}
	cpuProfile, memProfile, blockShards = *prof, *mprof, *shards
	be := tensor.Default()
	if *device == "cuda" {
		if be, err = cuda.Backend(0); err != nil {
			fmt.Fprintln(os.Stderr, "mnistbench:", err)
			os.Exit(1)
		}
	}
	if err := run(be, *seed, gm, *mode, *out, *iters, *warmup, *t1, *batch, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "mnistbench:", err)
		os.Exit(1)
	}
}

// checkBatch says why a batch of n images cannot be split over k replicas.
func checkBatch(n, k int) error {
	switch {
	case n < 1:
		return fmt.Errorf("-batch %d: the batch must hold at least one image", n)
	case k < 1:
		return fmt.Errorf("-replicas %d: at least one replica", k)
	case n%k != 0:
		return fmt.Errorf("-batch %d over -replicas %d: the batch must be a multiple of the replicas", n, k)
	}
	return nil
}

// cpuProfile and memProfile are the -cpuprofile and -memprofile files,
// blockShards the -shards.
var (
	cpuProfile, memProfile string
	blockShards            int
)

func run(be tensor.Backend, seed uint64, gm odeblock.GradMode, mode, out string, iters, warmup int, t1 float64, batch, k int) error {
	reps, err := newReplicas(be, seed, gm, out, t1, batch, k)
	if err != nil {
		return err
	}
	// The device's peak over the iterations (the weights file's check
	// pass ran on the CPU; the mark starts from what is held now).
	cuda.ResetPeak(be)
	before, _ := cuda.StatsOf(be)
	defer func() {
		for _, r := range slices.Backward(reps) {
			r.tp.Release()
		}
	}()
	res := Result{Side: "adamnode", Iters: iters, Warmup: warmup, Threads: runtime.GOMAXPROCS(0), GradMode: mode, T1: t1, Replicas: k, Device: be.Name(), Batch: batch, KernelPath: tensor.KernelPath()}
	secs, stopProfile, err := iterate(reps, &res, warmup, iters)
	defer stopProfile()
	if err != nil {
		return err
	}
	if memProfile != "" {
		if err := writeHeapProfile(memProfile); err != nil {
			return err
		}
	}
	slices.Sort(secs)
	res.IterSeconds = secs[len(secs)/2]
	if len(secs)%2 == 0 {
		res.IterSeconds = (secs[len(secs)/2-1] + secs[len(secs)/2]) / 2
	}
	if s, ok := cuda.StatsOf(be); ok {
		peak, pool := float64(s.PeakBytes)/(1<<20), float64(s.PeakPoolBytes)/(1<<20)
		res.DevicePeakMB, res.DevicePoolPeakMB = &peak, &pool
		launches := float64(s.Launches-before.Launches) / float64(warmup+iters)
		res.LaunchesPerIter = &launches
	}
	res.PeakRSSMB, _ = peakrss.MiB() // 0 where the system does not report it
	return json.NewEncoder(os.Stdout).Encode(res)
}

// newReplicas builds k replicas of the model, each with its share of the
// batch of n images drawn from seed and its own tape (on one worker of be when k
// > 1), solving over [0, t1]; the first writes the weights file out if
// out is not empty.
func newReplicas(be tensor.Backend, seed uint64, gm odeblock.GradMode, out string, t1 float64, n, k int) ([]*replica, error) {
	x, labels := mnistnode.Batch(seed, n)
	reps := make([]*replica, k)
	for i := range reps {
		r := &replica{m: mnistnode.New(seed, gm)}
		r.m.Block.Times = []float64{0, t1}
		r.m.Block.Shards = blockShards
		if i == 0 && out != "" {
			if err := r.m.Save(out, x, labels); err != nil {
				return nil, err
			}
		}
		r.params = r.m.Params()
		r.opt = optim.NewAdam(r.params, optim.AdamDefaults())
		rb := be
		if k > 1 {
			rb = oneWorker(be)
		}
		r.tp = autograd.NewTape(tensor.EngineFor[float32](rb))
		b := n / k
		r.x = tensor.FromSlice(x.Data()[i*b*side*side:(i+1)*b*side*side], b, 1, side, side)
		r.labels = labels[i*b : (i+1)*b]
		reps[i] = r
	}
	return reps, nil
}

// stepAll runs one training step of every replica at once and returns
// the mean of their losses.
func stepAll(reps []*replica, comms []*distributed.Local) (float64, error) {
	k := len(reps)
	losses := make([]float64, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, r := range reps {
		wg.Go(func() { losses[i], errs[i] = r.step(comms[i], k) })
	}
	wg.Wait()
	var loss float64
	for i := range k {
		if errs[i] != nil {
			return 0, errs[i]
		}
		loss += losses[i] / float64(k)
	}
	return loss, nil
}

// iterate runs warmup untimed and iters timed training steps of the
// replicas, recording the first loss and the timed steps' statistics in
// res, and returns the timed steps' seconds. The CPU profile, if asked
// for, starts with the timed steps; the caller stops it with stop (a
// no-op when none was started).
func iterate(reps []*replica, res *Result, warmup, iters int) (secs []float64, stop func(), err error) {
	k := len(reps)
	comms := distributed.NewLocal(k)
	stop = func() {}
	for i := range warmup + iters {
		if i == warmup && cpuProfile != "" {
			if stop, err = startCPUProfile(cpuProfile); err != nil {
				return nil, stop, err
			}
		}
		t0 := time.Now()
		loss, err := stepAll(reps, comms)
		if err != nil {
			return nil, stop, fmt.Errorf("iteration %d: %w", i+1, err)
		}
		if i == 0 {
			res.LossFirst = loss
		}
		if i >= warmup {
			secs = append(secs, time.Since(t0).Seconds())
			for _, r := range reps {
				st := r.m.Block.Stats()
				res.FwdNFE += float64(st.Forward.NFE) / float64(iters*k)
				res.BwdNFE += float64(st.Backward.NFE) / float64(iters*k)
				res.Stored = max(res.Stored, st.Stored)
				res.Recovered = max(res.Recovered, st.Recovered)
			}
		}
	}
	return secs, stop, nil
}

// startCPUProfile starts a CPU profile into the file path and returns the
// function that stops it and closes the file (a no-op on an error).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return func() {}, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeHeapProfile writes a heap profile, as of a fresh collection, into
// the file path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC() // the profile shows the heap as of the last collection
	return pprof.WriteHeapProfile(f)
}

const side = 28

// replica is one data-parallel copy of the model with its share of the
// batch.
type replica struct {
	m      *mnistnode.Model
	params []*autograd.Param[float32]
	opt    optim.Optimizer[float32]
	tp     *autograd.Tape[float32]
	x      *tensor.Tensor[float32]
	labels []int
	buf    []float64 // the gradients as all-reduced, kept across steps
}

// step records the loss of the replica's share, its gradients, averages
// them with the other replicas' (c, one all-reduce) and takes the Adam
// step; it returns the share's loss.
func (r *replica) step(c *distributed.Local, k int) (float64, error) {
	r.tp.Reset()
	autograd.ZeroGrads(r.params)
	l, err := r.m.Loss(r.tp, r.x, r.labels)
	if err == nil {
		err = r.tp.Backward(l)
	}
	if k > 1 {
		buf := r.buf[:0]
		for _, p := range r.params {
			if p.Grad == nil {
				p.ZeroGrad()
			}
			for _, v := range p.Grad.Data() {
				buf = append(buf, float64(v))
			}
		}
		failed := 0.0
		if err != nil {
			failed = 1
		}
		buf = append(buf, failed)
		r.buf = buf
		if rerr := c.AllReduce(buf); rerr != nil {
			return 0, rerr
		}
		if err == nil && buf[len(buf)-1] > 0 {
			err = fmt.Errorf("another replica failed")
		}
		off := 0
		for _, p := range r.params {
			d := p.Grad.Data()
			for i := range d {
				d[i] = float32(buf[off+i] / float64(k))
			}
			off += len(d)
		}
	}
	if err != nil {
		return 0, err
	}
	r.opt.Step()
	return float64(l.Item()), nil
}

// oneWorker returns a backend of be's kind with one worker.
func oneWorker(be tensor.Backend) tensor.Backend {
	if be.Name() == "openblas" {
		if b, err := tensor.OpenBLAS(1); err == nil {
			return b
		}
	}
	return tensor.Gonum(1)
}
