package autograd_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// fwdCase is a function under test for JVP, Jacobian and the traces: f of
// an input shaped x, reading its parameters through tp.Param.
type fwdCase struct {
	name string
	x    []int
	f    func(tp *ag.Tape[float64], x V) V
}

func engine64() tensor.Engine[float64] { return tensor.EngineFor[float64](tensor.Default()) }

func randParam(rng *rand.Rand, name string, scale float64, shape ...int) *ag.Param[float64] {
	return ag.NewParam(name, tensor.RandN[float64](rng, 0, scale, shape...))
}

// rowMLP maps [B, d] to [B, d] row by row: L2(tanh(L1(x))) with a hidden
// layer of h, as a CNF's field does.
type rowMLP struct{ w1, b1, w2, b2 *ag.Param[float64] }

func newRowMLP(rng *rand.Rand, d, h int) rowMLP {
	return rowMLP{randParam(rng, "W1", 0.8, h, d), randParam(rng, "b1", 0.5, h), randParam(rng, "W2", 0.8, d, h), randParam(rng, "b2", 0.5, d)}
}

func (m rowMLP) params() []*ag.Param[float64] { return []*ag.Param[float64]{m.w1, m.b1, m.w2, m.b2} }

func (m rowMLP) apply(tp *ag.Tape[float64], x V) V {
	return ag.Linear(ag.Tanh(ag.Linear(x, tp.Param(m.w1), tp.Param(m.b1))), tp.Param(m.w2), tp.Param(m.b2))
}

// fwdCases: Jacobians taller than wide (the column path of Jacobian), wide
// or square ones (the row path), dense mixing of every element, and f
// that does not depend on x (through a parameter, or not at all): a zero
// Jacobian.
func fwdCases() []fwdCase {
	rng := rand.New(rand.NewPCG(21, 22))
	wTall := randParam(rng, "W", 0.8, 3, 4)
	wWide := randParam(rng, "W", 0.8, 4, 2)
	mlp := newRowMLP(rng, 3, 5)
	c := tensor.RandN[float64](rng, 0, 1, 5)
	wc := randParam(rng, "W", 1, 3)
	return []fwdCase{
		{"tanh(xW)/tall", []int{2, 3}, func(tp *ag.Tape[float64], x V) V { return ag.Tanh(ag.MatMul(x, tp.Param(wTall))) }},
		{"tanh(xW)/wide", []int{3, 4}, func(tp *ag.Tape[float64], x V) V { return ag.Tanh(ag.MatMul(x, tp.Param(wWide))) }},
		{"mlp/square", []int{3, 3}, mlp.apply},
		{"mixing", []int{4}, func(tp *ag.Tape[float64], x V) V { return ag.MulScalar(ag.Sin(x), ag.Sum(ag.Square(x))) }},
		{"scalar-in", []int{1}, func(tp *ag.Tape[float64], x V) V { return ag.Sin(ag.Mul(tp.Const(c), x)) }},
		{"scalar-out", []int{2, 3}, func(tp *ag.Tape[float64], x V) V { return ag.Sum(ag.Softplus(ag.MatMul(x, tp.Param(wTall)))) }},
		{"ignores-x", []int{2}, func(tp *ag.Tape[float64], x V) V { return ag.Tanh(tp.Param(wc)) }},
		{"constant", []int{2}, func(tp *ag.Tape[float64], x V) V { return tp.Const(c) }},
		{"torch-ops", []int{2, 3}, func(tp *ag.Tape[float64], x V) V {
			s := ag.LogSoftmax(ag.Permute(ag.Stack(0, x, ag.Square(x)), 2, 1, 0), 1) // [3, 2, 2]
			m := tensor.FromSlice([]float64{1, 0, 0, 1, 1, 1}, 3, 2, 1)
			return ag.Add(ag.Cumsum(ag.IndexSelect(s, 0, []int{2, 0, 2}), 0), ag.Where(m, ag.RDiv(1, ag.AddConst(ag.Square(ag.LogSumExp(s, 2, true)), 1)), tp.Scalar(0)))
		}},
	}
}

