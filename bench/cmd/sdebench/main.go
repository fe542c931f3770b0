// Command sdebench times training iterations of a neural SDE (package sde)
// and writes the check file for its PyTorch + torchsde peer
// (bench/torch_sde.py; the protocol is bench/compare_sde.sh's).
//
//	sdebench -method reversible_heun -check /tmp/w/rh.json -save-only
//	GOMAXPROCS=2 sdebench -method reversible_heun -iters 10 -warmup 2
//
// The model, on a state y ∈ R^dim for a batch of -batch samples:
//
//	f(t, y) = L3(tanh(L2(tanh(L1(y)))))   drift, hidden width -width
//	g(t, y) = sigmoid(Lg(y))              diffusion, diagonal noise
//
// (nn.Linear layers with PyTorch's default initialisation, drawn from
// -seed with the data), solved from y(0) = x, a fixed batch drawn from the
// seed, to t = 1 in -steps equal steps; the loss is the mean squared error
// of y(1) against a fixed target; Adam, lr 1e-3. Each iteration draws a new
// Brownian path (sde.Brownian, seeded by the iteration, without Lévy areas,
// which neither method reads: torchsde's levy_area_approximation "none",
// its default for them). -method picks the solver and the gradient:
//
//	reversible_heun   Stratonovich; gradient sde.Reversible (exact, memory
//	                  flat in the steps) — torchsde's sdeint_adjoint with
//	                  adjoint_method adjoint_reversible_heun
//	euler             Itô; gradient sde.Backprop (every step taped) —
//	                  torchsde's sdeint, backpropagated through
//
// Training runs in float32. With -check the command first writes a JSON
// file with the float64 weights, the data, the Brownian increments of one
// fixed path on the step grid, and the loss and every parameter's gradient
// of one forward and backward pass on that path in float64, which the
// peer reproduces before it times anything; -save-only stops there.
// Then it runs -warmup iterations, times -iters more and prints one JSON
// line (Result: the median seconds per iteration and of its forward
// solve, the peak resident set size VmHWM, the peak of the Go heap, ...).
//
// Threads: set GOMAXPROCS (and, for the OpenBLAS build,
// OPENBLAS_NUM_THREADS=1).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/sde"
	"github.com/adamnode/adamnode/tensor"
)

