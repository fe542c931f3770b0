package odeblock_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestBlockReuseDenseOutput runs one Block twice, forward and backward,
// with a method whose dense output has stages of its own (dop853) and an
// output time inside a step, in every gradient mode, and checks that the
// second pass gives the first's outputs and gradients to the bit. The
// Adjoint mode's backward solver shares the forward's work memory, so a
// forward solver that kept its dense stages across solves read the
// backward solve's values there: wrong outputs, which only the adjoint's
// drift check caught.
func TestBlockReuseDenseOutput(t *testing.T) {
	node, err := odeblock.FamilyNamed("node")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Interpolated{}, odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 2}} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			twoPassesAgree(t, tensor.EngineFor[float64](tensor.Gonum(1)), node, mode,
				odeblock.Options{Method: "dop853", RTol: 1e-6, ATol: 1e-7}, []float64{0, 0.3, 0.7})
		})
	}
}

// TestBlockEveryMethodTwice runs a Block of NODE and one of AdamNODE
// (whose right-hand side has kernels of its own) with every built-in
// method in every gradient mode, twice over, and checks that each pass
// succeeds and that the second gives the first's outputs and gradients to
// the bit: nothing a solver, a mode or the Block keeps between passes may
// leak into the next, on the CPU or on a device (the parking stand-in).
// Adaptive methods solve with tolerances, the others with a fixed Step.
func TestBlockEveryMethodTwice(t *testing.T) {
	modes := []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Interpolated{Budget: 2}, odeblock.Backprop{}, odeblock.Checkpoint{}, odeblock.Recursive{Budget: 2}}
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	for _, eng := range []struct {
		name string
		e    tensor.Engine[float64]
	}{{"cpu", cpu}, {"device", enginetest.NewParkingDevice(cpu)}} {
		for _, famName := range []string{"node", "adamnode"} {
			fam, err := odeblock.FamilyNamed(famName)
			if err != nil {
				t.Fatal(err)
			}
			for _, method := range odeblock.MethodNames() {
				opt := odeblock.Options{Method: method, RTol: 1e-6, ATol: 1e-7}
				tb, err := opt.MethodTableau()
				if err != nil {
					t.Fatal(err)
				}
				if !tb.Adaptive() {
					opt = odeblock.Options{Method: method, Step: 0.05}
				}
				if eng.name == "device" && (!tb.Explicit() || famName != "node") {
					continue // only explicit Runge–Kutta solves run on a device; one family there
				}
				for _, mode := range modes {
					t.Run(eng.name+"/"+famName+"/"+method+"/"+fmt.Sprint(mode), func(t *testing.T) {
						twoPassesAgree(t, eng.e, fam, mode, opt, []float64{0, 0.12, 0.3})
					})
				}
			}
		}
	}
}

// twoPassesAgree builds a Block of family fam over a tanh field (3 rows
// of width 4, parameters from a fixed seed) solved by opt in mode at
// times, runs it forward and backward twice on eng, and checks that each
// pass succeeds and that the second gives the first's outputs and
// parameter gradients to the bit.
func twoPassesAgree(t *testing.T, eng tensor.Engine[float64], fam odeblock.Family, mode odeblock.GradMode, opt odeblock.Options, times []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	const rows, width = 3, 4
	w := autograd.NewParam("w", tensor.RandN[float64](rng, 0, 0.5, width, width))
	b := autograd.NewParam("b", tensor.RandN[float64](rng, 0, 0.1, width))
	f := odeblock.FieldFunc([]*autograd.Param[float64]{w, b}, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Tanh(autograd.Add(autograd.MatMul(h, tp.Param(w)), tp.Param(b)))
	})
	dyn, own := odeblock.NewFamily[float64](fam, f, odeblock.PaperScalars())
	x := autograd.NewParam("x", tensor.RandN[float64](rng, 0, 1, rows, width))
	m0 := autograd.NewParam("m0", tensor.RandN[float64](rng, 0, 0.5, rows, width))
	params := append([]*autograd.Param[float64]{x, m0, w, b}, own...)
	blk := &odeblock.Block[float64]{Dynamics: dyn, Times: times, Mode: mode, Solver: opt}
	var runs [2][]float64
	for pass := range runs {
		autograd.ZeroGrads(params)
		tp := autograd.NewTape(eng)
		z, err := blk.Trajectory(tp, odeblock.InitialState(fam, tp.Param(x), tp.Param(m0)))
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if err := tp.Backward(autograd.Mean(autograd.Square(z))); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		runs[pass] = append(runs[pass], z.Value().ReadData()...)
		for _, p := range params {
			if p.Grad != nil {
				runs[pass] = append(runs[pass], p.Grad.ReadData()...)
			}
		}
	}
	if d := cmp.Diff(runs[0], runs[1]); d != "" {
		t.Errorf("second pass against the first (-first +second):\n%s", d)
	}
}
