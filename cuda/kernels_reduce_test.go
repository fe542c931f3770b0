package cuda

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// finite returns n random finite values of T, magnitudes 1e-3 to 1e2,
// signs mixed.
func finite[T tensor.Float](r *rand.Rand, n int) []T {
	x := make([]T, n)
	for i := range x {
		x[i] = T(r.NormFloat64() * math.Pow(10, -3+5*r.Float64()))
	}
	return x
}

// exactSum returns Σ terms rounded to float64 (from 256-bit sums: far
// closer than the tolerances), and Σ |terms|.
func exactSum(terms []float64) (sum, abs float64) {
	s, t := new(big.Float).SetPrec(256), new(big.Float)
	for _, v := range terms {
		s.Add(s, t.SetFloat64(v))
		abs += math.Abs(v)
	}
	sum, _ = s.Float64()
	return sum, abs
}

// sumOK reports whether got is the float64 sum of n terms rounded to T:
// within an ulp of T of the exact sum, plus the float64 rounding of n
// additions (n·2⁻⁵² of Σ|terms|).
func sumOK[T tensor.Float](got T, exact, abs float64, n int) bool {
	return math.Abs(float64(got)-exact) <= ulp(T(exact))+float64(n)*0x1p-52*abs
}

// TestAxisReductions: SumAxis and MeanAxis along every axis of shapes of 1
// to 4 dimensions (sizes 0 and 1, axes longer than a block, more outputs
// than the grid) are the exact sums (and means) within the rounding of
// float64 sums and one rounding to T; MaxAxis is tensor.MaxAxis to the bit
// with NaN first on an axis, NaN elsewhere, and zeros of both signs tied;
// a second run gives the same bits; a max over an empty axis, bad axes and
// lengths are errors.
func TestAxisReductions(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testAxisReductions[float32](t, k) }, func(t *testing.T) { testAxisReductions[float64](t, k) })
}

func testAxisReductions[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(17, 18))
	shapes := [][]int{{1}, {7}, {3, 4, 5, 6}, {1000, 70}, {2, 40000}, {40000, 2}, {3, 0, 2}, {0, 5}, {2, 1, 300, 3}}
	for _, shape := range shapes {
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := finite[T](r, n)
		xb := toDevice(t, k, x)
		for axis := -1; axis < len(shape); axis++ {
			ax := axis
			if ax < 0 {
				ax += len(shape)
			}
			outer, inner := 1, 1
			for i, d := range shape {
				if i < ax {
					outer *= d
				} else if i > ax {
					inner *= d
				}
			}
			na := shape[ax]
			dst := toDevice(t, k, make([]T, outer*inner))
			for _, mean := range []bool{false, true} {
				f := SumAxis[T]
				if mean {
					f = MeanAxis[T]
				}
				if err := f(k, dst, xb, shape, axis); err != nil {
					t.Fatal(err)
				}
				got := fromDevice(t, k, dst)
				if err := f(k, dst, xb, shape, axis); err != nil {
					t.Fatal(err)
				}
				again := fromDevice(t, k, dst)
				for o := range outer {
					for i := range inner {
						terms := make([]float64, na)
						for j := range na {
							terms[j] = float64(x[(o*na+j)*inner+i])
						}
						s, abs := exactSum(terms)
						v := got[o*inner+i]
						ok := sumOK(v, s, abs, na)
						if mean {
							ok = math.Abs(float64(v)-s/float64(na)) <= ulp(T(s/float64(na)))+float64(na)*0x1p-52*abs/float64(na) || na == 0 && isNaN(v)
						}
						if !ok || math.Float64bits(float64(v)) != math.Float64bits(float64(again[o*inner+i])) {
							t.Fatalf("%v axis %d, mean %v: [%d, %d] = %v (again %v), want %v", shape, axis, mean, o, i, v, again[o*inner+i], s)
						}
					}
				}
			}
			if na == 0 {
				if err := MaxAxis(k, dst, xb, shape, axis); err == nil && dst.Len() > 0 {
					t.Errorf("%v: MaxAxis over an empty axis: no error", shape)
				}
				continue
			}
			// NaN first on some axes, elsewhere on others, tied zeros.
			y := slices.Clone(x)
			for o := range outer {
				for i := range inner {
					at := func(j int) *T { return &y[(o*na+j)*inner+i] }
					switch r.IntN(5) {
					case 0:
						*at(0) = T(math.NaN())
					case 1:
						*at(r.IntN(na)) = T(math.NaN())
					case 2:
						for j := range na {
							*at(j) = T(math.Copysign(0, float64(r.IntN(2)*2-1)))
						}
					case 3:
						*at(r.IntN(na)) = T(math.Inf(1 - 2*r.IntN(2)))
					}
				}
			}
			yb := toDevice(t, k, y)
			if err := MaxAxis(k, dst, yb, shape, axis); err != nil {
				t.Fatal(err)
			}
			cpu := tensor.New[T](append(slices.Clone(shape[:ax]), shape[ax+1:]...)...)
			cpu.MaxAxis(tensor.FromSlice(y, shape...), ax)
			for i, v := range fromDevice(t, k, dst) {
				if w := cpu.Data()[i]; !same(v, w) {
					t.Fatalf("%v axis %d: max [%d] = %v, tensor.MaxAxis %v", shape, axis, i, v, w)
				}
			}
		}
	}
	b6 := toDevice(t, k, make([]T, 6))
	for name, err := range map[string]error{
		"axis 2":     SumAxis(k, b6, b6, []int{2, 3}, 2),
		"axis -3":    MeanAxis(k, b6, b6, []int{2, 3}, -3),
		"length":     SumAxis(k, b6, b6, []int{2, 3}, 0),
		"5 dims":     MaxAxis(k, b6, b6, []int{1, 1, 1, 2, 3}, 0),
		"no dims":    SumAxis(k, b6, b6, nil, 0),
		"negative":   SumAxis(k, b6, b6, []int{-2, -3}, 0),
		"empty axis": MaxAxis(k, b6, Buffer[T]{}, []int{6, 0}, 1),
	} {
		if err == nil || !strings.Contains(err.Error(), "Axis") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSums: Sum, SumSquares and Dot over every length are the exact sums
// within the rounding of float64 sums and one rounding to T, the same bits
// on a second run; a NaN makes NaN, an infinity ±Inf, +Inf and −Inf NaN;
// wrong lengths are errors.
func TestSums(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testSums[float32](t, k) }, func(t *testing.T) { testSums[float64](t, k) })
}

