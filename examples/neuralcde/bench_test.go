package main

// The per-iteration timing of the neural CDE against its PyTorch +
// torchdiffeq peer (bench/neuralcde_torch.py, protocol
// bench/compare_seq.sh): BenchmarkIteration, and TestPeer, skipped unless
// given -weights FILE (write the weights, the fixed batch and one
// backprop pass's reference values for the peer) or -timed N (time N
// training iterations on the fixed batch in gradient mode -mode, the
// example's interpolated by default, and print one JSON line).
//
//	go test ./examples/neuralcde -run TestPeer -weights /tmp/cde.safetensors
//	GOMAXPROCS=1 go test ./examples/neuralcde -run TestPeer -timed 20 -mode backprop -v

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

var (
	weightsFlag = flag.String("weights", "", "TestPeer: write the weights, batch and reference values to this safetensors file")
	timedFlag   = flag.Int("timed", 0, "TestPeer: time this many training iterations on the fixed batch and print a JSON line")
	warmupFlag  = flag.Int("warmup", 2, "TestPeer: untimed iterations before -timed ones")
	modeFlag    = flag.String("mode", "interpolated", "TestPeer: the timed iterations' gradient mode (the example's: interpolated)")
)

// peerNames are the parameters of model.params, in its order, by their
// names in the PyTorch peer's state_dict.
var peerNames = []string{"initial.weight", "initial.bias", "func.net.0.weight", "func.net.0.bias",
	"func.net.2.weight", "func.net.2.bias", "readout.weight", "readout.bias"}

// counter counts the evaluations of the field (an identity appended to it).
type counter struct{ n *int }

func (c counter) Forward(_ *ag.Tape[float64], x ag.Var[float64]) ag.Var[float64] { *c.n++; return x }
func (c counter) Params() []*ag.Param[float64]                                   { return nil }

// bench is the timed problem: the default model with its weights from the
// seed, and the first batch of the training samples.
type bench struct {
	c      config
	m      *model
	d      dataset
	obs    *tensor.Tensor[float64]
	labels []int
	opt    *optim.Adam[float64]
	tp     *ag.Tape[float64]
	nfe    int // the field's evaluations, counted
}