// backwardJacobian builds the Jacobian [m, n] of f at x row by row, each
// row from its own tape's BackwardWith a one-hot cotangent (zeros where
// no gradient reaches x).
func backwardJacobian(t *testing.T, f func(tp *ag.Tape[float64], x V) V, x *tensor.Tensor[float64]) *tensor.Tensor[float64] {
	t.Helper()
	var jac *tensor.Tensor[float64]
	for i := 0; jac == nil || i < jac.Dim(0); i++ {
		tp := ag.NewTape(engine64())
		xv := tp.Input(x)
		y := f(tp, xv)
		if jac == nil {
			jac = tensor.New[float64](y.Len(), x.Len())
		}
		if !y.RequiresGrad() {
			continue
		}
		cot := tensor.New[float64](y.Shape()...)
		cot.Data()[i] = 1
		if err := tp.BackwardWith(y, cot); err != nil {
			t.Fatal(err)
		}
		if g := xv.Grad(); g != nil {
			copy(jac.Data()[i*x.Len():], g.Data())
		}
	}
	return jac
}

// block returns rows [0, r) × columns [0, c) of the matrix m, and whether
// every element outside them is zero.
func block(m *tensor.Tensor[float64], r, c int) ([]float64, bool) {
	var in []float64
	zero := true
	for i := range m.Dim(0) {
		for j := range m.Dim(1) {
			v := m.Data()[i*m.Dim(1)+j]
			if i < r && j < c {
				in = append(in, v)
			} else if v != 0 {
				zero = false
			}
		}
	}
	return in, zero
}

var tightTol = cmpopts.EquateApprox(1e-12, 1e-14)

// TestJacobian: Jacobian against a Jacobian built from Backward, on both
// of its paths (rows by reverse passes for m ≤ n, columns by JVPs for
// m > n): each case is also run padded so that the other path computes it
// — zero output elements appended (m > n) or unused input elements
// (n ≥ m) — and must give the same block and zeros elsewhere.
func TestJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range fwdCases() {
		t.Run(c.name, func(t *testing.T) {
			x := tensor.RandN[float64](rng, 0, 1, c.x...)
			want := backwardJacobian(t, c.f, x)
			m, n := want.Dim(0), want.Dim(1)
			for _, noGrad := range []bool{false, true} {
				tp := ag.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				y, jac, err := ag.Jacobian(func(x V) V { return c.f(tp, x) }, tp.Const(x))
				if err != nil {
					t.Fatal(err)
				}
				if got := jac.Shape(); !slices.Equal(got, []int{m, n}) {
					t.Fatalf("no-grad %v: Jacobian of shape %v, want [%d %d]", noGrad, got, m, n)
				}
				if d := cmp.Diff(want.Data(), jac.Value().Data(), tightTol); d != "" {
					t.Errorf("no-grad %v: Jacobian (-Backward +Jacobian):\n%s", noGrad, d)
				}
				if y.Len() != m {
					t.Errorf("no-grad %v: y of %d elements, want %d", noGrad, y.Len(), m)
				}

				// The other path, on a padded function.
				var g func(z V) V
				var z V
				if m <= n { // pad the output: m + n + 1 > n
					g = func(x V) V {
						return ag.Concat(0, ag.Reshape(c.f(tp, x), m), tp.Const(tensor.New[float64](n+1)))
					}
					z = tp.Const(x)
				} else { // pad the input: n + m ≥ m
					g = func(z V) V { return c.f(tp, ag.Reshape(ag.Narrow(z, 0, 0, n), c.x...)) }
					zt := tensor.New[float64](n + m)
					copy(zt.Data(), x.Data())
					z = tp.Const(zt)
				}
				_, pj, err := ag.Jacobian(g, z)
				if err != nil {
					t.Fatal(err)
				}
				got, zero := block(pj.Value(), m, n)
				if d := cmp.Diff(want.Data(), got, tightTol); d != "" {
					t.Errorf("no-grad %v: Jacobian by the other path (-Backward +Jacobian):\n%s", noGrad, d)
				}
				if !zero {
					t.Errorf("no-grad %v: the padding's Jacobian is not zero: %v", noGrad, pj.Value().Data())
				}
			}
		})
	}
}

