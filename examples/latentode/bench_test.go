package main

// The per-iteration timing of the latent ODE against its PyTorch +
// torchdiffeq peer (bench/latentode_torch.py, protocol
// bench/compare_seq.sh): BenchmarkIteration, and TestPeer, skipped unless
// given -weights FILE (write the weights, the fixed batch and one pass's
// reference values for the peer) or -timed N (time N training iterations
// on the fixed batch and print one JSON line; -mode picks the gradient
// mode of those, the example's backprop by default).
//
//	go test ./examples/latentode -run TestPeer -weights /tmp/lode.safetensors
//	GOMAXPROCS=1 go test ./examples/latentode -run TestPeer -timed 20 -v

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
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

var (
	weightsFlag = flag.String("weights", "", "TestPeer: write the weights, batch and reference values to this safetensors file")
	timedFlag   = flag.Int("timed", 0, "TestPeer: time this many training iterations on the fixed batch and print a JSON line")
	warmupFlag  = flag.Int("warmup", 2, "TestPeer: untimed iterations before -timed ones")
	modeFlag    = flag.String("mode", "backprop", "TestPeer: the timed iterations' gradient mode (the example's: backprop)")
)

// peerNames are the parameters of model.params, in its order, by their
// names in the PyTorch peer's state_dict.
var peerNames = []string{"rec.weight_ih", "rec.weight_hh", "rec.bias_ih", "rec.bias_hh", "to_q.weight", "to_q.bias",
	"field.0.weight", "field.0.bias", "field.2.weight", "field.2.bias", "field.4.weight", "field.4.bias",
	"dec.0.weight", "dec.0.bias", "dec.2.weight", "dec.2.bias"}

// bench is the timed problem: the default model (float32, as the example)
// with its weights from the seed, and one fixed batch of the training
// series' observed parts.
type bench struct {
	c   config
	m   *model[float32]
	b   *data.SeriesBatch[float32]
	pcg *rand.PCG // the samples' ε
	opt *optim.Adam[float32]
	tp  *ag.Tape[float32]
}

func newBench(tb testing.TB) *bench {
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x1a7e))
	series, _, err := data.SineWaves(rng, c.Train, data.SineOptions{Points: c.Points, TMax: c.TMax,
		Grid: c.Grid, MinFreq: 0.1, MaxFreq: 0.3, Noise: c.Noise})
	if err != nil {
		tb.Fatal(err)
	}
	observed, _ := data.SplitTimes(series[:c.Batch], c.Split)
	b, err := data.NewSeriesBatch[float32](observed)
	if err != nil {
		tb.Fatal(err)
	}
	m := newModel[float32](rng, c)
	return &bench{c: c, m: m, b: b, pcg: rand.NewPCG(c.Seed, 0xe95),
		opt: optim.NewAdam(modelParams(m), optim.AdamConfig{LR: c.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}),
		tp:  ag.NewTape(tensor.EngineFor[float32](tensor.Default()))}
}

// iteration runs one training iteration as trainModel does (forward, loss,
// backward, Adam step) on the fixed batch and returns the loss.
func (bn *bench) iteration(step bool) (float64, error) {
	bn.tp.Reset()
	loss := bn.m.loss(bn.tp, bn.b, bn.c.Noise, rand.New(bn.pcg))
	if err := bn.tp.Backward(loss); err != nil {
		return 0, err
	}
	if step {
		bn.opt.Step()
		bn.opt.ZeroGrad()
	}
	return float64(loss.Item()), nil
}

func BenchmarkIteration(b *testing.B) {
	bn := newBench(b)
	for b.Loop() {
		if _, err := bn.iteration(true); err != nil {
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
		bn.m.block.Mode = gm
		res, err := bn.time(*warmupFlag, *timedFlag)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(res)
		fmt.Println(string(line))
	}
}

// save writes the weights file: the parameters (by peerNames), the batch
// (times [T], x and mask [B, T, 1]), the reference pass's ε [B, latent],
// the gradients of that pass (check.grad.NAME) and in the metadata its
// loss and NFE and the configuration.
func (bn *bench) save(path string) error {
	eps := tensor.RandN[float32](rand.New(new(*bn.pcg)), 0, 1, bn.b.Len(), bn.c.Latent) // what loss draws
	loss, err := bn.iteration(false)
	if err != nil {
		return err
	}
	times := tensor.New[float32](len(bn.b.Times))
	for i, t := range bn.b.Times {
		times.Data()[i] = float32(t)
	}
	ps := modelParams(bn.m)
	if len(ps) != len(peerNames) {
		return fmt.Errorf("%d parameters, %d names", len(ps), len(peerNames))
	}
	s := &layers.Safetensors{Metadata: map[string]string{
		"format": "adamnode-latentode/1", "check.loss": strconv.FormatFloat(loss, 'g', 9, 64),
		"check.fwd_nfe": strconv.Itoa(bn.m.block.Stats().Forward.NFE),
		"config": fmt.Sprintf(`{"latent": %d, "hidden": %d, "rnn": %d, "batch": %d, "lr": %g, "tol": %g, "noise": %g}`,
			bn.c.Latent, bn.c.Hidden, bn.c.RNN, bn.c.Batch, bn.c.LR, bn.c.Tol, bn.c.Noise)}}
	for i, p := range ps {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(peerNames[i], p.Value))
	}
	for i, p := range ps {
		s.Tensors = append(s.Tensors, layers.RawFromTensor("check.grad."+peerNames[i], p.Grad.Clone()))
	}
	bn.opt.ZeroGrad()
	s.Tensors = append(s.Tensors, layers.RawFromTensor("times", times), layers.RawFromTensor("eps", eps),
		layers.RawFromTensor("x", bn.b.Values), layers.RawFromTensor("mask", bn.b.Mask))
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

func (bn *bench) time(warmup, iters int) (timing, error) {
	r := timing{Side: "adamnode", Model: "latentode", Mode: bn.m.block.Mode.String(), Threads: runtime.GOMAXPROCS(0), Iters: iters, Warmup: warmup}
	secs, fwd, bwd := make([]float64, 0, iters), 0, 0
	for i := range warmup + iters {
		start := time.Now()
		loss, err := bn.iteration(true)
		if err != nil {
			return r, err
		}
		if i == 0 {
			r.LossFirst = loss
		}
		r.LossLast = loss
		if i >= warmup {
			secs = append(secs, time.Since(start).Seconds())
			st := bn.m.block.Stats()
			fwd, bwd = fwd+st.Forward.NFE, bwd+st.Backward.NFE
		}
	}
	slices.Sort(secs)
	r.IterSeconds = (secs[(iters-1)/2] + secs[iters/2]) / 2
	r.FwdNFE, r.BwdNFE = float64(fwd)/float64(iters), float64(bwd)/float64(iters)
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

// modelParams is the parameters' list trainModel gives Adam.
func modelParams[T tensor.Float](m *model[T]) []*ag.Param[T] {
	return layers.ParamsOf[T](m.rec, m.toQ, m.block, m.dec)
}
