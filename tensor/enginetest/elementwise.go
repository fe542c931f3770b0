package enginetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// Elementwise checks every method of el against plain reference loops
// written here: the maps and their backward maps (each with its
// parameters, in place and accumulated), the broadcasting binary ops and
// their gradients (size-1 axes, rank differences, more than four
// dimensions), linear combinations of up to 12 terms, fills and copies,
// the axis reductions, the per-channel sums, the whole-tensor sums and the
// error norms, on empty, one-element, odd-length and longer tensors, with
// NaN, ±Inf and ±0 where the interface's methods promise what they give;
// and that misfitting shapes panic with a *tensor.ShapeError.
//
// Exact operations (ReLU, Square, Neg, Abs, LeakyReLU, Hardtanh, Clamp,
// Scale, AddScalar, the binary ops, most backward maps, MaxAxis, Fill,
// Copy) must match to the bit (any NaN for a NaN, and ±0 as the reference
// has it where the sign is promised); the transcendental maps within 4
// ulps of the math package's value rounded to T; the sums within the
// rounding of their terms.
func Elementwise[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	t.Run("Map", func(t *testing.T) { elMap(t, el) })
	t.Run("MapBackward", func(t *testing.T) { elMapBackward(t, el) })
	t.Run("Binary", func(t *testing.T) { elBinary(t, el) })
	t.Run("BinaryBackward", func(t *testing.T) { elBinaryBackward(t, el) })
	t.Run("LinComb", func(t *testing.T) { elLinComb(t, el) })
	t.Run("FillCopy", func(t *testing.T) { elFillCopy(t, el) })
	t.Run("AxisReductions", func(t *testing.T) { elAxis(t, el) })
	t.Run("SumPerChannel", func(t *testing.T) { elSumPerChannel(t, el) })
	t.Run("Sums", func(t *testing.T) { elSums(t, el) })
	t.Run("ErrorNorm", func(t *testing.T) { elErrorNorm(t, el) })
	t.Run("ShapeErrors", func(t *testing.T) { elShapeErrors(t, el) })
}

// eps returns the unit roundoff of T's precision (2⁻²⁴ or 2⁻⁵³) times 2:
// the spacing of T's numbers at 1.
func eps[T tensor.Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

// is32 reports whether T is a 4-byte float.
func is32[T tensor.Float]() bool { return eps[T]() > 0x1p-30 }

// ulpDist returns how many T values lie between a and b (0 for equal
// values, ±0 included, and for two NaNs; −1 when one only is NaN).
func ulpDist[T tensor.Float](a, b T) int64 {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an || bn:
		return -1
	}
	ord := func(v T) int64 {
		if is32[T]() {
			u := math.Float32bits(float32(v))
			if u>>31 != 0 {
				return -int64(u &^ (1 << 31))
			}
			return int64(u)
		}
		u := math.Float64bits(float64(v))
		if u>>63 != 0 {
			return -int64(u &^ (1 << 63))
		}
		return int64(u)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// sameBits reports whether a and b are the same value to the bit (any NaN
// for a NaN).
func sameBits[T tensor.Float](a, b T) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	if is32[T]() {
		return math.Float32bits(float32(a)) == math.Float32bits(float32(b))
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
}

// sameValue reports whether a == b or both are NaN (+0 and −0 alike).
func sameValue[T tensor.Float](a, b T) bool { return a == b || a != a && b != b }

// within reports whether got is want within tol (absolute), or both are
// NaN, or equal.
func within(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return got == want || math.Abs(got-want) <= tol
}

// specials are the values placed first in the tests' operands.
func specials[T tensor.Float]() []T {
	return []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1)), 0, T(math.Copysign(0, -1)), -0.5, 0.75, 1, -1}
}

// values returns n values uniform in [lo, hi), the specials first when
// withSpecials.
func values[T tensor.Float](rng *rand.Rand, n int, lo, hi float64, withSpecials bool) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(lo + (hi-lo)*rng.Float64())
	}
	if withSpecials {
		copy(v, specials[T]())
	}
	return v
}

// from returns a new tensor of the given shape holding a copy of d.
func from[T tensor.Float](d []T, shape ...int) *tensor.Tensor[T] {
	z := tensor.New[T](shape...) // (FromSlice makes no rank-0 tensor)
	copy(z.Data(), d)
	return z
}

// numel returns the number of elements of shape.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// mapCase is a map with its parameters.
type mapCase struct {
	op   tensor.MapOp
	a, b float64
}