// matVec returns J·v for J [m, n] and v of n elements.
func matVec(j *tensor.Tensor[float64], v []float64) []float64 {
	m, n := j.Dim(0), j.Dim(1)
	out := make([]float64, m)
	for i := range m {
		for k := range n {
			out[i] += j.Data()[i*n+k] * v[k]
		}
	}
	return out
}

// TestJVP: JVP's y is f(x) and its J·v is the Backward Jacobian times v,
// shaped like y, with x a constant or an Input, in grad and no-grad mode.
func TestJVP(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range fwdCases() {
		x := tensor.RandN[float64](rng, 0, 1, c.x...)
		v := tensor.RandN[float64](rng, 0, 1, c.x...)
		jac := backwardJacobian(t, c.f, x)
		want := matVec(jac, v.Data())
		for _, input := range []bool{false, true} {
			for _, noGrad := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/input=%v/nograd=%v", c.name, input, noGrad), func(t *testing.T) {
					tp := ag.NewTape(engine64())
					xv := tp.Const(x)
					if input {
						xv = tp.Input(x)
					}
					tp.SetNoGrad(noGrad)
					y, jv, err := ag.JVP(func(x V) V { return c.f(tp, x) }, xv, tp.Const(v))
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(jv.Shape(), y.Shape()) {
						t.Fatalf("J·v of shape %v for y of shape %v", jv.Shape(), y.Shape())
					}
					if d := cmp.Diff(want, jv.Value().Data(), tightTol); d != "" {
						t.Errorf("J·v (-Backward +JVP):\n%s", d)
					}
					plain := ag.NewTape(engine64())
					plain.SetNoGrad(true)
					if d := cmp.Diff(c.f(plain, plain.Const(x)).Value().Data(), y.Value().Data()); d != "" {
						t.Errorf("y (-f(x) +JVP):\n%s", d)
					}
				})
			}
		}
	}
}

// scalarCase is a scalar function for HVP.
type scalarCase struct {
	name string
	x    []int
	f    func(tp *ag.Tape[float64], x V) V
	// hv, when set, is the exact Hessian-vector product.
	hv func(x, v *tensor.Tensor[float64]) []float64
}

func scalarCases() []scalarCase {
	rng := rand.New(rand.NewPCG(31, 32))
	mlp := newRowMLP(rng, 3, 4)
	a := tensor.RandN[float64](rng, 0, 1, 3, 3)
	return []scalarCase{
		{name: "softplus(mlp)", x: []int{2, 3}, f: func(tp *ag.Tape[float64], x V) V { return ag.Sum(ag.Softplus(mlp.apply(tp, x))) }},
		{name: "mixing", x: []int{4}, f: func(tp *ag.Tape[float64], x V) V { return ag.Mul(ag.Sum(ag.Sin(x)), ag.Sum(ag.Square(x))) }},
		{name: "quadratic", x: []int{1, 3}, f: func(tp *ag.Tape[float64], x V) V { return ag.Sum(ag.Mul(x, ag.MatMul(x, tp.Const(a)))) },
			hv: func(_, v *tensor.Tensor[float64]) []float64 { // (A + Aᵀ)·v
				out := make([]float64, 3)
				for i := range 3 {
					for k := range 3 {
						out[i] += (a.Data()[i*3+k] + a.Data()[k*3+i]) * v.Data()[k]
					}
				}
				return out
			}},
		{name: "linear", x: []int{3}, f: func(tp *ag.Tape[float64], x V) V { return ag.Sum(ag.Scale(x, 3)) },
			hv: func(_, v *tensor.Tensor[float64]) []float64 { return make([]float64, v.Len()) }},
	}
}

// backwardGrad returns ∇f(x) by Backward.
func backwardGrad(t *testing.T, f func(tp *ag.Tape[float64], x V) V, x *tensor.Tensor[float64]) []float64 {
	t.Helper()
	tp := ag.NewTape(engine64())
	xv := tp.Input(x)
	if err := tp.Backward(f(tp, xv)); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(xv.Grad().Data())
}

