package sde

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestBlockInAModel: a Block between two ordinary ops (x ↦ tanh(x Aᵀ),
// the SDE, a weighted sum) has the gradients of central differences with
// respect to A, y0's input and every SDE parameter, on a fixed path, for
// the gradient modes that apply to reversible Heun.
func TestBlockInAModel(t *testing.T) {
	for _, g := range []GradMode{Backprop{}, Reversible{}, Checkpoint{}} {
		method := ReversibleHeun
		if g == (Checkpoint{}) {
			method = Heun
		}
		t.Run(method+"/"+g.String(), func(t *testing.T) {
			m := newNeural(Diagonal, 7)
			r := rand.New(rand.NewPCG(3, 3))
			a := autograd.NewParam("A", tensor.RandN[float64](r, 0, 0.8, 2, 2))
			x := autograd.NewParam("x", tensor.RandN[float64](r, 0, 1, 3, 2))
			wts := tensor.RandN[float64](r, 0, 1, 3, 2)
			blk := &Block[float64]{SDE: m, Times: []float64{0, 0.5, 1}, Options: Options{Method: method, Step: 0.125, Mode: g},
				Path: mustBrownian[float64](t, 0, 1, []int{3, 2}, BrownianOptions{Seed: 4})}
			loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
				h := autograd.Tanh(autograd.Linear(tp.Param(x), tp.Param(a), autograd.Var[float64]{}))
				y, err := blk.Forward(tp, h)
				if err != nil {
					return y, err
				}
				return autograd.Sum(autograd.Mul(y, tp.Const(wts))), nil
			}
			params := append(blk.Params(), a, x)
			if _, err := autograd.CheckGradients(loss, params, autograd.GradCheckOptions{AbsTol: 1e-8, RelTol: 1e-6, Engine: engine64()}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBlockPaths: each call draws a new path, the sequence of paths is the
// Seed's (a new Block with the same Seed repeats it), a given Path is used
// by every call, the path has the shape each noise layout needs, and
// Trajectory stacks y0 and the outputs.
func TestBlockPaths(t *testing.T) {
	y0 := tensor.Full(0.2, 3, 2)
	run := func(b *Block[float64], traj bool) []float64 {
		t.Helper()
		tp := autograd.NewTape(engine64())
		tp.SetNoGrad(true)
		var y autograd.Var[float64]
		var err error
		if traj {
			y, err = b.Trajectory(tp, tp.Const(y0))
		} else {
			y, err = b.Forward(tp, tp.Const(y0))
		}
		if err != nil {
			t.Fatal(err)
		}
		return y.Value().Clone().Data()
	}
	mk := func(noise Noise) *Block[float64] {
		return &Block[float64]{SDE: newNeural(noise, 1), Options: Options{Method: Heun, Noise: noise, Step: 0.1}, BrownianSize: 2, Seed: 9}
	}
	b := mk(Diagonal)
	first, second := run(b, false), run(b, false)
	if cmp.Equal(first, second) {
		t.Error("two calls gave the same output: the path was not drawn anew")
	}
	again := mk(Diagonal)
	if d := cmp.Diff([][]float64{first, second}, [][]float64{run(again, false), run(again, false)}); d != "" {
		t.Errorf("a new Block with the same Seed (-first +again):\n%s", d)
	}
	b.Path = b.LastPath()
	if fixed := run(b, false); !cmp.Equal(fixed, run(b, false)) {
		t.Error("two calls with Path set differ")
	}
	for _, tc := range []struct {
		noise Noise
		shape []int
	}{{Diagonal, []int{3, 2}}, {Scalar, []int{3, 1}}, {General, []int{3, 2}}} {
		b := mk(tc.noise)
		run(b, false)
		if got := b.LastPath().Shape(); !cmp.Equal(got, tc.shape) {
			t.Errorf("%v noise: path shape %v, want %v", tc.noise, got, tc.shape)
		}
		if b.Stats().Steps != 10 {
			t.Errorf("%v noise: %d steps, want 10", tc.noise, b.Stats().Steps)
		}
	}
	b = mk(Diagonal)
	b.Times = []float64{0, 0.3, 1}
	traj := run(b, true)
	if len(traj) != 3*6 || !cmp.Equal(traj[:6], y0.ReadData()) {
		t.Errorf("Trajectory: %d values starting %v, want 18 starting with y0", len(traj), traj[:6])
	}
	b = mk(General)
	b.BrownianSize = 0
	tp := autograd.NewTape(engine64())
	if _, err := b.Forward(tp, tp.Const(y0)); err == nil || !strings.Contains(err.Error(), "BrownianSize") {
		t.Errorf("general noise without BrownianSize: error %v, want one naming BrownianSize", err)
	}
}

// TestBlockNoArea: a Block with NoArea draws paths without Lévy areas
// (its last path refuses IncrementArea), other paths than the same Seed's
// with areas, and the Reversible and Backprop solves on it agree.
func TestBlockNoArea(t *testing.T) {
	m := newNeural(Diagonal, 3)
	run := func(noArea bool, grad GradMode) (float64, Path[float64]) {
		b := &Block[float64]{SDE: m, Options: Options{Method: ReversibleHeun, Step: 0.125, Mode: grad}, Seed: 9, NoArea: noArea}
		tp := autograd.NewTape(engine64())
		defer tp.Release()
		y, err := b.Forward(tp, tp.Const(m.y0p.Value))
		if err != nil {
			t.Fatal(err)
		}
		return autograd.Sum(y).Item(), b.LastPath()
	}
	with, _ := run(false, Reversible{})
	without, path := run(true, Reversible{})
	if with == without {
		t.Errorf("the same result %g with and without areas: want other paths", with)
	}
	ap, ok := path.(AreaPath[float64])
	if !ok {
		t.Fatalf("last path %T is not a Brownian", path)
	}
	if err := ap.IncrementArea(tensor.New[float64](3, 2), tensor.New[float64](3, 2), 0, 0.5); err == nil {
		t.Error("IncrementArea on a NoArea path: no error")
	}
	if again, _ := run(true, Backprop{}); again != without {
		t.Errorf("Backprop on the NoArea path %.17g, Reversible %.17g", again, without)
	}
}