// Result is the JSON line printed for one run.
type Result struct {
	Config      string  `json:"config"`
	Side        string  `json:"side"`
	Method      string  `json:"method"`
	GradMode    string  `json:"grad_mode"`
	IterSeconds float64 `json:"iter_seconds"`
	FwdSeconds  float64 `json:"fwd_seconds"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	// BaseRSSMB is the resident set size before the first iteration; the
	// iterations' own memory is about PeakRSSMB − BaseRSSMB.
	BaseRSSMB float64 `json:"base_rss_mb"`
	// PeakHeapMB is the largest Go heap (live and unswept objects) seen
	// after an iteration's forward solve and after its backward pass.
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// AllocMBPerIter is the memory allocated per timed iteration.
	AllocMBPerIter float64 `json:"alloc_mb_per_iter"`
	LossFirst      float64 `json:"loss_first"`
	LossLast       float64 `json:"loss_last"`
	Iters          int     `json:"iters"`
	Warmup         int     `json:"warmup"`
	Threads        int     `json:"threads"`
	Backend        string  `json:"backend"`
	Batch          int     `json:"batch"`
	Dim            int     `json:"dim"`
	Width          int     `json:"width"`
	Steps          int     `json:"steps"`
}

// Config is the problem.
type Config struct {
	Method                   string
	Batch, Dim, Width, Steps int
	Seed                     uint64
	LR                       float64
}

func main() {
	var c Config
	flag.StringVar(&c.Method, "method", sde.ReversibleHeun, "reversible_heun (Reversible gradient) or euler (Backprop)")
	flag.IntVar(&c.Batch, "batch", 512, "samples per iteration")
	flag.IntVar(&c.Dim, "dim", 8, "state dimension")
	flag.IntVar(&c.Width, "width", 64, "width of the drift's two hidden layers")
	flag.IntVar(&c.Steps, "steps", 64, "equal steps from t = 0 to 1")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the weights, data and paths")
	flag.Float64Var(&c.LR, "lr", 1e-3, "Adam's learning rate")
	iters := flag.Int("iters", 10, "timed iterations")
	warmup := flag.Int("warmup", 2, "untimed iterations before them (at least 1)")
	check := flag.String("check", "", "write the check file here first (empty: none)")
	save := flag.Bool("save-only", false, "write -check and stop")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the timed iterations here")
	flag.Parse()
	var bad string
	switch {
	case flag.NArg() > 0:
		bad = fmt.Sprintf("unexpected arguments %q", flag.Args())
	case c.Method != sde.ReversibleHeun && c.Method != sde.EulerMaruyama:
		bad = fmt.Sprintf("-method %q: want %s or %s", c.Method, sde.ReversibleHeun, sde.EulerMaruyama)
	case c.Batch < 1 || c.Dim < 1 || c.Width < 1 || c.Steps < 1:
		bad = "-batch, -dim, -width and -steps must be at least 1"
	case *iters < 1 || *warmup < 1:
		bad = "-iters and -warmup must be at least 1"
	case !(c.LR > 0):
		bad = fmt.Sprintf("-lr %g: want a learning rate > 0", c.LR)
	case *save && *check == "":
		bad = "-save-only needs -check"
	}
	if bad != "" {
		fmt.Fprintln(os.Stderr, "sdebench:", bad)
		flag.Usage()
		os.Exit(2)
	}
	if err := run(c, *check, *save, *warmup, *iters, *prof); err != nil {
		fmt.Fprintln(os.Stderr, "sdebench:", err)
		os.Exit(1)
	}
}

// Model is the neural SDE: the drift MLP and the diffusion layer.
type Model[T tensor.Float] struct {
	L1, L2, L3, Lg *layers.Linear[T]
}

// Names are the parameters' names in the check file, in Params' order.
var Names = []string{"f1.weight", "f1.bias", "f2.weight", "f2.bias", "f3.weight", "f3.bias", "g.weight", "g.bias"}

// NewModel draws the weights as PyTorch's nn.Linear does.
func NewModel(rng *rand.Rand, dim, width int) *Model[float64] {
	return &Model[float64]{
		L1: layers.NewLinear[float64](rng, dim, width),
		L2: layers.NewLinear[float64](rng, width, width),
		L3: layers.NewLinear[float64](rng, width, dim),
		Lg: layers.NewLinear[float64](rng, dim, dim),
	}
}

// Drift is f(t, y) = L3(tanh(L2(tanh(L1(y))))).
func (m *Model[T]) Drift(tp *autograd.Tape[T], _ float64, y autograd.Var[T]) autograd.Var[T] {
	return m.L3.Forward(tp, autograd.Tanh(m.L2.Forward(tp, autograd.Tanh(m.L1.Forward(tp, y)))))
}

// Diffusion is g(t, y) = sigmoid(Lg(y)), one Brownian motion per element.
func (m *Model[T]) Diffusion(tp *autograd.Tape[T], _ float64, y autograd.Var[T]) autograd.Var[T] {
	return autograd.Sigmoid(m.Lg.Forward(tp, y))
}

// Params lists the weights in Names' order.
func (m *Model[T]) Params() []*autograd.Param[T] {
	var ps []*autograd.Param[T]
	for _, l := range []*layers.Linear[T]{m.L1, m.L2, m.L3, m.Lg} {
		ps = append(ps, l.Weight, l.Bias)
	}
	return ps
}

// Float32 returns a float32 copy of the model.
func (m *Model[T]) Float32() *Model[float32] {
	cp := func(l *layers.Linear[T]) *layers.Linear[float32] {
		return &layers.Linear[float32]{
			Weight: autograd.NewParam(l.Weight.Name, convert(l.Weight.Value)),
			Bias:   autograd.NewParam(l.Bias.Name, convert(l.Bias.Value)),
		}
	}
	return &Model[float32]{L1: cp(m.L1), L2: cp(m.L2), L3: cp(m.L3), Lg: cp(m.Lg)}
}

func convert[T tensor.Float](x *tensor.Tensor[T]) *tensor.Tensor[float32] {
	d := x.ReadData()
	out := make([]float32, len(d))
	for i, v := range d {
		out[i] = float32(v)
	}
	return tensor.FromSlice(out, x.Shape()...)
}

// Problem is a model with its data and target.
type Problem[T tensor.Float] struct {
	C         Config
	M         *Model[T]
	X, Target *tensor.Tensor[T]
	eng       tensor.Engine[T]
}

// options returns the solve's options for the method.
func (c Config) options() sde.Options {
	opt := sde.Options{Method: c.Method, Noise: sde.Diagonal, Step: 1 / float64(c.Steps)}
	if c.Method == sde.ReversibleHeun {
		opt.Mode = sde.Reversible{}
	}
	return opt
}

// Loss records the solve on path and the loss on tp.
func (p *Problem[T]) Loss(tp *autograd.Tape[T], path sde.Path[T]) (autograd.Var[T], error) {
	ys, _, err := sde.Solve[T](tp, p.M, tp.Const(p.X), []float64{0, 1}, path, p.C.options())
	if err != nil {
		return autograd.Var[T]{}, err
	}
	return layers.MSE(ys[1], p.Target), nil
}

// Replay is a Path that gives the increments of a grid of equal steps on
// [0, 1] (as the check file holds them), and refuses other intervals.
type Replay[T tensor.Float] struct {
	Shp []int
	DW  [][]T // per step
}

// Shape is the shape of an increment.
func (r *Replay[T]) Shape() []int { return r.Shp }

// Increment copies the increment of the step [s, t].
func (r *Replay[T]) Increment(dst *tensor.Tensor[T], s, t float64) error {
	n := len(r.DW)
	k := int(s*float64(n) + 0.5)
	if k < 0 || k >= n || abs(s-float64(k)/float64(n)) > 1e-12 || abs(t-float64(k+1)/float64(n)) > 1e-12 {
		return fmt.Errorf("replay: [%g, %g] is not a step of the grid of %d steps", s, t, n)
	}
	copy(dst.Data(), r.DW[k])
	return nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// CheckFile is what -check writes: everything torch_sde.py needs to
// rebuild the problem and compare one pass in float64.
type CheckFile struct {
	Format string               `json:"format"`
	Method string               `json:"method"`
	Batch  int                  `json:"batch"`
	Dim    int                  `json:"dim"`
	Width  int                  `json:"width"`
	Steps  int                  `json:"steps"`
	Seed   uint64               `json:"seed"`
	LR     float64              `json:"lr"`
	Params map[string][]float64 `json:"params"`
	X      []float64            `json:"x"`
	Target []float64            `json:"target"`
	// DW holds the increments of the check's path, [steps][batch·dim].
	DW    [][]float64          `json:"dW"`
	Loss  float64              `json:"loss"`
	Grads map[string][]float64 `json:"grads"`
}

func newProblem(c Config) *Problem[float64] {
	rng := rand.New(rand.NewPCG(c.Seed, 36))
	m := NewModel(rng, c.Dim, c.Width)
	x := tensor.RandN[float64](rng, 0, 1, c.Batch, c.Dim)
	target := tensor.RandN[float64](rng, 0, 1, c.Batch, c.Dim)
	return &Problem[float64]{C: c, M: m, X: x, Target: target, eng: tensor.Default().Float64()}
}

// writeCheck runs one float64 pass on a fixed path and writes the check file.
func writeCheck(p *Problem[float64], name string) error {
	c := p.C
	b, err := sde.NewBrownian[float64](0, 1, []int{c.Batch, c.Dim}, sde.BrownianOptions{Seed: c.Seed + 1<<32})
	if err != nil {
		return err
	}
	path := &Replay[float64]{Shp: []int{c.Batch, c.Dim}}
	for k := range c.Steps {
		w, err := b.W(float64(k)/float64(c.Steps), float64(k+1)/float64(c.Steps))
		if err != nil {
			return err
		}
		path.DW = append(path.DW, slices.Clone(w.ReadData()))
	}
	tp := autograd.NewTape(p.eng)
	defer tp.Release()
	loss, err := p.Loss(tp, path)
	if err != nil {
		return err
	}
	if err := tp.Backward(loss); err != nil {
		return err
	}
	f := CheckFile{Format: "adamnode-sde/1", Method: c.Method, Batch: c.Batch, Dim: c.Dim, Width: c.Width,
		Steps: c.Steps, Seed: c.Seed, LR: c.LR, Params: map[string][]float64{}, Grads: map[string][]float64{},
		X: slices.Clone(p.X.ReadData()), Target: slices.Clone(p.Target.ReadData()), DW: path.DW, Loss: loss.Item()}
	for i, q := range p.M.Params() {
		f.Params[Names[i]] = slices.Clone(q.Value.ReadData())
		f.Grads[Names[i]] = slices.Clone(q.Grad.ReadData())
	}
	autograd.ZeroGrads(p.M.Params())
	out, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, out, 0o644)
}

func run(c Config, check string, saveOnly bool, warmup, iters int, prof string) error {
	p64 := newProblem(c)
	if check != "" {
		if err := writeCheck(p64, check); err != nil {
			return err
		}
	}
	if saveOnly {
		return nil
	}
	p := &Problem[float32]{C: c, M: p64.M.Float32(), X: convert(p64.X), Target: convert(p64.Target), eng: tensor.Default().Float32()}
	r := newResult(c, warmup, iters)
	opt := optim.NewAdam(p.M.Params(), optim.AdamConfig{LR: c.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	r.BaseRSSMB = vmHWM()
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	peakHeap := func() {
		metrics.Read(heap)
		r.PeakHeapMB = max(r.PeakHeapMB, float64(heap[0].Value.Uint64())/(1<<20))
	}
	// One tape for every iteration, reset at the start of each (as train.Fit
	// does), so that its buffers are reused as PyTorch's allocator reuses
	// its blocks.
	tp := autograd.NewTape(p.eng)
	defer tp.Release()
	step := func(i int) (loss, fwd float64, err error) {
		b, err := sde.NewBrownian[float32](0, 1, []int{c.Batch, c.Dim}, sde.BrownianOptions{Seed: c.Seed<<20 + uint64(i), NoArea: true})
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		tp.Reset()
		l, err := p.Loss(tp, b)
		if err != nil {
			return 0, 0, err
		}
		fwd = time.Since(start).Seconds()
		peakHeap()
		if err := tp.Backward(l); err != nil {
			return 0, 0, err
		}
		peakHeap()
		opt.Step()
		opt.ZeroGrad()
		return float64(l.Item()), fwd, nil
	}
	for i := range warmup {
		l, _, err := step(i)
		if err != nil {
			return err
		}
		if i == 0 {
			r.LossFirst = l
		}
	}
	stop, err := startCPUProfile(prof)
	if err != nil {
		return err
	}
	defer stop()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	secs, fwd := make([]float64, iters), make([]float64, iters)
	for i := range secs {
		start := time.Now()
		l, f, err := step(warmup + i)
		secs[i] = time.Since(start).Seconds()
		if err != nil {
			return err
		}
		fwd[i], r.LossLast = f, l
	}
	runtime.ReadMemStats(&ms1)
	r.AllocMBPerIter = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(iters) / (1 << 20)
	r.IterSeconds, r.FwdSeconds = median(secs), median(fwd)
	r.PeakRSSMB = vmHWM()
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return nil
}

// newResult returns the result line of c's run, its timings not yet in.
func newResult(c Config, warmup, iters int) Result {
	grad := "backprop"
	if c.Method == sde.ReversibleHeun {
		grad = "reversible"
	}
	return Result{Config: fmt.Sprintf("sde_%s_b%d_d%d_w%d_n%d", c.Method, c.Batch, c.Dim, c.Width, c.Steps),
		Side: "adamnode", Method: c.Method, GradMode: grad, Iters: iters, Warmup: warmup,
		Threads: runtime.GOMAXPROCS(0), Backend: tensor.Default().Name(),
		Batch: c.Batch, Dim: c.Dim, Width: c.Width, Steps: c.Steps}
}

// startCPUProfile starts a CPU profile into the file prof (none when
// empty) and returns the function that stops it.
func startCPUProfile(prof string) (stop func(), err error) {
	if prof == "" {
		return func() {}, nil
	}
	f, err := os.Create(prof)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
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