// TestHVP: HVP's gradient is Backward's, and its H·v matches central
// differences of Backward's gradient along v (and the exact (A + Aᵀ)·v of
// a quadratic form), in grad and no-grad mode.
func TestHVP(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range scalarCases() {
		x := tensor.RandN[float64](rng, 0, 1, c.x...)
		v := tensor.RandN[float64](rng, 0, 1, c.x...)
		wantG := backwardGrad(t, c.f, x)
		const h = 1e-5
		shifted := func(s float64) []float64 {
			xs := x.Clone()
			xs.Axpy(s, v)
			return backwardGrad(t, c.f, xs)
		}
		up, down := shifted(h), shifted(-h)
		wantHV := make([]float64, len(up))
		for i := range up {
			wantHV[i] = (up[i] - down[i]) / (2 * h)
		}
		for _, noGrad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nograd=%v", c.name, noGrad), func(t *testing.T) {
				tp := ag.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				g, hv, err := ag.HVP(func(x V) V { return c.f(tp, x) }, tp.Const(x), tp.Const(v))
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(wantG, g.Value().Data(), tightTol); d != "" {
					t.Errorf("∇f (-Backward +HVP):\n%s", d)
				}
				if d := cmp.Diff(wantHV, hv.Value().Data(), cmpopts.EquateApprox(1e-7, 1e-8)); d != "" {
					t.Errorf("H·v (-central differences +HVP):\n%s", d)
				}
				if c.hv != nil {
					if d := cmp.Diff(c.hv(x, v), hv.Value().Data(), tightTol); d != "" {
						t.Errorf("H·v (-exact +HVP):\n%s", d)
					}
				}
			})
		}
	}
}

// rowCases are functions mapping [B, D] to [B, D] row by row, for the
// traces; the last two have a constant Jacobian and a zero one.
func rowCases() []fwdCase {
	rng := rand.New(rand.NewPCG(41, 42))
	mlp := newRowMLP(rng, 3, 5)
	w := randParam(rng, "W", 0.8, 2, 2)
	lin := randParam(rng, "L", 1, 1, 1)
	wz := randParam(rng, "Z", 1, 3, 1)
	return []fwdCase{
		{"mlp", []int{4, 3}, mlp.apply},
		{"gated-residual", []int{5, 2}, func(tp *ag.Tape[float64], x V) V {
			return ag.Add(x, ag.Mul(ag.Tanh(ag.Linear(x, tp.Param(w), V{})), ag.Sigmoid(x)))
		}},
		{"D=1", []int{3, 1}, func(tp *ag.Tape[float64], x V) V { return ag.Sin(ag.Linear(x, tp.Param(lin), V{})) }},
		{"linear", []int{2, 4}, func(tp *ag.Tape[float64], x V) V { return ag.Scale(x, 1.5) }},
		{"ignores-z", []int{2, 3}, func(tp *ag.Tape[float64], x V) V {
			ones := tensor.Full[float64](1, x.Shape()[0], 1)
			return ag.Tanh(ag.Linear(tp.Const(ones), tp.Param(wz), V{}))
		}},
	}
}

// rowBlocks returns, for each row n of a [B, D] input, the D×D block
// ∂f[n, :]/∂x[n, :] of the full Jacobian jac [B·D, B·D].
func rowBlocks(jac *tensor.Tensor[float64], b, d int) [][]float64 {
	bd := b * d
	blocks := make([][]float64, b)
	for n := range b {
		for i := range d {
			for j := range d {
				blocks[n] = append(blocks[n], jac.Data()[(n*d+i)*bd+n*d+j])
			}
		}
	}
	return blocks
}

// TestTraceExact: each row's trace is the sum of the diagonal of that
// row's block of the Backward Jacobian; f(z) is returned too.
func TestTraceExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range rowCases() {
		z := tensor.RandN[float64](rng, 0, 1, c.x...)
		b, d := c.x[0], c.x[1]
		want := make([]float64, b)
		for n, blk := range rowBlocks(backwardJacobian(t, c.f, z), b, d) {
			for i := range d {
				want[n] += blk[i*d+i]
			}
		}
		for _, noGrad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nograd=%v", c.name, noGrad), func(t *testing.T) {
				tp := ag.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				fz, tr, err := ag.TraceExact(func(z V) V { return c.f(tp, z) }, tp.Const(z))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(tr.Shape(), []int{b, 1}) {
					t.Fatalf("trace of shape %v, want [%d 1]", tr.Shape(), b)
				}
				if d := cmp.Diff(want, tr.Value().Data(), tightTol); d != "" {
					t.Errorf("trace (-Jacobian diagonal +TraceExact):\n%s", d)
				}
				if !slices.Equal(fz.Shape(), c.x) {
					t.Errorf("f(z) of shape %v", fz.Shape())
				}
			})
		}
	}
}

