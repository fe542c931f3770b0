package odeblock_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// forwardGrads records b.Forward of f's state on a tape of eng, pulls a
// fixed cotangent back and returns the output, every gradient of f.params
// flattened, and the block's stats.
func forwardGrads(t *testing.T, eng tensor.Engine[float64], f family, b *odeblock.Block[float64]) (out, grads []float64, st odeblock.BlockStats) {
	t.Helper()
	return separateGrads(t, eng, f, func(tp *autograd.Tape[float64], z0 autograd.Var[float64]) autograd.Var[float64] {
		z, err := b.Forward(tp, z0)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}, func() odeblock.BlockStats { return b.Stats() })
}

// separateGrads is forwardGrads with the solve given as a function.
func separateGrads(t *testing.T, eng tensor.Engine[float64], f family, solve func(*autograd.Tape[float64], autograd.Var[float64]) autograd.Var[float64], stats func() odeblock.BlockStats) (out, grads []float64, st odeblock.BlockStats) {
	t.Helper()
	params := f.params()
	autograd.ZeroGrads(params)
	tp := autograd.NewTape(eng)
	z := solve(tp, f.state(tp))
	r := tensor.New[float64](z.Shape()...)
	for i := range r.Data() {
		r.Data()[i] = math.Sin(float64(i) + 1)
	}
	out = append(out, z.Value().Data()...)
	if err := tp.BackwardWith(z, r); err != nil {
		t.Fatal(err)
	}
	for _, p := range params {
		grads = append(grads, p.Grad.Data()...)
	}
	return out, grads, stats()
}

// partsOf returns the number of parts of a family's state.
func partsOf(f family) int {
	return f.dyn.(odeblock.ShardableDynamics[float64]).Parts()
}

// TestShardedSolve checks Block.Shards on every family and gradient mode:
// the output and every gradient equal those of separate blocks solving each
// shard's rows (cut as the documentation says) to rounding, the stats are
// the busiest shard's, the field sees shards only, and the whole batch
// solved at once agrees to the solver's tolerance. Three shards of 10 rows
// on four workers test uneven cuts.
func TestShardedSolve(t *testing.T) {
	const rows = 10
	var fewest atomic.Int64
	fams := familiesOf(5, rows, func(f odeblock.Field[float64]) odeblock.Field[float64] { return rowCounter{f, &fewest} })
	modes := []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Adjoint{Generic: true}, odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 3}, odeblock.Interpolated{}}
	solver := odeblock.Options{RTol: 1e-10, ATol: 1e-10}
	for _, shards := range []int{2, 3} {
		eng := tensor.EngineFor[float64](tensor.Gonum(shards + 1))
		for _, f := range fams {
			for _, mode := range modes {
				t.Run(fmt.Sprintf("%d/%s/%v", shards, f.name, mode), func(t *testing.T) {
					parts := partsOf(f)
					fewest.Store(1 << 40)
					b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.7}, Mode: mode, Solver: solver, Shards: shards}
					out, got, gs := forwardGrads(t, eng, f, b)
					if n, want := fewest.Load(), int64(rows/shards); n != want {
						t.Errorf("the field saw at least %d rows, want shards of at least %d", n, want)
					}
					if gs.Forward.NFE == 0 || gs.Backward.NFE == 0 {
						t.Errorf("stats not counted: %+v", gs)
					}

					// The reference: a block for each shard's rows.
					var refs []*odeblock.Block[float64]
					sep := func(tp *autograd.Tape[float64], z0 autograd.Var[float64]) autograd.Var[float64] {
						outs := make([][]autograd.Var[float64], parts)
						for i := range shards {
							lo, hi := rows*i/shards, rows*(i+1)/shards
							var pieces []autograd.Var[float64]
							for p := range parts {
								pieces = append(pieces, autograd.Narrow(odeblock.Part(z0, p, parts), 0, lo, hi-lo))
							}
							rb := &odeblock.Block[float64]{Dynamics: f.dyn, Times: b.Times, Mode: mode, Solver: solver}
							refs = append(refs, rb)
							z, err := rb.Forward(tp, odeblock.Stack(pieces...))
							if err != nil {
								t.Fatal(err)
							}
							for p := range parts {
								outs[p] = append(outs[p], odeblock.Part(z, p, parts))
							}
						}
						var whole []autograd.Var[float64]
						for p := range parts {
							whole = append(whole, autograd.Concat(0, outs[p]...))
						}
						return odeblock.Stack(whole...)
					}
					var most odeblock.BlockStats
					wantOut, want, _ := separateGrads(t, eng, f, sep, func() odeblock.BlockStats {
						for _, rb := range refs {
							s := rb.Stats()
							most.Forward.NFE = max(most.Forward.NFE, s.Forward.NFE)
							most.Backward.NFE = max(most.Backward.NFE, s.Backward.NFE)
						}
						return most
					})
					if d := maxRelDiff(out, wantOut); d > 1e-12 {
						t.Errorf("output: relative difference %.3g from separate solves", d)
					}
					if d := maxRelDiff(got, want); d > 1e-10 {
						t.Errorf("gradients: relative difference %.3g from separate solves", d)
					}
					if gs.Forward.NFE != most.Forward.NFE || gs.Backward.NFE != most.Backward.NFE {
						t.Errorf("stats %+v, want the busiest shard's NFE %+v", gs, most)
					}

					whole := &odeblock.Block[float64]{Dynamics: f.dyn, Times: b.Times, Mode: mode, Solver: solver}
					_, all, _ := forwardGrads(t, eng, f, whole)
					if d := maxRelDiff(got, all); d > 1e-6 {
						t.Errorf("gradients: relative difference %.3g from the whole batch's solve", d)
					}
				})
			}
		}
	}
}

