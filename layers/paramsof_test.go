package layers_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
)

// TestParamsOf: every part's parameters in order, a shared one once.
func TestParamsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := layers.NewLinear[float64](rng, 2, 3), layers.NewLinear[float32](rng, 3, 1)
	shared := layers.NewLinear[float64](rng, 3, 3)
	seq := layers.NewSequential[float64](shared, layers.Tanh[float64]{})
	got := layers.ParamsOf[float64](a, seq, shared)
	want := slices.Concat(a.Params(), shared.Params())
	if !slices.Equal(got, want) {
		t.Errorf("ParamsOf = %v, want %v", names(got), names(want))
	}
	if got := layers.ParamsOf[float32](b); !slices.Equal(got, b.Params()) {
		t.Errorf("ParamsOf of one = %v, want its Params", names(got))
	}
	if got := layers.ParamsOf[float64](); len(got) != 0 {
		t.Errorf("ParamsOf() = %v, want none", names(got))
	}
}

func names[T float32 | float64](ps []*autograd.Param[T]) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