// TestTraceHutchinson: (i) for a fixed probe, each row's estimate is
// εₙᵀ·Jₙ·εₙ computed from the Backward Jacobian; (ii) averaged over many
// Rademacher probes (one call, on the batch tiled K times) it is within
// 5 standard errors of TraceExact, the variance of a Rademacher estimate
// being Σ_{i<j} (Jᵢⱼ + Jⱼᵢ)².
func TestTraceHutchinson(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range rowCases() {
		z := tensor.RandN[float64](rng, 0, 1, c.x...)
		b, d := c.x[0], c.x[1]
		blocks := rowBlocks(backwardJacobian(t, c.f, z), b, d)
		probes := map[string]*tensor.Tensor[float64]{
			"rademacher": ag.RademacherProbe[float64](rng, b, d),
			"gaussian":   ag.GaussianProbe[float64](rng, b, d),
		}
		for name, eps := range probes {
			want := make([]float64, b)
			for n, blk := range blocks {
				e := eps.Data()[n*d : (n+1)*d]
				for i := range d {
					for j := range d {
						want[n] += e[i] * blk[i*d+j] * e[j]
					}
				}
			}
			for _, noGrad := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/nograd=%v", c.name, name, noGrad), func(t *testing.T) {
					tp := ag.NewTape(engine64())
					tp.SetNoGrad(noGrad)
					_, tr, err := ag.TraceHutchinson(func(z V) V { return c.f(tp, z) }, tp.Const(z), tp.Const(eps))
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want, tr.Value().Data(), tightTol); d != "" {
						t.Errorf("εᵀJε (-Jacobian +TraceHutchinson):\n%s", d)
					}
				})
			}
		}

		t.Run(c.name+"/mean", func(t *testing.T) {
			const k = 4000
			tiled := tensor.New[float64](k*b, d)
			for r := range k {
				copy(tiled.Data()[r*b*d:], z.Data())
			}
			tp := ag.NewTape(engine64())
			eps := ag.RademacherProbe[float64](rand.New(rand.NewPCG(13, 14)), k*b, d)
			_, tr, err := ag.TraceHutchinson(func(z V) V { return c.f(tp, z) }, tp.Const(tiled), tp.Const(eps))
			if err != nil {
				t.Fatal(err)
			}
			_, exact, err := ag.TraceExact(func(z V) V { return c.f(tp, z) }, tp.Const(z))
			if err != nil {
				t.Fatal(err)
			}
			for n, blk := range blocks {
				mean := 0.0
				for r := range k {
					mean += tr.Value().Data()[r*b+n] / k
				}
				variance := 0.0
				for i := range d {
					for j := i + 1; j < d; j++ {
						variance += math.Pow(blk[i*d+j]+blk[j*d+i], 2)
					}
				}
				want := exact.Value().Data()[n]
				if se := math.Sqrt(variance / k); math.Abs(mean-want) > 5*se+1e-12 {
					t.Errorf("row %d: mean of %d estimates %.6f, exact trace %.6f, standard error %.2g", n, k, mean, want, se)
				}
			}
		})
	}
}

