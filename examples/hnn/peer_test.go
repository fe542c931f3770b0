package main

// The comparison with the PyTorch twin, bench/torch_hnn.py (protocol:
// bench/models_peer.py, examples/internal/peer, bench/compare_models.sh).
// TestPeer is skipped unless given -weights FILE (write the check file:
// weights, one batch, the draws and Go's first iteration) or -timed N
// (time chunks of N training iterations on that batch and print a JSON
// line; -grad hvp times the field written with the old workaround, HVP
// with a zero direction for the gradient).
//
//	go test ./examples/hnn -run TestPeer -weights /tmp/hnn.safetensors
//	GOMAXPROCS=1 go test ./examples/hnn -run TestPeer -timed 5 -v

import (
	"flag"
	"math/rand/v2"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/examples/internal/peer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

var (
	weightsFlag = flag.String("weights", "", "TestPeer: write the check file here")
	timedFlag   = flag.Int("timed", 0, "TestPeer: time chunks of this many iterations")
	chunksFlag  = flag.Int("chunks", 5, "TestPeer: timed chunks")
	warmupFlag  = flag.Int("warmup", 2, "TestPeer: untimed iterations first")
	gradFlag    = flag.String("grad", "gradof", "TestPeer: the field's gradient: gradof (the example's) or hvp (HVP with a zero direction)")
)

// problem is the compared problem: the example's model from its seed and
// one batch of its data.
type problem struct {
	block  *odeblock.Block[float64]
	x0, xs *tensor.Tensor[float64]
	ts     []float64
	batch  int
}

func newProblem() problem {
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x4a11))
	ts := times()
	x0, xs, err := pendulum(rng, c.Batch, ts)
	if err != nil {
		panic(err)
	}
	return problem{block: newHNN(rng, ts), x0: x0, xs: xs, ts: ts, batch: c.Batch}
}

// check is the first iteration with backprop through dopri5 (the check's
// mode on both sides), its permutation drawn ahead.
func (p problem) check() peer.Check {
	pcg := rand.NewPCG(3, 4)
	replay := *pcg
	perm := rand.New(&replay).Perm(p.batch)
	fperm := make([]float64, len(perm))
	for i, v := range perm {
		fperm[i] = float64(v)
	}
	return peer.Check{Model: "hnn", Config: map[string]any{"batch": p.batch, "rtol": 1e-6, "atol": 1e-6, "lr": 1e-3},
		Params: p.block.Params(),
		Data:   map[string]*tensor.Tensor[float64]{"x0": p.x0, "xs": p.xs, "ts": tensor.FromSlice(p.ts, len(p.ts))},
		Draws:  []peer.Draw{{Kind: "randperm", Value: tensor.FromSlice(fperm, len(fperm))}},
		Run: func() ([]float64, error) {
			p.block.Mode = odeblock.Backprop{}
			defer func() { p.block.Mode = nil }()
			return train(p.block, p.x0, p.xs, 1, p.batch, rand.New(pcg))
		}}
}

// TestPyTorchReference: Go's first iteration (losses and every gradient)
// equals PyTorch's, stored in testdata/torch.safetensors by
// bench/torch_hnn.py --write-ref from the same weights and batch, to 1e-12.
func TestPyTorchReference(t *testing.T) {
	r, err := peer.Compare("testdata/torch.safetensors", newProblem().check())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loss %.15g: relative error %.1e; gradients %.1e (parameter %d)", r.Losses[0], r.LossRelErr, r.GradRelErr, r.Worst)
	if !(r.LossRelErr <= peer.Tol && r.GradRelErr <= peer.Tol) {
		t.Errorf("loss relative error %.2e, gradient %.2e (parameter %d): want both ≤ %g", r.LossRelErr, r.GradRelErr, r.Worst, peer.Tol)
	}
}

// newHNNHVP is newHNN with the gradient taken the old way: the gradient
// part of a Hessian-vector product along a zero direction.
func newHNNHVP(rng *rand.Rand, ts []float64) *odeblock.Block[float64] {
	H := layers.NewSequential[float64](layers.NewLinear[float64](rng, 2, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 64), layers.Tanh[float64]{}, layers.NewLinear[float64](rng, 64, 1))
	field := odeblock.FieldFuncErr(H.Params(), func(tp *ag.Tape[float64], _ float64, x ag.Var[float64]) (ag.Var[float64], error) {
		energy := func(x ag.Var[float64]) ag.Var[float64] { return ag.Sum(H.Forward(tp, x)) }
		dH, _, err := ag.HVP(energy, x, tp.Const(tensor.New[float64](x.Shape()...)))
		if err != nil {
			return dH, err
		}
		return ag.Concat(1, ag.Narrow(dH, 1, 1, 1), ag.Neg(ag.Narrow(dH, 1, 0, 1))), nil
	})
	return &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: ts, Solver: odeblock.Options{RTol: 1e-6, ATol: 1e-6}}
}

// TestHVPWorkaroundSame: the two fields compute the same thing (the
// timing compares like with like): one iteration's loss and gradients
// agree to rounding.
func TestHVPWorkaroundSame(t *testing.T) {
	p := newProblem()
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x4a11))
	if _, _, err := pendulum(rng, c.Batch, p.ts); err != nil {
		t.Fatal(err)
	}
	h := newHNNHVP(rng, p.ts)
	a, err := train(p.block, p.x0, p.xs, 1, p.batch, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := train(h, p.x0, p.xs, 1, p.batch, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	if d := a[0] - b[0]; d*d > 1e-24*a[0]*a[0] {
		t.Errorf("loss %v with GradOf, %v with HVP", a[0], b[0])
	}
	for i, pa := range p.block.Params() {
		if e := peer.RelErr(pa.Grad, h.Params()[i].Grad); e > 1e-10 {
			t.Errorf("parameter %d: gradients differ by %.1e", i, e)
		}
	}
}

func TestPeer(t *testing.T) {
	if *weightsFlag == "" && *timedFlag == 0 {
		t.Skip("no -weights or -timed")
	}
	p := newProblem()
	if *weightsFlag != "" {
		if err := peer.Write(*weightsFlag, p.check()); err != nil {
			t.Fatal(err)
		}
	}
	if *timedFlag > 0 {
		mode := "adjoint"
		if *gradFlag == "hvp" {
			c := defaults()
			rng := rand.New(rand.NewPCG(c.Seed, 0x4a11))
			if _, _, err := pendulum(rng, c.Batch, p.ts); err != nil {
				t.Fatal(err)
			}
			p.block, mode = newHNNHVP(rng, p.ts), "adjoint-hvp"
		}
		rng := rand.New(rand.NewPCG(9, 9))
		r, err := peer.Time("hnn", mode, *warmupFlag, *chunksFlag, *timedFlag, func(n int) ([]float64, error) {
			return train(p.block, p.x0, p.xs, n, p.batch, rng)
		}, p.block)
		if err != nil {
			t.Fatal(err)
		}
		peer.Print(r)
	}
}
