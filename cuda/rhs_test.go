package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// rhsCase runs one evaluation of a family's right-hand side F(z) with the
// field g = tanh(h) ⊙ w on engine e and its backward for the cotangent c
// (Σ F ⊙ c): the values, the gradients of z, w and the family's scalars,
// and the tape's length.
func rhsCase[T tensor.Float](t *testing.T, e tensor.Engine[T], family string, scale odeblock.Scale, batch, width int) (vals, grads []float64, nodes int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, uint64(batch)))
	parts := 3
	if family != "adamnode" {
		parts = 2
	}
	z0 := tensor.RandN[T](rng, 0, 1, parts*batch, width)
	if parts == 3 { // v > 0
		zd := z0.Data()[2*batch*width:]
		for i := range zd {
			zd[i] = zd[i]*zd[i] + 0.1
		}
	}
	zp := autograd.NewParam("z", z0)
	w := autograd.NewParam("w", tensor.RandN[T](rng, 0, 1, width))
	field := odeblock.FieldFunc([]*autograd.Param[T]{w}, func(tp *autograd.Tape[T], _ float64, h autograd.Var[T]) autograd.Var[T] {
		return autograd.Mul(autograd.Tanh(h), tp.Param(w))
	})
	var dyn odeblock.Dynamics[T]
	switch family {
	case "hbnode":
		dyn = odeblock.NewHBNODE(field, -0.7)
	case "ghbnode":
		dyn = odeblock.NewGHBNODE(field, -0.7, 0.4)
	default:
		dyn = odeblock.NewAdamNODE(field, -1.5, 0.8, scale)
	}
	c := tensor.RandN[T](rng, 0, 1, parts*batch, width)
	tp := autograd.NewTape(e)
	out := dyn.Eval(tp, 0.3, tp.Param(zp))
	l := autograd.Sum(autograd.Mul(out, tp.Const(c)))
	nodes = tp.Len()
	ps := append([]*autograd.Param[T]{zp}, dyn.Params()...)
	autograd.ZeroGrads(ps)
	if err := tp.Backward(l); err != nil {
		t.Fatal(err)
	}
	for _, v := range out.Value().ReadData() {
		vals = append(vals, float64(v))
	}
	for _, p := range ps {
		for _, v := range p.Grad.ReadData() {
			grads = append(grads, float64(v))
		}
	}
	return vals, grads, nodes
}

// TestFusedRHS: AdamNODE's (both scales), HBNODE's and GHBNODE's
// right-hand sides on the engine are one node each (the engine's AdamRHS,
// HBRHS and GHBRHS, not a dozen ops), with the CPU's values and gradients
// of the state, the field's parameter and the family's scalars, in
// float32 and float64, for one element to several blocks of the sums; the
// tape holds as many nodes as the CPU's, whose AdamNODE and HBNODE are
// one fused node each and whose GHBNODE is recorded op by op (so its
// device tape is shorter).
func TestFusedRHS(t *testing.T) {
	g := gpu(t)
	if tensor.ElementwiseOf(tensor.EngineFor[float32](g)) == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	for _, c := range []struct {
		family string
		scale  odeblock.Scale
	}{{"adamnode", odeblock.ScaleSqrt}, {"adamnode", odeblock.ScaleSoftplus}, {"hbnode", 0}, {"ghbnode", 0}} {
		for _, size := range [][2]int{{1, 1}, {3, 7}, {16, 40}} {
			name := fmt.Sprintf("%s/scale=%d/%dx%d", c.family, c.scale, size[0], size[1])
			t.Run(name+"/float64", func(t *testing.T) {
				wv, wg, wn := rhsCase(t, tensor.EngineFor[float64](tensor.Gonum(1)), c.family, c.scale, size[0], size[1])
				gv, gg, gn := rhsCase(t, tensor.EngineFor[float64](g), c.family, c.scale, size[0], size[1])
				if c.family == "ghbnode" && gn >= wn || c.family != "ghbnode" && gn != wn {
					t.Errorf("%d nodes on the device's tape, %d on the CPU's: F is not one fused node", gn, wn)
				}
				approx := cmpopts.EquateApprox(1e-12, 1e-14)
				if diff := cmp.Diff(wv, gv, approx); diff != "" {
					t.Errorf("F (-cpu +device):\n%s", diff)
				}
				if diff := cmp.Diff(wg, gg, approx); diff != "" {
					t.Errorf("gradients (-cpu +device):\n%s", diff)
				}
			})
			t.Run(name+"/float32", func(t *testing.T) {
				wv, wg, _ := rhsCase(t, tensor.EngineFor[float32](tensor.Gonum(1)), c.family, c.scale, size[0], size[1])
				gv, gg, _ := rhsCase(t, tensor.EngineFor[float32](g), c.family, c.scale, size[0], size[1])
				approx := cmpopts.EquateApprox(2e-5, 1e-6)
				if diff := cmp.Diff(wv, gv, approx); diff != "" {
					t.Errorf("F (-cpu +device):\n%s", diff)
				}
				if diff := cmp.Diff(wg, gg, approx); diff != "" {
					t.Errorf("gradients (-cpu +device):\n%s", diff)
				}
			})
		}
	}
}