// TestHelpersNoGrad: in no-grad mode each helper returns the values it
// returns in grad mode, as constants, and leaves the tape in no-grad mode;
// in grad mode its results require gradients.
func TestHelpersNoGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	mlp := newRowMLP(rng, 3, 5)
	z := tensor.RandN[float64](rng, 0, 1, 4, 3)
	v := tensor.RandN[float64](rng, 0, 1, 4, 3)
	pair := func(a, b V, err error) ([]V, error) { return []V{a, b}, err }
	for _, c := range []struct {
		name string
		call func(f func(V) V, z, v V) ([]V, error)
	}{
		{"JVP", func(f func(V) V, z, v V) ([]V, error) { return pair(ag.JVP(f, z, v)) }},
		{"HVP", func(f func(V) V, z, v V) ([]V, error) {
			return pair(ag.HVP(func(z V) V { return ag.Sum(ag.Square(f(z))) }, z, v))
		}},
		{"Jacobian", func(f func(V) V, z, _ V) ([]V, error) { return pair(ag.Jacobian(f, z)) }},
		{"TraceExact", func(f func(V) V, z, _ V) ([]V, error) { return pair(ag.TraceExact(f, z)) }},
		{"TraceHutchinson", func(f func(V) V, z, v V) ([]V, error) { return pair(ag.TraceHutchinson(f, z, v)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(noGrad bool) [][]float64 {
				tp := ag.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				res, err := c.call(func(z V) V { return mlp.apply(tp, z) }, tp.Const(z), tp.Const(v))
				if err != nil {
					t.Fatal(err)
				}
				if tp.NoGrad() != noGrad {
					t.Errorf("no-grad %v: the tape's mode is now %v", noGrad, tp.NoGrad())
				}
				var vals [][]float64
				for i, r := range res {
					if r.RequiresGrad() == noGrad {
						t.Errorf("no-grad %v: result %d requires grad %v", noGrad, i, r.RequiresGrad())
					}
					vals = append(vals, slices.Clone(r.Value().Data()))
				}
				return vals
			}
			if d := cmp.Diff(run(false), run(true)); d != "" {
				t.Errorf("values (-grad mode +no-grad mode):\n%s", d)
			}
		})
	}
}

// TestHelpersDifferentiable: in grad mode the helpers' results are
// differentiable in the parameters of f and in its input, to second order:
// a CNF trains through Σ tr (and its adjoint needs ∂tr/∂z), a penalty on a
// JVP or an HVP trains through it.
func TestHelpersDifferentiable(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	mlp := newRowMLP(rng, 2, 4)
	zp := randParam(rng, "z", 1, 3, 2)
	probe := ag.RademacherProbe[float64](rng, 3, 2)
	tangent := tensor.RandN[float64](rng, 0, 1, 3, 2)
	weights := tensor.RandN[float64](rng, 0, 1, 3, 2)
	for _, c := range []struct {
		name    string
		zParam  bool // z is a parameter too
		order   int
		combine func(tp *ag.Tape[float64], f func(V) V, z V) (V, error)
	}{
		{"TraceExact", false, 2, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			_, tr, err := ag.TraceExact(f, z)
			return ag.Sum(tr), err
		}},
		{"TraceExact/z", true, 2, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			fz, tr, err := ag.TraceExact(f, z)
			if err != nil {
				return V{}, err
			}
			return ag.Add(ag.Sum(tr), ag.Sum(ag.Square(fz))), nil
		}},
		{"TraceHutchinson/z", true, 2, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			_, tr, err := ag.TraceHutchinson(f, z, tp.Const(probe))
			return ag.Sum(tr), err
		}},
		{"JVP/z", true, 2, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			y, jv, err := ag.JVP(f, z, tp.Const(tangent))
			if err != nil {
				return V{}, err
			}
			return ag.Add(ag.Sum(ag.Square(jv)), ag.Sum(y)), nil
		}},
		{"HVP/z", true, 1, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			g, hv, err := ag.HVP(func(z V) V { return ag.Sum(ag.Softplus(f(z))) }, z, tp.Const(tangent))
			if err != nil {
				return V{}, err
			}
			return ag.Add(ag.Sum(ag.Mul(hv, tp.Const(weights))), ag.Sum(ag.Square(g))), nil
		}},
		{"Jacobian/z", true, 1, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			_, jac, err := ag.Jacobian(f, z)
			return ag.Sum(ag.Square(jac)), err
		}},
		{"Jacobian/columns", false, 1, func(tp *ag.Tape[float64], f func(V) V, z V) (V, error) {
			// z [3, 2] ↦ [3, 4]: m > n, the column path.
			_, jac, err := ag.Jacobian(func(z V) V { return ag.Concat(1, f(z), ag.Square(f(z))) }, z)
			return ag.Sum(ag.Square(jac)), err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			params := mlp.params()
			if c.zParam {
				params = append(params, zp)
			}
			loss := func(tp *ag.Tape[float64]) (V, error) {
				z := tp.Const(zp.Value)
				if c.zParam {
					z = tp.Param(zp)
				}
				return c.combine(tp, func(z V) V { return mlp.apply(tp, z) }, z)
			}
			reps, err := ag.CheckHigherOrder(loss, params, c.order, ag.GradCheckOptions{AbsTol: 1e-7, RelTol: 1e-5, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			if reps[0].Checked == 0 {
				t.Fatalf("nothing checked: %v", reps)
			}
		})
	}
}