func mapCases() []mapCase {
	var cs []mapCase
	for op := range tensor.NumMapOps {
		switch op {
		case tensor.MapLeakyReLU:
			cs = append(cs, mapCase{op, 0.1, 0}, mapCase{op, 0, 0})
		case tensor.MapHardtanh, tensor.MapClamp:
			cs = append(cs, mapCase{op, -0.5, 0.75}, mapCase{op, 0, 0})
		case tensor.MapELU:
			cs = append(cs, mapCase{op, 1.5, 0}, mapCase{op, 0, 0})
		case tensor.MapPow:
			cs = append(cs, mapCase{op, 2.5, 0}, mapCase{op, 3, 0}, mapCase{op, -1.5, 0}, mapCase{op, 0, 0})
		case tensor.MapScale:
			cs = append(cs, mapCase{op, -1.75, 0}, mapCase{op, 1, 0})
		case tensor.MapAddScalar:
			cs = append(cs, mapCase{op, 0.3, 0})
		default:
			cs = append(cs, mapCase{op: op})
		}
	}
	return cs
}

// exactMap reports whether op's result is one rounding of T's arithmetic
// (to the bit).
func exactMap(op tensor.MapOp) bool {
	switch op {
	case tensor.MapReLU, tensor.MapSquare, tensor.MapNeg, tensor.MapAbs, tensor.MapLeakyReLU,
		tensor.MapHardtanh, tensor.MapClamp, tensor.MapScale, tensor.MapAddScalar:
		return true
	}
	return false
}

// RefMap returns op(v) as tensor.Elementwise documents it: the reference
// the suite checks Map against, for tests of other packages too.
func RefMap[T tensor.Float](op tensor.MapOp, v, a, b T) T {
	f := float64(v)
	switch op {
	case tensor.MapTanh:
		return T(math.Tanh(f))
	case tensor.MapSigmoid:
		if f >= 0 {
			return T(1 / (1 + math.Exp(-f)))
		}
		e := math.Exp(f)
		return T(e / (1 + e))
	case tensor.MapExp:
		return T(math.Exp(f))
	case tensor.MapReLU:
		return max(v, 0)
	case tensor.MapSoftplus:
		if f > 0 {
			return T(f + math.Log1p(math.Exp(-f)))
		}
		return T(math.Log1p(math.Exp(f)))
	case tensor.MapLog:
		return T(math.Log(f))
	case tensor.MapSqrt:
		return T(math.Sqrt(f))
	case tensor.MapSquare:
		return v * v
	case tensor.MapNeg:
		return -v
	case tensor.MapAbs:
		return T(math.Abs(f))
	case tensor.MapSin:
		return T(math.Sin(f))
	case tensor.MapCos:
		return T(math.Cos(f))
	case tensor.MapLeakyReLU:
		if v > 0 {
			return v
		}
		return a * v
	case tensor.MapHardtanh, tensor.MapClamp:
		return min(max(v, a), b)
	case tensor.MapELU:
		if v > 0 {
			return v
		}
		return a * T(math.Expm1(f))
	case tensor.MapPow:
		return T(math.Pow(f, float64(a)))
	case tensor.MapScale:
		return a * v
	case tensor.MapAddScalar:
		return v + a
	}
	panic(fmt.Sprintf("refMap: %v", op))
}

// mapShapes are the shapes the maps run on: empty, one element, odd
// lengths, a matrix, and more than a few blocks of threads.
var mapShapes = [][]int{{0}, {1}, {9}, {3, 5}, {2, 3, 50}, {1031}}

func elMap[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range mapCases() {
		a, b := T(c.a), T(c.b)
		for si, shape := range mapShapes {
			n := numel(shape)
			x := values[T](rng, n, -3, 3, n >= 9)
			want := make([]T, n)
			for i, v := range x {
				want[i] = RefMap(c.op, v, a, b)
			}
			z := from(values[T](rng, n, -1, 1, false), shape...)
			xt := from(x, shape...)
			name := fmt.Sprintf("%v(a=%v, b=%v) shape %v", c.op, c.a, c.b, shape)
			el.Map(c.op, z, xt, a, b)
			checkMap(t, name, c.op, z.ReadData(), want, x)
			checkBits(t, name+": the operand", xt.ReadData(), x)
			if si == 3 { // in place
				xt := from(x, shape...)
				el.Map(c.op, xt, xt, a, b)
				checkMap(t, name+" in place", c.op, xt.ReadData(), want, x)
			}
		}
	}
}

// checkMap compares a map's result with the reference: to the bit for the
// exact maps, else within 4 ulps.
func checkMap[T tensor.Float](t *testing.T, name string, op tensor.MapOp, got, want, x []T) {
	t.Helper()
	for i := range want {
		ok := sameBits(got[i], want[i])
		if !exactMap(op) {
			d := ulpDist(got[i], want[i])
			ok = d >= 0 && d <= 4
		}
		if !ok {
			t.Errorf("%s: element %d (x = %v) = %v, want %v", name, i, x[i], got[i], want[i])
			return
		}
	}
}