// TestShardedSolveFiniteDifferences checks the sharded adjoint of AdamNODE
// and HBNODE against central differences.
func TestShardedSolveFiniteDifferences(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	for _, f := range familiesOf(6, 5, func(f odeblock.Field[float64]) odeblock.Field[float64] { return f }) {
		if f.name != "adamnode" && f.name != "hbnode" {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			b := &odeblock.Block[float64]{Dynamics: f.dyn, Times: []float64{0, 0.9}, Mode: odeblock.Adjoint{},
				Solver: odeblock.Options{RTol: 1e-12, ATol: 1e-12}, Shards: 2}
			opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5, MaxElems: 12, Engine: eng}
			fn := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
				z, err := b.Forward(tp, f.state(tp))
				if err != nil {
					t.Fatal(err)
				}
				return z
			}
			if rep, err := autograd.CheckGradients(fn, f.params(), opt); err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
		})
	}
}

// plainDynamics is dynamics that does not say it can be sharded.
type plainDynamics struct{ odeblock.Dynamics[float64] }

// TestShardedSolveFailures: dynamics that cannot be sharded, a state that
// does not split into the parts, a shard's failed solve and a step hook's
// error are errors naming what went wrong; without gradients the output is
// the same; one worker and Trajectory solve the whole batch.
func TestShardedSolveFailures(t *testing.T) {
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	fams := familiesOf(7, 4, func(f odeblock.Field[float64]) odeblock.Field[float64] { return f })
	var adam, node family
	for _, f := range fams {
		switch f.name {
		case "adamnode":
			adam = f
		case "node":
			node = f
		}
	}
	forward := func(b *odeblock.Block[float64], e tensor.Engine[float64], z0 func(tp *autograd.Tape[float64]) autograd.Var[float64]) error {
		tp := autograd.NewTape(e)
		_, err := b.Forward(tp, z0(tp))
		return err
	}
	t.Run("not shardable", func(t *testing.T) {
		b := &odeblock.Block[float64]{Dynamics: plainDynamics{adam.dyn}, Shards: 2}
		err := forward(b, eng, adam.state)
		if err == nil || !strings.Contains(err.Error(), "ShardableDynamics") {
			t.Fatalf("got %v, want an error naming ShardableDynamics", err)
		}
	})
	t.Run("parts", func(t *testing.T) {
		b := &odeblock.Block[float64]{Dynamics: adam.dyn, Shards: 2}
		err := forward(b, eng, func(tp *autograd.Tape[float64]) autograd.Var[float64] {
			return tp.Const(tensor.New[float64](4, 3))
		})
		if err == nil || !strings.Contains(err.Error(), "3 parts") {
			t.Fatalf("got %v, want an error naming the parts", err)
		}
	})
	t.Run("solve fails", func(t *testing.T) {
		b := &odeblock.Block[float64]{Dynamics: adam.dyn, Shards: 2, Solver: odeblock.Options{RTol: 1e-12, ATol: 1e-12, StepControl: odeblock.StepControl{MaxSteps: 2}}}
		err := forward(b, eng, adam.state)
		var se *odeblock.SolveError
		if !errors.As(err, &se) || !errors.Is(err, odeblock.ErrMaxSteps) || !strings.Contains(err.Error(), "shard") {
			t.Fatalf("got %v, want a shard's SolveError of too many steps", err)
		}
		// The block works again after the failure.
		b.Solver.MaxSteps = 0
		if err := forward(b, eng, adam.state); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("hook", func(t *testing.T) {
		stop := errors.New("stop here")
		var calls atomic.Int64
		b := &odeblock.Block[float64]{Dynamics: adam.dyn, Shards: 2, OnStep: func(si odeblock.StepInfo[float64]) error {
			if calls.Add(1) == 3 {
				return stop
			}
			return nil
		}}
		if err := forward(b, eng, adam.state); !errors.Is(err, stop) {
			t.Fatalf("got %v, want the hook's error", err)
		}
	})
	t.Run("no grad", func(t *testing.T) {
		b := &odeblock.Block[float64]{Dynamics: adam.dyn, Shards: 2}
		tp := autograd.NewTape(eng)
		want, err := b.Forward(tp, adam.state(tp))
		if err != nil {
			t.Fatal(err)
		}
		ng := autograd.NewTape(eng)
		ng.SetNoGrad(true)
		got, err := b.Forward(ng, adam.state(ng))
		if err != nil {
			t.Fatal(err)
		}
		if d := maxRelDiff(got.Value().Data(), want.Value().Data()); d != 0 {
			t.Errorf("without gradients the output differs by %.3g", d)
		}
	})
	var fewest atomic.Int64
	counted := familiesOf(7, 4, func(f odeblock.Field[float64]) odeblock.Field[float64] { return rowCounter{f, &fewest} })
	for _, f := range counted {
		if f.name == "node" {
			node = f
		}
	}
	for _, c := range []struct {
		name string
		eng  tensor.Engine[float64]
		traj bool
	}{
		{"one worker", tensor.EngineFor[float64](tensor.Gonum(1)), false},
		{"trajectory", eng, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fewest.Store(1 << 40)
			b := &odeblock.Block[float64]{Dynamics: node.dyn, Shards: 2}
			tp := autograd.NewTape(c.eng)
			var err error
			if c.traj {
				_, err = b.Trajectory(tp, node.state(tp))
			} else {
				_, err = b.Forward(tp, node.state(tp))
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := fewest.Load(); n != 4 {
				t.Errorf("the field saw %d rows, want the whole batch of 4", n)
			}
		})
	}
}

// TestShardedSolveNested: a block solving its batch in shards inside the
// dynamics of another block (whose VJPs then pull back through the shards'
// solves) gives central differences' gradients, adjoint and backprop
// either way.
func TestShardedSolveNested(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	inner := newMLP(rng, "f", 2, 3, 2, 0.7)
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, 3, 2))
	params := append([]*autograd.Param[float64]{x}, inner.Params()...)
	solver := odeblock.Options{RTol: 1e-10, ATol: 1e-10}
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	both := []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}}
	for _, outerMode := range both {
		for _, innerMode := range both {
			t.Run(fmt.Sprintf("%v/%v", outerMode, innerMode), func(t *testing.T) {
				var fewest atomic.Int64
				fewest.Store(1 << 40)
				counted := rowCounter{inner, &fewest}
				in := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: counted}, Times: []float64{0, 0.4}, Mode: innerMode, Solver: solver, Shards: 2}
				field := odeblock.FieldFunc(inner.Params(), func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
					z, err := in.Forward(tp, h)
					if err != nil {
						panic(err)
					}
					return autograd.Sub(z, h)
				})
				out := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.6}, Mode: outerMode, Solver: solver}
				loss := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
					z, err := out.Forward(tp, tp.Param(x))
					if err != nil {
						t.Fatal(err)
					}
					return z
				}
				opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-7, RelTol: 1e-5, Engine: eng}
				if rep, err := autograd.CheckGradients(loss, params, opt); err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
				if n := fewest.Load(); n != 1 {
					t.Errorf("the inner field saw at least %d rows, want shards of 1 and 2", n)
				}
			})
		}
	}
}

