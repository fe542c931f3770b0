package odeblock_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// rowCounter is a field that notes the fewest rows it was evaluated on.
type rowCounter struct {
	odeblock.Field[float64]
	fewest *atomic.Int64
}

func (r rowCounter) ForwardT(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	n := int64(h.Shape()[0])
	for {
		old := r.fewest.Load()
		if old <= n || r.fewest.CompareAndSwap(old, n) {
			break
		}
	}
	return r.Field.ForwardT(tp, t, h)
}

// TestShardedField checks every family with its field evaluated in two
// shards of a batch of 70: in the adjoint (specialised and generic),
// backprop and checkpoint modes it gives the gradients of the plain field
// to rounding, and AdamNODE's adjoint agrees with central differences.
func TestShardedField(t *testing.T) {
	const rows = 70
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	var fewest atomic.Int64
	plain := familiesOf(4, rows, func(f odeblock.Field[float64]) odeblock.Field[float64] { return f })
	sharded := familiesOf(4, rows, func(f odeblock.Field[float64]) odeblock.Field[float64] {
		return odeblock.ShardedField[float64](rowCounter{f, &fewest}, 2)
	})
	modes := []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Adjoint{Generic: true}, odeblock.Backprop{}, odeblock.Checkpoint{}}
	for i := range plain {
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/%v", plain[i].name, mode), func(t *testing.T) {
				block := func(f family) *odeblock.Block[float64] {
					return &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.5, 1}, Mode: mode,
						Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
				}
				fewest.Store(1 << 40)
				want, ws := gradientsOn(t, eng, plain[i], block(plain[i]))
				got, gs := gradientsOn(t, eng, sharded[i], block(sharded[i]))
				if n := fewest.Load(); n != rows/2 {
					t.Fatalf("the field saw at least %d rows, want shards of %d", n, rows/2)
				}
				if d := maxRelDiff(got, want); d > 1e-9 {
					t.Errorf("sharded vs plain: relative difference %.3g", d)
				}
				if ws.Forward.NFE != gs.Forward.NFE || ws.Backward.NFE != gs.Backward.NFE {
					t.Errorf("evaluations: plain %+v, sharded %+v", ws, gs)
				}
			})
		}
	}
	for _, f := range sharded {
		if f.name != "adamnode" {
			continue
		}
		b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.4, 0.9}, Mode: odeblock.Adjoint{},
			Solver: odeblock.Options{RTol: 1e-12, ATol: 1e-12}}
		opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5, MaxElems: 12, Engine: eng}
		if rep, err := autograd.CheckGradients(blockFunc(t, f, b), f.params(), opt); err != nil {
			t.Fatalf("%v\n%v", err, rep)
		}
	}
}