// RefMapBackward returns the gradient term g·op′ given u (op's output or
// input, as MapOp.BackwardFromOutput says) and whether it is exact (to
// the bit).
func RefMapBackward[T tensor.Float](op tensor.MapOp, g, u, a, b T) (T, bool) {
	f := float64(u)
	switch op {
	case tensor.MapTanh:
		return g * T(math.FMA(-f, f, 1)), false
	case tensor.MapSigmoid:
		return g * T(math.FMA(-f, f, f)), false
	case tensor.MapExp:
		return g * u, true
	case tensor.MapReLU:
		if u > 0 {
			return g, true
		}
		return 0, true
	case tensor.MapSoftplus:
		return g * T(-math.Expm1(-f)), false
	case tensor.MapLog:
		return g * (1 / u), true
	case tensor.MapSqrt:
		return g * (1 / (2 * u)), true
	case tensor.MapSquare:
		return g * (2 * u), true
	case tensor.MapNeg:
		return -g, true
	case tensor.MapAbs:
		var s T
		if u > 0 {
			s = 1
		} else if u < 0 {
			s = -1
		}
		return g * s, true
	case tensor.MapSin:
		return g * T(math.Cos(f)), false
	case tensor.MapCos:
		return g * T(-math.Sin(f)), false
	case tensor.MapLeakyReLU:
		if u > 0 {
			return g, true
		}
		return g * a, true
	case tensor.MapHardtanh:
		if u > a && u < b {
			return g * 1, true
		}
		return g * 0, true
	case tensor.MapClamp:
		if u >= a && u <= b {
			return g * 1, true
		}
		return g * 0, true
	case tensor.MapELU:
		if u > 0 {
			return g * 1, true
		}
		return g * (u + a), true
	case tensor.MapPow:
		if a == 0 {
			return g * 0, true
		}
		return g * T(float64(a)*math.Pow(f, float64(a)-1)), false
	case tensor.MapScale:
		return a * g, true
	case tensor.MapAddScalar:
		return g, true
	}
	panic(fmt.Sprintf("refMapBackward: %v", op))
}

func elMapBackward[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range mapCases() {
		a, b := T(c.a), T(c.b)
		for si, shape := range mapShapes {
			n := numel(shape)
			x := values[T](rng, n, -3, 3, n >= 9)
			u := x
			if c.op.BackwardFromOutput() {
				u = make([]T, n)
				for i, v := range x {
					u[i] = RefMap(c.op, v, a, b)
				}
			}
			g := values[T](rng, n, -2, 2, false)
			if n >= 12 { // ReLU's gradient is +0 where y ≤ 0 whatever g is
				g[9], g[10], g[11] = T(math.Inf(1)), T(math.NaN()), T(math.Inf(-1))
			}
			for _, acc := range []bool{false, true} {
				z0 := values[T](rng, n, -1, 1, false)
				want := make([]T, n)
				var exact bool
				for i := range want {
					d, ex := RefMapBackward(c.op, g[i], u[i], a, b)
					exact = ex
					want[i] = d
					if acc {
						want[i] = z0[i] + d
					}
				}
				z := from(z0, shape...)
				ut := from(u, shape...)
				if c.op == tensor.MapNeg && si == 1 {
					ut = tensor.New[T](0) // not read
				}
				name := fmt.Sprintf("%v(a=%v, b=%v) shape %v accumulate %v", c.op, c.a, c.b, shape, acc)
				el.MapBackward(c.op, z, from(g, shape...), ut, a, b, acc)
				checkBackward(t, name, z.ReadData(), want, z0, g, u, exact, acc)
				if si == 3 { // z is g: z = g·f′, or g + g·f′
					want := make([]T, n)
					for i := range want {
						d, _ := RefMapBackward(c.op, g[i], u[i], a, b)
						want[i] = d
						if acc {
							want[i] = g[i] + d
						}
					}
					gt := from(g, shape...)
					el.MapBackward(c.op, gt, gt, from(u, shape...), a, b, acc)
					checkBackward(t, name+" z = g", gt.ReadData(), want, g, g, u, exact, acc)
				}
			}
		}
	}
}