// sliceDynamics is shardable dynamics of a type that cannot be compared
// (it holds a slice), used by value: h' = f(h).
type sliceDynamics struct {
	f    odeblock.Field[float64]
	tags []string
}

func (d sliceDynamics) Eval(tp *autograd.Tape[float64], t float64, z autograd.Var[float64]) autograd.Var[float64] {
	return d.f.ForwardT(tp, t, z)
}
func (d sliceDynamics) Params() []*autograd.Param[float64]   { return d.f.Params() }
func (d sliceDynamics) Parts() int                           { return 1 }
func (d sliceDynamics) ForShard() odeblock.Dynamics[float64] { return d }

// TestShardedSolveUncomparable: dynamics of a type that cannot be compared
// are sharded pass after pass (their shards' blocks made anew), with the
// gradients of separate passes equal.
func TestShardedSolveUncomparable(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 4))
	f := newMLP(rng, "f", 3, 4, 3, 0.5)
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, 6, 3))
	b := &odeblock.Block[float64]{Dynamics: sliceDynamics{f: f, tags: []string{"a"}}, Shards: 2}
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	var first []float64
	for pass := range 2 {
		autograd.ZeroGrads(f.Params())
		tp := autograd.NewTape(eng)
		z, err := b.Forward(tp, tp.Param(x))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
			t.Fatal(err)
		}
		g := append([]float64(nil), f.Params()[0].Grad.Data()...)
		if pass == 0 {
			first = g
		} else if d := maxRelDiff(g, first); d != 0 {
			t.Errorf("pass 2's gradient differs from pass 1's by %.3g", d)
		}
	}
}