func testSums[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(19, 20))
	dst := toDevice(t, k, []T{7})
	get := func() T { return fromDevice(t, k, dst)[0] }
	for _, n := range lengths {
		x, y := finite[T](r, n), finite[T](r, n)
		xb, yb := toDevice(t, k, x), toDevice(t, k, y)
		for _, c := range []struct {
			name string
			run  func() error
			term func(i int) float64
		}{
			{"Sum", func() error { return Sum(k, dst, xb) }, func(i int) float64 { return float64(x[i]) }},
			{"SumSquares", func() error { return SumSquares(k, dst, xb) }, func(i int) float64 { return float64(x[i]) * float64(x[i]) }},
			{"Dot", func() error { return Dot(k, dst, xb, yb) }, func(i int) float64 { return float64(x[i]) * float64(y[i]) }},
		} {
			terms := make([]float64, n)
			for i := range terms {
				terms[i] = c.term(i)
			}
			s, abs := exactSum(terms)
			if err := c.run(); err != nil {
				t.Fatal(err)
			}
			got := get()
			if err := c.run(); err != nil {
				t.Fatal(err)
			}
			if again := get(); !sumOK(got, s, abs, 2*n) || math.Float64bits(float64(got)) != math.Float64bits(float64(again)) {
				t.Fatalf("n=%d: %s = %v (again %v), want %v", n, c.name, got, again, s)
			}
		}
	}
	for _, c := range []struct {
		x    []T
		want float64
	}{
		{[]T{1, T(math.NaN()), 2}, math.NaN()},
		{[]T{1, T(math.Inf(-1)), 2}, math.Inf(-1)},
		{[]T{T(math.Inf(1)), 1, T(math.Inf(-1))}, math.NaN()},
	} {
		if err := Sum(k, dst, toDevice(t, k, c.x)); err != nil {
			t.Fatal(err)
		}
		if got := get(); !same(got, T(c.want)) {
			t.Errorf("Sum(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	b2 := toDevice(t, k, make([]T, 2))
	if err := Sum(k, b2, b2); err == nil {
		t.Error("Sum into 2 elements: no error")
	}
	if err := Dot(k, dst, b2, dst); err == nil {
		t.Error("Dot of lengths 2 and 1: no error")
	}
}

// TestMixedErrorNorm: torchdiffeq's mixed norm over parts (one part, three,
// empty ones among them, one of huge or tiny errors that is rescaled, one
// with a NaN or an infinity) is the largest of the parts' RMS norms of
// the reference (to 1e-12 relative), the largest ratio and the NaN and Inf
// counts of them all exactly; bad parts are errors.
func TestMixedErrorNorm(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testMixedErrorNorm[float32](t, k) }, func(t *testing.T) { testMixedErrorNorm[float64](t, k) })
}