// checkBackward compares a backward map's result with the reference: to
// the bit when exact, else within 4 ulps of the term (and of the sum's
// rounding with acc).
func checkBackward[T tensor.Float](t *testing.T, name string, got, want, z0, g, u []T, exact, acc bool) {
	t.Helper()
	for i := range want {
		ok := sameBits(got[i], want[i])
		if !exact {
			term := float64(want[i])
			if acc {
				term -= float64(z0[i])
			}
			ok = within(float64(got[i]), float64(want[i]), 4*eps[T]()*(math.Abs(term)+math.Abs(float64(want[i]))))
			if !acc {
				d := ulpDist(got[i], want[i])
				ok = d >= 0 && d <= 4
			}
		}
		if !ok {
			t.Errorf("%s: element %d (g = %v, u = %v, z0 = %v) = %v, want %v", name, i, g[i], u[i], z0[i], got[i], want[i])
			return
		}
	}
}

// bcastPair is a pair of operand shapes that broadcast.
type bcastPair struct{ x, y []int }

var bcastPairs = []bcastPair{
	{[]int{0}, []int{0}},
	{[]int{1}, []int{1}},
	{[]int{9}, []int{9}},
	{[]int{}, []int{}},
	{[]int{3, 5}, []int{5}},
	{[]int{5}, []int{3, 5}},
	{[]int{3, 1}, []int{1, 4}},
	{[]int{2, 3, 4}, []int{3, 1}},
	{[]int{4}, []int{}},
	{[]int{}, []int{2, 3}},
	{[]int{1, 1, 5}, []int{5}},
	{[]int{0, 3}, []int{3}},
	{[]int{2, 0}, []int{1}},
	{[]int{300}, []int{1}},
	{[]int{2, 1, 3, 1, 2}, []int{4, 1, 5, 1}},
	{[]int{2, 3, 2, 2, 3}, []int{2, 3, 2, 2, 3}},
	{[]int{3, 1, 2, 1, 1, 2}, []int{1, 2, 1, 2, 2, 1}},
}

// refBroadcast returns the broadcast shape of x and y and each operand's
// element index for every output element in row-major order.
func refBroadcast(x, y []int) (out []int, ix, iy []int) {
	r := max(len(x), len(y))
	pad := func(s []int) []int {
		p := make([]int, r)
		for i := range p {
			p[i] = 1
			if j := len(s) - r + i; j >= 0 {
				p[i] = s[j]
			}
		}
		return p
	}
	px, py := pad(x), pad(y)
	out = make([]int, r)
	for i := range out {
		out[i] = max(px[i], py[i])
		if px[i] == 0 || py[i] == 0 {
			out[i] = 0
		}
	}
	n := numel(out)
	idx := make([]int, r)
	for o := range n {
		rem := o
		for a := r - 1; a >= 0; a-- {
			idx[a] = rem % out[a]
			rem /= out[a]
		}
		jx, jy := 0, 0
		for a := range r {
			cx, cy := idx[a], idx[a]
			if px[a] == 1 {
				cx = 0
			}
			if py[a] == 1 {
				cy = 0
			}
			jx = jx*px[a] + cx
			jy = jy*py[a] + cy
		}
		ix, iy = append(ix, jx), append(iy, jy)
	}
	return out, ix, iy
}

func binRef[T tensor.Float](op tensor.BinaryOp, a, b T) T {
	switch op {
	case tensor.BinaryAdd:
		return a + b
	case tensor.BinarySub:
		return a - b
	case tensor.BinaryMul:
		return a * b
	}
	return a / b
}

var binaryOps = []tensor.BinaryOp{tensor.BinaryAdd, tensor.BinarySub, tensor.BinaryMul, tensor.BinaryDiv}

func elBinary[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, p := range bcastPairs {
		out, ix, iy := refBroadcast(p.x, p.y)
		nx, ny := numel(p.x), numel(p.y)
		x := values[T](rng, nx, -2, 2, nx >= 9)
		y := values[T](rng, ny, -2, 2, false)
		if ny >= 9 {
			y[0], y[3] = 0, T(math.Copysign(0, -1))
		}
		for _, op := range binaryOps {
			want := make([]T, len(ix))
			for o := range want {
				want[o] = binRef(op, x[ix[o]], y[iy[o]])
			}
			name := fmt.Sprintf("%v x %v y %v", op, p.x, p.y)
			z := from(values[T](rng, len(want), -1, 1, false), out...)
			el.Binary(op, z, from(x, p.x...), from(y, p.y...))
			checkBits(t, name, z.ReadData(), want)
			if slices.Equal(p.x, out) { // z is x
				xt := from(x, p.x...)
				el.Binary(op, xt, xt, from(y, p.y...))
				checkBits(t, name+" z = x", xt.ReadData(), want)
			}
			if slices.Equal(p.y, out) { // z is y
				yt := from(y, p.y...)
				el.Binary(op, yt, from(x, p.x...), yt)
				checkBits(t, name+" z = y", yt.ReadData(), want)
			}
		}
	}
}