func newBench(tb testing.TB) *bench {
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0xcde))
	d := spirals(rng, c.Train, c.Points, c.Noise)
	spirals(rng, c.Test, c.Points, c.Noise) // the test set, drawn as run does
	bn := &bench{c: c, m: newModel(rng, c.Hidden, c.Width), d: d,
		tp: ag.NewTape(tensor.EngineFor[float64](tensor.Default()))}
	idx := make([]int, c.Batch)
	for i := range idx {
		idx[i] = i
	}
	bn.obs, bn.labels = d.batch(idx)
	bn.opt = optim.NewAdam(modelParams(bn.m), optim.AdamConfig{LR: c.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	bn.m.f.Add("count", counter{&bn.nfe})
	return bn
}

// iteration runs one training iteration as train does (forward, loss,
// backward, Adam step) on the fixed batch and returns the loss and the
// field's evaluations forward and backward.
func (bn *bench) iteration(gm odeblock.GradMode, step bool) (loss float64, fwd, bwd int, err error) {
	bn.tp.Reset()
	bn.nfe = 0
	logits, err := bn.m.logits(bn.tp, bn.d.knots, bn.obs, gm, bn.c.Tol)
	if err != nil {
		return 0, 0, 0, err
	}
	l := ag.SoftmaxCrossEntropy(logits, bn.labels)
	fwd = bn.nfe
	if err := bn.tp.Backward(l); err != nil {
		return 0, 0, 0, err
	}
	if step {
		bn.opt.Step()
		bn.opt.ZeroGrad()
	}
	return l.Item(), fwd, bn.nfe - fwd, nil
}

func BenchmarkIteration(b *testing.B) {
	bn := newBench(b)
	gm, err := odeblock.ParseGradMode(bn.c.Mode)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, _, err := bn.iteration(gm, true); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPeer(t *testing.T) {
	if *weightsFlag == "" && *timedFlag == 0 {
		t.Skip("no -weights or -timed")
	}
	bn := newBench(t)
	if *weightsFlag != "" {
		if err := bn.save(*weightsFlag); err != nil {
			t.Fatal(err)
		}
	}
	if *timedFlag > 0 {
		gm, err := odeblock.ParseGradMode(*modeFlag)
		if err != nil {
			t.Fatal(err)
		}
		res, err := bn.time(gm, *warmupFlag, *timedFlag)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(res)
		fmt.Println(string(line))
	}
}

// save writes the weights file (all F64): the parameters (by peerNames),
// the batch (knots [n], obs [B, n, C], labels [B]), the gradients of one
// backprop pass (check.grad.NAME: torchdiffeq's odeint backpropagates
// through its solver) and in the metadata that pass's loss and NFE and the
// configuration.
func (bn *bench) save(path string) error {
	loss, fwd, _, err := bn.iteration(odeblock.Backprop{}, false)
	if err != nil {
		return err
	}
	ps := modelParams(bn.m)
	if len(ps) != len(peerNames) {
		return fmt.Errorf("%d parameters, %d names", len(ps), len(peerNames))
	}
	labels := tensor.New[float64](len(bn.labels))
	for i, l := range bn.labels {
		labels.Data()[i] = float64(l)
	}
	s := &layers.Safetensors{Metadata: map[string]string{
		"format": "adamnode-neuralcde/1", "check.loss": strconv.FormatFloat(loss, 'g', 17, 64),
		"check.fwd_nfe": strconv.Itoa(fwd),
		"config": fmt.Sprintf(`{"hidden": %d, "width": %d, "batch": %d, "lr": %g, "tol": %g}`,
			bn.c.Hidden, bn.c.Width, bn.c.Batch, bn.c.LR, bn.c.Tol)}}
	for i, p := range ps {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(peerNames[i], p.Value))
	}
	for i, p := range ps {
		s.Tensors = append(s.Tensors, layers.RawFromTensor("check.grad."+peerNames[i], p.Grad.Clone()))
	}
	bn.opt.ZeroGrad()
	s.Tensors = append(s.Tensors, layers.RawFromTensor("knots", tensor.FromSlice(bn.d.knots, len(bn.d.knots))),
		layers.RawFromTensor("obs", bn.obs), layers.RawFromTensor("labels", labels))
	return s.WriteFile(path)
}

// timing is the JSON line of a timed run, the fields of the PyTorch peer's.
type timing struct {
	Side        string  `json:"side"`
	Model       string  `json:"model"`
	Mode        string  `json:"mode"`
	IterSeconds float64 `json:"iter_seconds"` // the median
	FwdNFE      float64 `json:"fwd_nfe"`      // the means over the timed iterations
	BwdNFE      float64 `json:"bwd_nfe"`
	PeakRSSMB   float64 `json:"peak_rss_mb"` // VmHWM
	Threads     int     `json:"threads"`     // GOMAXPROCS
	Iters       int     `json:"iters"`
	Warmup      int     `json:"warmup"`
	LossFirst   float64 `json:"loss_first"`
	LossLast    float64 `json:"loss_last"`
}

func (bn *bench) time(gm odeblock.GradMode, warmup, iters int) (timing, error) {
	r := timing{Side: "adamnode", Model: "neuralcde", Mode: gm.String(), Threads: runtime.GOMAXPROCS(0), Iters: iters, Warmup: warmup}
	secs, fwds, bwds := make([]float64, 0, iters), 0, 0
	for i := range warmup + iters {
		start := time.Now()
		loss, fwd, bwd, err := bn.iteration(gm, true)
		if err != nil {
			return r, err
		}
		if i == 0 {
			r.LossFirst = loss
		}
		r.LossLast = loss
		if i >= warmup {
			secs = append(secs, time.Since(start).Seconds())
			fwds, bwds = fwds+fwd, bwds+bwd
		}
	}
	slices.Sort(secs)
	r.IterSeconds = (secs[(iters-1)/2] + secs[iters/2]) / 2
	r.FwdNFE, r.BwdNFE = float64(fwds)/float64(iters), float64(bwds)/float64(iters)
	r.PeakRSSMB = peakRSSMB()
	return r, nil
}

// peakRSSMB returns VmHWM from /proc/self/status in MiB (0 where there is
// none).
func peakRSSMB() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// modelParams is the parameters' list train gives Adam.
func modelParams(m *model) []*ag.Param[float64] {
	return layers.ParamsOf[float64](m.initial, m.f, m.readout)
}