// TestHelpersMisuse: a tangent, direction or probe of the wrong shape and a
// non-square or non-scalar f panic with a *tensor.ShapeError naming both
// shapes; a panic in no-grad mode leaves the tape in no-grad mode.
func TestHelpersMisuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	w := randParam(rng, "W", 1, 3, 4)
	for _, c := range []struct {
		name string
		call func(tp *ag.Tape[float64], x V) // x is [2, 3]
		want []string
	}{
		{"JVP/tangent", func(tp *ag.Tape[float64], x V) { ag.JVP(ag.Tanh, x, tp.Const(tensor.New[float64](3, 2))) },
			[]string{"tangent of shape [3 2]", "x of shape [2 3]"}},
		{"HVP/direction", func(tp *ag.Tape[float64], x V) {
			ag.HVP(func(x V) V { return ag.Sum(ag.Tanh(x)) }, x, tp.Const(tensor.New[float64](6)))
		}, []string{"direction of shape [6]", "x of shape [2 3]"}},
		{"HVP/not scalar", func(tp *ag.Tape[float64], x V) { ag.HVP(ag.Tanh, x, tp.Const(tensor.New[float64](2, 3))) },
			[]string{"f returned shape [2 3], want a scalar"}},
		{"TraceHutchinson/probe", func(tp *ag.Tape[float64], x V) {
			ag.TraceHutchinson(ag.Tanh, x, tp.Const(tensor.New[float64](2, 4)))
		}, []string{"probe of shape [2 4]", "x of shape [2 3]"}},
		{"TraceExact/non-square", func(tp *ag.Tape[float64], x V) {
			ag.TraceExact(func(x V) V { return ag.MatMul(x, tp.Param(w)) }, x)
		}, []string{"f returned shape [2 4]", "z of shape [2 3]", "square"}},
		{"TraceHutchinson/non-square", func(tp *ag.Tape[float64], x V) {
			ag.TraceHutchinson(func(x V) V { return ag.MatMul(x, tp.Param(w)) }, x, tp.Const(tensor.New[float64](2, 3)))
		}, []string{"f returned shape [2 4]", "z of shape [2 3]", "square"}},
		{"TraceExact/rank", func(tp *ag.Tape[float64], x V) { ag.TraceExact(ag.Tanh, ag.Reshape(x, 6)) },
			[]string{"z of shape [6], want [B, D]"}},
	} {
		for _, noGrad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nograd=%v", c.name, noGrad), func(t *testing.T) {
				tp := ag.NewTape(engine64())
				x := tp.Input(tensor.New[float64](2, 3))
				tp.SetNoGrad(noGrad)
				func() {
					defer func() {
						r := recover()
						var se *tensor.ShapeError
						if err, ok := r.(error); !ok || !errors.As(err, &se) {
							t.Fatalf("panicked with %T %v, want a *tensor.ShapeError", r, r)
						}
						for _, w := range c.want {
							if !strings.Contains(se.Error(), w) {
								t.Errorf("panic %q does not contain %q", se.Error(), w)
							}
						}
					}()
					c.call(tp, x)
				}()
				if tp.NoGrad() != noGrad {
					t.Errorf("after the panic the tape's no-grad mode is %v, want %v", tp.NoGrad(), noGrad)
				}
			})
		}
	}
}