// checkBits fails t unless got and want agree to the bit (any NaN for a
// NaN).
func checkBits[T tensor.Float](t *testing.T, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d elements, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
			return
		}
	}
}

// checkValues fails t unless got and want are equal values (±0 alike, any
// NaN for a NaN).
func checkValues[T tensor.Float](t *testing.T, name string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d elements, want %d", name, len(got), len(want))
		return
	}
	for i := range want {
		if !sameValue(got[i], want[i]) {
			t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
			return
		}
	}
}

func elBinaryBackward[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, p := range bcastPairs {
		out, ix, iy := refBroadcast(p.x, p.y)
		nx, ny, n := numel(p.x), numel(p.y), len(ix)
		x := values[T](rng, nx, -2, 2, false)
		y := values[T](rng, ny, 0.5, 2, false)
		g := values[T](rng, n, -2, 2, false)
		for _, op := range binaryOps {
			z := make([]T, n)
			for o := range z {
				z[o] = binRef(op, x[ix[o]], y[iy[o]])
			}
			for side := range 2 {
				m, idx := nx, ix
				shape := p.x
				if side == 1 {
					m, idx, shape = ny, iy, p.y
				}
				for _, acc := range []bool{false, true} {
					z0 := values[T](rng, m, -1, 1, false)
					want := make([]T, m)
					if acc {
						copy(want, z0)
					}
					for o := range n {
						gi := g[o]
						var c T
						switch {
						case op == tensor.BinaryAdd, op == tensor.BinarySub && side == 0:
							c = gi
						case op == tensor.BinarySub:
							c = -gi
						case op == tensor.BinaryMul && side == 0:
							c = gi * y[iy[o]]
						case op == tensor.BinaryMul:
							c = gi * x[ix[o]]
						case side == 0:
							c = gi / y[iy[o]]
						default:
							c = -gi * z[o] / y[iy[o]]
						}
						want[idx[o]] += c
					}
					zt := from(z0, shape...)
					name := fmt.Sprintf("%v side %d x %v y %v accumulate %v", op, side, p.x, p.y, acc)
					el.BinaryBackward(op, side, zt, from(g, out...), from(x, p.x...), from(y, p.y...), from(z, out...), acc)
					checkValues(t, name, zt.ReadData(), want)
				}
			}
		}
	}
}

func elLinComb[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, shape := range [][]int{{0}, {1}, {9}, {3, 7}, {1031}} {
		n := numel(shape)
		for _, m := range []int{0, 1, 3, 7, 8, 12} {
			for _, mode := range []string{"no base", "base", "z is base"} {
				coef := values[T](rng, m, -2, 2, false)
				xs := make([][]T, m)
				ts := make([]*tensor.Tensor[T], m)
				for j := range xs {
					xs[j] = values[T](rng, n, -3, 3, false)
					ts[j] = from(xs[j], shape...)
				}
				base := values[T](rng, n, -3, 3, n >= 9 && m == 0)
				want := make([]T, n)
				for i := range want {
					var s T
					if mode != "no base" {
						s = base[i]
					}
					for j := range xs {
						p := T(coef[j] * xs[j][i]) // rounded: the compiler may not fuse it into the sum
						s += p
					}
					want[i] = s
				}
				z := from(values[T](rng, n, -1, 1, false), shape...)
				var bt *tensor.Tensor[T]
				switch mode {
				case "base":
					bt = from(base, shape...)
				case "z is base":
					z = from(base, shape...)
					bt = z
				}
				el.LinComb(z, bt, coef, ts)
				checkValues(t, fmt.Sprintf("shape %v, %d terms, %s", shape, m, mode), z.ReadData(), want)
			}
		}
	}
}

func elFillCopy[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, shape := range [][]int{{0}, {1}, {9}, {3, 7}, {1031}} {
		n := numel(shape)
		for _, v := range []T{1.5, T(math.NaN()), T(math.Copysign(0, -1)), T(math.Inf(-1))} {
			z := from(values[T](rng, n, -1, 1, false), shape...)
			el.Fill(z, v)
			want := make([]T, n)
			for i := range want {
				want[i] = v
			}
			checkBits(t, fmt.Sprintf("Fill(%v) shape %v", v, shape), z.ReadData(), want)
		}
		x := values[T](rng, n, -3, 3, n >= 9)
		z := tensor.New[T](n) // another shape, the same length
		el.Copy(z, from(x, shape...))
		checkBits(t, fmt.Sprintf("Copy shape %v", shape), z.ReadData(), x)
	}
}

// axisCase is an axis reduction's operand shape and axis.
type axisCase struct {
	shape []int
	axis  int
}

