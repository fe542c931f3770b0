package main

// The comparison with the PyTorch twin, bench/torch_rnode.py (protocol:
// bench/models_peer.py, examples/internal/peer, bench/compare_models.sh).
// TestPeer is skipped unless given -weights FILE (write the check file:
// weights, one batch, the draws and Go's first iteration) or -timed N
// (time chunks of N training iterations on that batch and print a JSON
// line).
//
//	go test ./examples/rnode -run TestPeer -weights /tmp/rnode.safetensors
//	GOMAXPROCS=1 go test ./examples/rnode -run TestPeer -timed 5 -v

import (
	"flag"
	"math/rand/v2"
	"testing"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/examples/internal/peer"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

var (
	weightsFlag = flag.String("weights", "", "TestPeer: write the check file here")
	timedFlag   = flag.Int("timed", 0, "TestPeer: time chunks of this many iterations")
	chunksFlag  = flag.Int("chunks", 5, "TestPeer: timed chunks")
	warmupFlag  = flag.Int("warmup", 2, "TestPeer: untimed iterations first")
)

// problem is the compared problem: the example's model from its seed and
// one batch of its data.
type problem struct {
	block *odeblock.Block[float64]
	e, x  *tensor.Tensor[float64]
	batch int
}

func newProblem() problem {
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x20de))
	x := eightGaussians(rng, c.Batch)
	block, e := newRNODE(rng, c.Batch)
	return problem{block: block, e: e, x: x, batch: c.Batch}
}

// check is the first iteration with backprop through dopri5 (the check's
// mode on both sides), its permutation and probe drawn ahead.
func (p problem) check() peer.Check {
	pcg := rand.NewPCG(3, 4)
	replay := *pcg
	rr := rand.New(&replay)
	perm := rr.Perm(p.batch)
	probe := ag.GaussianProbe[float64](rr, p.batch, 2)
	fperm := make([]float64, len(perm))
	for i, v := range perm {
		fperm[i] = float64(v)
	}
	return peer.Check{Model: "rnode", Config: map[string]any{"batch": p.batch, "rtol": 1e-5, "atol": 1e-5, "lr": 1e-3},
		Params: p.block.Params(),
		Data:   map[string]*tensor.Tensor[float64]{"x": p.x},
		Draws:  []peer.Draw{{Kind: "randperm", Value: tensor.FromSlice(fperm, len(fperm))}, {Kind: "randn_like", Value: probe}},
		Run: func() ([]float64, error) {
			p.block.Mode = odeblock.Backprop{}
			defer func() { p.block.Mode = nil }()
			return train(p.block, p.e, p.x, 1, p.batch, rand.New(pcg))
		}}
}

// TestPyTorchReference: Go's first iteration (loss and every gradient)
// equals PyTorch's, stored in testdata/torch.safetensors by
// bench/torch_rnode.py --write-ref from the same weights, batch and probe,
// to 1e-12.
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
		rng := rand.New(rand.NewPCG(9, 9))
		r, err := peer.Time("rnode", "adjoint", *warmupFlag, *chunksFlag, *timedFlag, func(n int) ([]float64, error) {
			return train(p.block, p.e, p.x, n, p.batch, rng)
		}, p.block)
		if err != nil {
			t.Fatal(err)
		}
		peer.Print(r)
	}
}