func testMixedErrorNorm[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(21, 22))
	big := 1e36
	if is64[T]() {
		big = 1e200
	}
	for _, n := range []int{1, 7, 1000, 40000} {
		for _, c := range []struct {
			name   string
			parts  []int
			scales []float64
			plant  string
		}{
			{"one part", []int{n}, []float64{1e-4}, ""},
			{"three", []int{n / 3, n / 3, n - 2*(n/3)}, []float64{1e-4, 1e-2, 1e-5}, ""},
			{"empty parts", []int{0, n, 0}, []float64{1, 1e-3, 1}, ""},
			{"huge part", []int{n / 2, n - n/2}, []float64{big, 1e-4}, ""},
			{"tiny part", []int{n / 2, n - n/2}, []float64{1e-4, 1e-200}, ""},
			{"NaN", []int{n / 2, n - n/2}, []float64{1e-4, 1e-3}, "nan"},
			{"Inf", []int{n / 2, n - n/2}, []float64{1e-4, 1e-3}, "inf"},
		} {
			e, y0, y1 := make([]T, n), make([]T, n), make([]T, n)
			at := 0
			for p, size := range c.parts {
				for i := at; i < at+size; i++ {
					e[i] = T(c.scales[p] * r.NormFloat64())
					y0[i] = T(r.NormFloat64())
					y1[i] = y0[i] + T(0.01*r.NormFloat64())
				}
				at += size
			}
			switch c.plant {
			case "nan":
				y1[n-1] = T(math.NaN())
			case "inf":
				e[0] = T(math.Inf(1))
			}
			atol, rtol := T(1e-6), T(1e-3)
			got, err := MixedErrorNorm(k, toDevice(t, k, e), toDevice(t, k, y0), toDevice(t, k, y1), atol, rtol, c.parts)
			if err != nil {
				t.Fatal(err)
			}
			var want Norm
			at = 0
			for _, size := range c.parts {
				p := normRef(e[at:at+size], y0[at:at+size], y1[at:at+size], atol, rtol)
				at += size
				want.Max = math.Max(want.Max, p.Max)
				want.NaN += p.NaN
				want.Inf += p.Inf
				if size > 0 && !(p.RMS <= want.RMS) {
					want.RMS = p.RMS
				}
			}
			if want.NaN > 0 {
				want.RMS = math.NaN()
			} else if want.Inf > 0 {
				want.RMS = math.Inf(1)
			}
			okRMS := math.Abs(got.RMS-want.RMS) <= 1e-12*want.RMS || same(got.RMS, want.RMS)
			if !okRMS || got.Max != want.Max || got.NaN != want.NaN || got.Inf != want.Inf || got.NonFinite() != (c.plant != "") {
				t.Fatalf("n=%d %s %v: %+v, want %+v", n, c.name, c.parts, got, want)
			}
		}
	}
	b := toDevice(t, k, make([]T, 6))
	for name, parts := range map[string][]int{"negative": {7, -1}, "short": {2, 3}, "long": {4, 3}, "none": nil, "too many": make([]int, MaxNormParts+1)} {
		if _, err := MixedErrorNorm(k, b, b, b, 1, 1, parts); err == nil || !strings.Contains(err.Error(), "MixedErrorNorm") {
			t.Errorf("%s parts %v: %v", name, parts, err)
		}
	}
}

// TestChannelSums: a bias's gradient over [batch, C, inner], set and
// accumulated: with inner = 1 the rows added in T in order (the reference,
// and tensor.AddColumnSums in float64) to the bit; with inner > 1 the
// exact sum within the rounding of float64 sums, rounded to T and added;
// empty batches and channels; bad sizes and lengths are errors.
func TestChannelSums(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testChannelSums[float32](t, k) }, func(t *testing.T) { testChannelSums[float64](t, k) })
}

func testChannelSums[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, s := range [][3]int{{0, 5, 1}, {1, 1, 1}, {300, 7, 1}, {64, 300, 1}, {32, 5, 784}, {3, 2, 1000}, {2, 0, 4}, {0, 3, 10}, {5, 3, 2}} {
		batch, c, inner := s[0], s[1], s[2]
		x, d0 := finite[T](r, batch*c*inner), finite[T](r, c)
		xb := toDevice(t, k, x)
		for _, acc := range []bool{false, true} {
			dst := toDevice(t, k, d0)
			if err := ChannelSums(k, dst, xb, batch, c, inner, acc); err != nil {
				t.Fatal(err)
			}
			got := fromDevice(t, k, dst)
			var cpu []T
			if inner == 1 && is64[T]() {
				cpu = slices.Clone(d0)
				if !acc {
					clear(cpu)
				}
				tensor.AddColumnSums(cpu, x)
			}
			for ch := range c {
				var start T
				if acc {
					start = d0[ch]
				}
				ok := false
				var want T
				if inner == 1 {
					want = start
					for b := range batch {
						want += x[b*c+ch]
					}
					ok = same(got[ch], want) && (cpu == nil || same(got[ch], cpu[ch]))
				} else {
					var terms []float64
					for b := range batch {
						for i := range inner {
							terms = append(terms, float64(x[(b*c+ch)*inner+i]))
						}
					}
					sum, abs := exactSum(terms)
					want = start + T(sum)
					ok = math.Abs(float64(got[ch])-float64(want)) <= ulp(want)+ulp(T(sum))+float64(len(terms))*0x1p-52*abs
				}
				if !ok {
					t.Fatalf("[%d, %d, %d] acc %v: dst[%d] = %v, want %v", batch, c, inner, acc, ch, got[ch], want)
				}
			}
		}
	}
	b6 := toDevice(t, k, make([]T, 6))
	for name, err := range map[string]error{
		"inner 0":  ChannelSums(k, b6, b6, 1, 6, 0, false),
		"negative": ChannelSums(k, b6, b6, -1, 6, 1, false),
		"dst":      ChannelSums(k, b6, b6, 2, 3, 1, false),
		"x":        ChannelSums(k, b6, b6, 2, 6, 1, false),
	} {
		if err == nil || !strings.Contains(err.Error(), "ChannelSums") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