var axisCases = []axisCase{
	{[]int{1}, 0}, {[]int{9}, 0}, {[]int{3, 4}, 0}, {[]int{3, 4}, 1}, {[]int{3, 4}, -1},
	{[]int{2, 3, 4}, 1}, {[]int{2, 0, 3}, 1}, {[]int{2, 3, 0}, 0}, {[]int{300, 2}, 0}, {[]int{2, 700}, 1},
	{[]int{2, 1, 3, 1, 2}, 2}, {[]int{2, 3, 1, 2, 2}, 4},
}

func elAxis[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, c := range axisCases {
		ax := c.axis
		if ax < 0 {
			ax += len(c.shape)
		}
		outer, n, inner := numel(c.shape[:ax]), c.shape[ax], numel(c.shape[ax+1:])
		rshape := append(slices.Clone(c.shape[:ax]), c.shape[ax+1:]...)
		x := values[T](rng, numel(c.shape), -3, 3, false)
		sum, mean, mx, abs := make([]float64, outer*inner), make([]T, outer*inner), make([]T, outer*inner), make([]float64, outer*inner)
		for o := range outer {
			for i := range inner {
				var s, a float64
				for k := range n {
					v := x[(o*n+k)*inner+i]
					s += float64(v)
					a += math.Abs(float64(v))
					if k == 0 || v > mx[o*inner+i] {
						mx[o*inner+i] = v
					}
				}
				sum[o*inner+i], abs[o*inner+i] = s, a
				mean[o*inner+i] = T(s / float64(n))
			}
		}
		name := fmt.Sprintf("shape %v axis %d", c.shape, c.axis)
		z := from(values[T](rng, outer*inner, -1, 1, false), rshape...)
		el.SumAxis(z, from(x, c.shape...), c.axis)
		for i, v := range z.ReadData() {
			if !within(float64(v), sum[i], float64(n+2)*eps[T]()*abs[i]) {
				t.Errorf("SumAxis %s: element %d = %v, want %v", name, i, v, sum[i])
				break
			}
		}
		el.MeanAxis(z, from(x, c.shape...), c.axis)
		for i, v := range z.ReadData() {
			if !within(float64(v), float64(mean[i]), float64(n+2)*eps[T]()*abs[i]/float64(n)+eps[T]()*math.Abs(float64(mean[i]))) {
				t.Errorf("MeanAxis %s: element %d = %v, want %v", name, i, v, mean[i])
				break
			}
		}
		if n > 0 {
			el.MaxAxis(z, from(x, c.shape...), c.axis)
			checkBits(t, "MaxAxis "+name, z.ReadData(), mx)
		}
	}
	// NaN propagates (the first along the axis), and of equal largest
	// elements the first is kept (−0 before +0).
	nan, nz := T(math.NaN()), T(math.Copysign(0, -1))
	xs := [][]T{{1, nz, nz, 0}, {nan, 0, 0, nz}, {2, -1, nz, -3}, {-2, 3, 0, -4}, {nan, 3, -5, -3}}
	var flat []T
	for _, r := range xs {
		flat = append(flat, r...)
	}
	z := tensor.New[T](4)
	el.MaxAxis(z, from(flat, 5, 4), 0)
	checkBits(t, "MaxAxis with NaN and ±0", z.ReadData(), []T{nan, 3, nz, 0})
	z5 := tensor.New[T](5)
	el.MaxAxis(z5, from(flat, 5, 4), 1)
	checkBits(t, "MaxAxis with NaN and ±0 over rows", z5.ReadData(), []T{1, nan, 2, 3, nan})
}

func elSumPerChannel[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, shape := range [][]int{{4, 3}, {1, 1}, {0, 3}, {9, 5}, {2, 3, 4, 5}, {3, 2, 300}, {2, 3, 0}} {
		c := shape[1]
		batch, inner := shape[0], numel(shape[2:])
		x := values[T](rng, numel(shape), -3, 3, false)
		for _, acc := range []bool{false, true} {
			z0 := values[T](rng, c, -1, 1, false)
			z := from(z0, c)
			el.SumPerChannel(z, from(x, shape...), acc)
			for ch, v := range z.ReadData() {
				var s, a float64
				for b := range batch {
					for i := range inner {
						w := float64(x[(b*c+ch)*inner+i])
						s += w
						a += math.Abs(w)
					}
				}
				if acc {
					s += float64(z0[ch])
					a += math.Abs(float64(z0[ch]))
				}
				if !within(float64(v), s, float64(batch*inner+2)*eps[T]()*a) {
					t.Errorf("shape %v accumulate %v: channel %d = %v, want %v", shape, acc, ch, v, s)
					break
				}
			}
		}
	}
}

