package main

// The comparison with the PyTorch twin, bench/torch_gradpenalty.py
// (protocol: bench/models_peer.py, examples/internal/peer,
// bench/compare_models.sh). TestPeer is skipped unless given -weights FILE
// (write the check file: weights, one batch, the draws and Go's first
// iteration) or -timed N (time chunks of N training iterations on that
// batch and print a JSON line).
//
//	go test ./examples/gradpenalty -run TestPeer -weights /tmp/gp.safetensors
//	GOMAXPROCS=1 go test ./examples/gradpenalty -run TestPeer -timed 5 -v

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/examples/internal/peer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

var (
	weightsFlag = flag.String("weights", "", "TestPeer: write the check file here")
	timedFlag   = flag.Int("timed", 0, "TestPeer: time chunks of this many iterations")
	chunksFlag  = flag.Int("chunks", 5, "TestPeer: timed chunks")
	warmupFlag  = flag.Int("warmup", 2, "TestPeer: untimed iterations first")
)

// problem is the compared problem: the example's models from its seed and
// one batch of its data.
type problem struct {
	G, D  *layers.Sequential[float64]
	data  *tensor.Tensor[float64]
	batch int
}

func newProblem() problem {
	c := defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x6a9))
	data := eightGaussians(rng, c.Batch)
	G, D := newModels(rng)
	return problem{G: G, D: D, data: data, batch: c.Batch}
}

// check is the first iteration, its draws made ahead: per critic step the
// batch's permutation, the generator's noise and the penalty's mixing
// weights; then the generator step's noise.
func (p problem) check() peer.Check {
	pcg := rand.NewPCG(3, 4)
	replay := *pcg
	rr := rand.New(&replay)
	var draws []peer.Draw
	for range 5 {
		perm := rr.Perm(p.batch)
		fperm := make([]float64, len(perm))
		for i, v := range perm {
			fperm[i] = float64(v)
		}
		draws = append(draws, peer.Draw{Kind: "randperm", Value: tensor.FromSlice(fperm, len(fperm))},
			peer.Draw{Kind: "randn", Value: tensor.RandN[float64](rr, 0, 1, p.batch, 2)},
			peer.Draw{Kind: "rand", Value: tensor.RandU[float64](rr, 0, 1, p.batch, 1)})
	}
	draws = append(draws, peer.Draw{Kind: "randn", Value: tensor.RandN[float64](rr, 0, 1, p.batch, 2)})
	return peer.Check{Model: "gradpenalty", Config: map[string]any{"batch": p.batch, "lr": 1e-4, "beta1": 0, "beta2": 0.9},
		Params: slices.Concat(p.G.Params(), p.D.Params()),
		Data:   map[string]*tensor.Tensor[float64]{"data": p.data},
		Draws:  draws,
		Run:    func() ([]float64, error) { return train(p.G, p.D, p.data, 1, p.batch, rand.New(pcg)) }}
}

// TestPyTorchReference: Go's first iteration (six losses and every
// gradient left by the last steps) equals PyTorch's, stored in
// testdata/torch.safetensors by bench/torch_gradpenalty.py --write-ref
// from the same weights, batch and draws, to 1e-12.
func TestPyTorchReference(t *testing.T) {
	r, err := peer.Compare("testdata/torch.safetensors", newProblem().check())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("losses %.15g: relative error %.1e; gradients %.1e (parameter %d)", r.Losses, r.LossRelErr, r.GradRelErr, r.Worst)
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
		r, err := peer.Time("gradpenalty", "-", *warmupFlag, *chunksFlag, *timedFlag, func(n int) ([]float64, error) {
			return train(p.G, p.D, p.data, n, p.batch, rng)
		})
		if err != nil {
			t.Fatal(err)
		}
		peer.Print(r)
	}
}