// TestFusedRHSMisuse: a state that is not the parts' length, or a scalar
// gradient of the wrong size, panics with a *tensor.ShapeError naming the
// method.
func TestFusedRHSMisuse(t *testing.T) {
	g := gpu(t)
	ew, ok := tensor.ElementwiseOf(tensor.EngineFor[float64](g)).(elementwise[float64])
	if !ok {
		t.Skip("the stand-in's kernels do not load")
	}
	n := func(k int) *tensor.Tensor[float64] { return tensor.New[float64](k) }
	for name, f := range map[string]func(){
		"AdamRHS":         func() { ew.AdamRHS(n(6), n(5), n(2), 0.5, 0.5, 1e-8, false) },
		"AdamRHSBackward": func() { ew.AdamRHSBackward(n(6), n(2), n(3), n(6), n(2), n(6), 0.5, 0.5, 1e-8, false) },
		"HBRHS":           func() { ew.HBRHS(n(3), n(4), n(2), 0.5) },
		"HBRHSBackward":   func() { ew.HBRHSBackward(n(4), n(2), n(2), n(4), n(4), 0.5) },
		"GHBRHS":          func() { ew.GHBRHS(n(4), n(5), n(2), 0.5, 0.5) },
		"GHBRHSBackward":  func() { ew.GHBRHSBackward(n(4), n(2), n(1), n(4), n(4), n(4), 0.5, 0.5, 0.5) },
	} {
		func() {
			defer func() {
				se, ok := recover().(*tensor.ShapeError)
				if !ok || se.Op != "cuda."+name {
					t.Errorf("%s: recovered %v, want a *tensor.ShapeError of cuda.%s", name, se, name)
				}
			}()
			f()
		}()
	}
}

// TestLaunchCount: Stats.Launches counts the run-time kernels the engine
// launches: one for a fill, one for AdamRHS, three for its backward (the
// zero part, the gradients, the sums of r1 and r2).
func TestLaunchCount(t *testing.T) {
	g := gpu(t)
	ew, ok := tensor.ElementwiseOf(tensor.EngineFor[float32](g)).(elementwise[float32])
	if !ok {
		t.Skip("the stand-in's kernels do not load")
	}
	count := func(f func()) int64 {
		before := stats(t, g)
		f()
		return stats(t, g).Launches - before.Launches
	}
	n := func(k int) *tensor.Tensor[float32] { return tensor.Full[float32](0.5, k) }
	z, gg, out := n(12), n(4), n(12)
	for _, c := range []struct {
		name string
		f    func()
		want int64
	}{
		{"Fill", func() { ew.Fill(out, 1) }, 1},
		{"AdamRHS", func() { ew.AdamRHS(out, z, gg, 0.3, 0.6, 1e-8, false) }, 1},
		{"AdamRHSBackward", func() { ew.AdamRHSBackward(n(12), n(4), n(2), z, gg, out, 0.3, 0.6, 1e-8, false) }, 3},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: %d launches, want %d", c.name, got, c.want)
		}
	}
}