func elSums[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{0, 1, 9, 257, 5003} {
		x := values[T](rng, n, -3, 3, false)
		y := values[T](rng, n, -3, 3, false)
		var s, ss, d, as, ad float64
		for i := range x {
			a, b := float64(x[i]), float64(y[i])
			s += a
			as += math.Abs(a)
			ss += a * a
			d += a * b
			ad += math.Abs(a * b)
		}
		// The result may be rounded to T once; the float64 sums' order is
		// the engine's.
		tol := func(v, abs float64) float64 { return eps[T]()*math.Abs(v) + float64(n+1)*0x1p-52*abs }
		shape := []int{n}
		if got := el.Sum(from(x, shape...)); !within(got, s, tol(s, as)) {
			t.Errorf("Sum of %d elements = %v, want %v", n, got, s)
		}
		if got := el.SumSquares(from(x, shape...)); !within(got, ss, tol(ss, ss)) {
			t.Errorf("SumSquares of %d elements = %v, want %v", n, got, ss)
		}
		if got := el.Dot(from(x, shape...), from(y, shape...)); !within(got, d, tol(d, ad)) {
			t.Errorf("Dot of %d elements = %v, want %v", n, got, d)
		}
	}
	x := []T{1, 2, T(math.Inf(1)), 3}
	if got := el.Sum(from(x, 2, 2)); !math.IsInf(got, 1) {
		t.Errorf("Sum with +Inf = %v", got)
	}
	if got := el.SumSquares(from([]T{1, T(math.Inf(-1))}, 2)); !math.IsInf(got, 1) {
		t.Errorf("SumSquares with −Inf = %v", got)
	}
	x[1] = T(math.NaN())
	if got := el.Sum(from(x, 4)); !math.IsNaN(got) {
		t.Errorf("Sum with NaN = %v", got)
	}
	if got := el.Dot(from(x, 4), from([]T{1, 1, 1, 1}, 4)); !math.IsNaN(got) {
		t.Errorf("Dot with NaN = %v", got)
	}
}

// refErrorNorm is ErrorNorm's reference: the ratios in T (in float64
// where a ratio of finite operands overflows T), the parts' RMS in
// float64.
func refErrorNorm[T tensor.Float](e, y0, y1 []T, atol, rtol T, parts []int) (float64, bool) {
	if len(parts) == 0 {
		parts = []int{len(e)}
	}
	r := make([]float64, len(e))
	nan, inf := false, false
	for i := range e {
		a, b := y0[i], y1[i]
		if a < 0 {
			a = -a
		}
		if b < 0 {
			b = -b
		}
		w := atol + rtol*max(a, b)
		v := float64(e[i] / w)
		fin := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
		if !fin(v) && fin(float64(e[i])) && fin(float64(w)) {
			v = float64(e[i]) / float64(w)
		}
		nan = nan || math.IsNaN(v)
		inf = inf || math.IsInf(v, 0)
		r[i] = v
	}
	if nan {
		return math.NaN(), false
	}
	if inf {
		return math.Inf(1), false
	}
	var rms float64
	lo := 0
	for _, p := range parts {
		var m, s float64
		for _, v := range r[lo : lo+p] {
			m = max(m, math.Abs(v))
		}
		if m > 0 {
			for _, v := range r[lo : lo+p] {
				s += (v / m) * (v / m)
			}
			rms = max(rms, m*math.Sqrt(s/float64(p)))
		}
		lo += p
	}
	return rms, true
}

func elErrorNorm[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	rng := rand.New(rand.NewPCG(29, 30))
	type normCase struct {
		n     int
		parts []int
	}
	cases := []normCase{{0, nil}, {1, nil}, {9, nil}, {9, []int{4, 5}}, {9, []int{0, 9}}, {9, []int{2, 0, 7}}, {1000, nil}, {1000, []int{300, 700}},
		{130, append(slices.Repeat([]int{1}, 70), 60)}} // more parts than one GPU call takes
	atol, rtol := T(1e-6), T(1e-3)
	hugeE, tinyATol := 1e100, 1e-100 // float64's: a ratio of 1e200
	for _, c := range cases {
		e := values[T](rng, c.n, -1e-3, 1e-3, false)
		y0 := values[T](rng, c.n, -5, 5, false)
		y1 := values[T](rng, c.n, -5, 5, false)
		for _, special := range []string{"", "NaN", "Inf", "huge", "-0"} {
			if len(c.parts) > 64 && special != "" && special != "huge" {
				continue // (many parts take many kernel calls on a GPU)
			}
			e, y0 := slices.Clone(e), slices.Clone(y0)
			if c.n > 0 {
				switch special {
				case "NaN":
					e[c.n-1] = T(math.NaN())
				case "Inf":
					e[0] = T(math.Inf(-1))
				case "huge": // a ratio whose square overflows float64 (or, in float32, a ratio that overflows T)
					e[c.n/2], y0[c.n/2], y1[c.n/2] = 1e35, 0, 0
					if !is32[T]() {
						e[c.n/2] = T(hugeE)
					}
				case "-0":
					y0[0], y1[0] = T(math.Copysign(0, -1)), 0
				}
			}
			a := atol
			if special == "huge" && !is32[T]() {
				a = T(tinyATol)
			}
			want, wfin := refErrorNorm(e, y0, y1, a, rtol, c.parts)
			name := fmt.Sprintf("%d elements, parts %v, %q", c.n, c.parts, special)
			got, fin := el.ErrorNorm(from(e, c.n), from(y0, c.n), from(y1, c.n), a, rtol, c.parts)
			if fin != wfin || !within(got, want, 1e-12*math.Abs(want)) {
				t.Errorf("%s: %v (finite %v), want %v (finite %v)", name, got, fin, want, wfin)
			}
		}
	}
}

