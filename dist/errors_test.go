package dist_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/dist"
	"github.com/adamnode/adamnode/tensor"
)

// TestMisusePanicsShapeErrors: every misuse panic of the package is a
// *tensor.ShapeError naming the operation and the shapes, which
// tensor.Recover turns into that error.
func TestMisusePanicsShapeErrors(t *testing.T) {
	tp := newTape()
	rng := rand.New(rand.NewPCG(1, 1))
	c := func(shape ...int) dist.Categorical[float64] {
		return dist.Categorical[float64]{Logits: tp.Const(tensor.New[float64](shape...))}
	}
	n := dist.Normal[float64]{Loc: tp.Const(tensor.New[float64](2, 1)), Scale: tp.Const(tensor.Full(1.0, 3))}
	for _, tc := range []struct {
		name string
		f    func()
		want []string
	}{
		{"Normal broadcast", func() {
			dist.Normal[float64]{Loc: tp.Const(tensor.New[float64](2)), Scale: tp.Const(tensor.New[float64](3))}.Sample(tp, rng)
		}, []string{"dist.Normal:", "[2]", "[3]", "do not broadcast"}},
		{"SampleN 0", func() { n.SampleN(tp, rng, 0) }, []string{"dist.Normal.SampleN", "0 samples", "[2 3]"}},
		{"SampleN negative", func() { n.SampleN(tp, rng, -4) }, []string{"dist.Normal.SampleN", "-4 samples"}},
		{"LogProb rank 0", func() { c().LogProb([]int{0}) }, []string{"dist.Categorical.LogProb", "shape []", "1 labels"}},
		{"LogProb labels", func() { c(3, 4).LogProb([]int{0, 1}) }, []string{"dist.Categorical.LogProb", "labels of shape [2]", "logits of shape [3 4]", "want [3]"}},
		{"LogProb label high", func() { c(3, 4).LogProb([]int{0, 4, 1}) }, []string{"dist.Categorical.LogProb", "label 4 of row 1", "[0, 4)", "[3 4]"}},
		{"LogProb label negative", func() { c(3, 4).LogProb([]int{0, 1, -1}) }, []string{"label -1 of row 2"}},
		{"Sample K 0", func() { c(3, 0).Sample(rng) }, []string{"dist.Categorical.Sample", "[3 0]", "K ≥ 1"}},
		{"Sample rank 0", func() { c().Sample(rng) }, []string{"dist.Categorical.Sample", "shape []"}},
	} {
		var err error
		func() {
			defer tensor.Recover(&err)
			tc.f()
		}()
		var se *tensor.ShapeError
		if !errors.As(err, &se) {
			t.Errorf("%s: tensor.Recover gave %v (%T), want a *tensor.ShapeError", tc.name, err, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
}