// cubeNode records y = x³ as a Custom node without a backward in ops.
func cubeNode(x V) V {
	xv := x.Value()
	y := tensor.New[float64](xv.Shape()...)
	y.Map(xv, func(v float64) float64 { return v * v * v })
	return ag.Custom("cube", y, func(gy *tensor.Tensor[float64]) ([]*tensor.Tensor[float64], error) {
		g := tensor.New[float64](gy.Shape()...)
		for i, v := range xv.Data() {
			g.Data()[i] = 3 * v * v * gy.Data()[i]
		}
		return []*tensor.Tensor[float64]{g}, nil
	}, x)
}

// TestHelpersCreateGraphError: a Custom node without a backward in ops
// inside f is a *CreateGraphError naming it, from every helper, in grad and
// no-grad mode.
func TestHelpersCreateGraphError(t *testing.T) {
	f := func(x V) V { return ag.Tanh(cubeNode(x)) }
	for _, c := range []struct {
		name string
		call func(tp *ag.Tape[float64], x, v V) error
	}{
		{"JVP", func(_ *ag.Tape[float64], x, v V) error { _, _, err := ag.JVP(f, x, v); return err }},
		{"HVP", func(_ *ag.Tape[float64], x, v V) error {
			_, _, err := ag.HVP(func(x V) V { return ag.Sum(f(x)) }, x, v)
			return err
		}},
		{"Jacobian/rows", func(_ *ag.Tape[float64], x, _ V) error { _, _, err := ag.Jacobian(f, x); return err }},
		{"Jacobian/columns", func(_ *ag.Tape[float64], x, _ V) error {
			_, _, err := ag.Jacobian(func(x V) V { return ag.Concat(0, f(x), f(x)) }, x)
			return err
		}},
		{"TraceExact", func(_ *ag.Tape[float64], x, _ V) error { _, _, err := ag.TraceExact(f, x); return err }},
		{"TraceHutchinson", func(_ *ag.Tape[float64], x, v V) error { _, _, err := ag.TraceHutchinson(f, x, v); return err }},
	} {
		for _, noGrad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nograd=%v", c.name, noGrad), func(t *testing.T) {
				tp := ag.NewTape(engine64())
				tp.SetNoGrad(noGrad)
				x := tensor.FromSlice([]float64{0.5, -0.3, 0.8, 1.1}, 2, 2)
				err := c.call(tp, tp.Const(x), tp.Const(tensor.Full[float64](1, 2, 2)))
				var cge *ag.CreateGraphError
				if !errors.As(err, &cge) || cge.Op != "Custom(cube)" {
					t.Fatalf("error %v, want a *CreateGraphError naming Custom(cube)", err)
				}
				if tp.NoGrad() != noGrad {
					t.Errorf("the tape's no-grad mode is now %v, want %v", tp.NoGrad(), noGrad)
				}
			})
		}
	}
}

// TestProbes: RademacherProbe's elements are ±1, both signs drawn about
// equally; GaussianProbe has the shape asked for, mean about 0 and
// variance about 1.
func TestProbes(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	r := ag.RademacherProbe[float32](rng, 100, 20)
	if !slices.Equal(r.Shape(), []int{100, 20}) {
		t.Fatalf("Rademacher probe of shape %v", r.Shape())
	}
	plus := 0
	for i, v := range r.Data() {
		switch v {
		case 1:
			plus++
		case -1:
		default:
			t.Fatalf("Rademacher element %d is %v, want ±1", i, v)
		}
	}
	if n := r.Len(); math.Abs(float64(plus)/float64(n)-0.5) > 0.05 {
		t.Errorf("%d of %d elements are +1", plus, n)
	}

	g := ag.GaussianProbe[float64](rng, 50, 40)
	if !slices.Equal(g.Shape(), []int{50, 40}) {
		t.Fatalf("Gaussian probe of shape %v", g.Shape())
	}
	var s, s2 float64
	for _, v := range g.Data() {
		s += v
		s2 += v * v
	}
	n := float64(g.Len())
	if mean, variance := s/n, s2/n-(s/n)*(s/n); math.Abs(mean) > 0.1 || math.Abs(variance-1) > 0.1 {
		t.Errorf("Gaussian probe mean %.3f, variance %.3f", mean, variance)
	}
}