// mustPanicShape fails t unless f panics with a *tensor.ShapeError.
func mustPanicShape(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if _, ok := r.(*tensor.ShapeError); !ok {
			t.Errorf("%s: recovered %v (%T), want a *tensor.ShapeError", name, r, r)
		}
	}()
	f()
}

func elShapeErrors[T tensor.Float](t *testing.T, el tensor.Elementwise[T]) {
	n := tensor.New[T]
	mustPanicShape(t, "Map [3] of [4]", func() { el.Map(tensor.MapTanh, n(3), n(4), 0, 0) })
	mustPanicShape(t, "Map [2, 3] of [3, 2]", func() { el.Map(tensor.MapNeg, n(2, 3), n(3, 2), 0, 0) })
	mustPanicShape(t, "MapBackward g [4]", func() { el.MapBackward(tensor.MapExp, n(3), n(4), n(3), 0, 0, false) })
	mustPanicShape(t, "MapBackward u [4]", func() { el.MapBackward(tensor.MapSquare, n(3), n(3), n(4), 0, 0, true) })
	mustPanicShape(t, "Binary [3] and [4]", func() { el.Binary(tensor.BinaryAdd, n(3), n(3), n(4)) })
	mustPanicShape(t, "Binary into [3, 4]", func() { el.Binary(tensor.BinaryMul, n(3, 4), n(4, 3), n(3)) })
	mustPanicShape(t, "Binary into [4] of [3, 4]", func() { el.Binary(tensor.BinarySub, n(4), n(3, 4), n(4)) })
	mustPanicShape(t, "BinaryBackward z [3]", func() {
		el.BinaryBackward(tensor.BinaryMul, 1, n(3), n(3, 4), n(3, 4), n(4), n(3, 4), false)
	})
	mustPanicShape(t, "BinaryBackward g [4, 3]", func() {
		el.BinaryBackward(tensor.BinaryAdd, 0, n(3, 4), n(4, 3), n(3, 4), n(4), n(3, 4), false)
	})
	mustPanicShape(t, "LinComb term [4]", func() { el.LinComb(n(3), nil, []T{1, 2}, []*tensor.Tensor[T]{n(3), n(4)}) })
	mustPanicShape(t, "LinComb base [4]", func() { el.LinComb(n(3), n(4), []T{1}, []*tensor.Tensor[T]{n(3)}) })
	mustPanicShape(t, "Copy 6 into 5", func() { el.Copy(n(5), n(2, 3)) })
	mustPanicShape(t, "SumAxis axis 2 of [3, 4]", func() { el.SumAxis(n(3), n(3, 4), 2) })
	mustPanicShape(t, "SumAxis into [4]", func() { el.SumAxis(n(4), n(3, 4), 1) })
	mustPanicShape(t, "MeanAxis into [3]", func() { el.MeanAxis(n(3), n(3, 4), 0) })
	mustPanicShape(t, "MaxAxis over an empty axis", func() { el.MaxAxis(n(3), n(0, 3), 0) })
	mustPanicShape(t, "SumPerChannel [4] of [2, 3]", func() { el.SumPerChannel(n(4), n(2, 3), false) })
	mustPanicShape(t, "SumPerChannel [3] of [3]", func() { el.SumPerChannel(n(3), n(3), true) })
	mustPanicShape(t, "Dot [3] and [4]", func() { el.Dot(n(3), n(4)) })
	mustPanicShape(t, "ErrorNorm y0 [4]", func() { el.ErrorNorm(n(3), n(4), n(3), 1, 1, nil) })
	mustPanicShape(t, "ErrorNorm parts of 5 for 6", func() { el.ErrorNorm(n(6), n(6), n(6), 1, 1, []int{2, 3}) })
}