// swapDynamics scales the state by a parameter that can be swapped for
// another between passes, the dynamics' identity (a pointer) unchanged.
type swapDynamics struct{ w *autograd.Param[float64] }

func (d *swapDynamics) Eval(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
	return autograd.Mul(autograd.Tanh(z), tp.Param(d.w))
}
func (d *swapDynamics) Params() []*autograd.Param[float64]   { return []*autograd.Param[float64]{d.w} }
func (d *swapDynamics) Parts() int                           { return 1 }
func (d *swapDynamics) ForShard() odeblock.Dynamics[float64] { return d }

// TestShardedSolveParamsChange: the same dynamics whose parameter list
// changed between passes are sharded with the new list: the second pass's
// gradient of the new parameter is a one-solve block's. (Mutant: the
// shards remade only when the dynamics and the parameters both changed.)
func TestShardedSolveParamsChange(t *testing.T) {
	a := autograd.NewParam("a", tensor.FromSlice([]float64{0.5, -1, 2}, 3))
	bp := autograd.NewParam("b", tensor.FromSlice([]float64{-0.3, 0.7, 1.1}, 3))
	x := autograd.NewParam("x", tensor.FromSlice([]float64{1, 2, 3, -1, 0.5, 0.25}, 2, 3))
	dyn := &swapDynamics{w: a}
	eng := tensor.EngineFor[float64](tensor.Gonum(2))
	grad := func(blk *odeblock.Block[float64]) []float64 {
		autograd.ZeroGrads([]*autograd.Param[float64]{a, bp})
		tp := autograd.NewTape(eng)
		z, err := blk.Forward(tp, tp.Param(x))
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(autograd.Sum(autograd.Square(z))); err != nil {
			t.Fatal(err)
		}
		return append([]float64(nil), dyn.w.Grad.Data()...)
	}
	sharded := &odeblock.Block[float64]{Dynamics: dyn, Shards: 2, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
	grad(sharded)
	dyn.w = bp
	got := grad(sharded)
	want := grad(&odeblock.Block[float64]{Dynamics: dyn, Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}})
	if d := maxRelDiff(got, want); !(d < 1e-6) {
		t.Errorf("the new parameter's gradient, sharded %v, one solve %v (%.3g apart)", got, want, d)
	}
}
