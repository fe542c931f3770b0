//go:build !purego

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// The AVX2 slice kernels (axpy_avx2_amd64.s) against their Go loops, bit
// for bit, wherever the CPU runs AVX2, whatever the kernel path: at every
// length 0–40 (whole vectors, the masked tails) and some long ones,
// reading nothing past the operands (NaNs there would show) and writing
// nothing past the output.

func needAVX2(t *testing.T) {
	if !isa.AVX2.Runs(isa.Best()) {
		t.Skip("this CPU has no AVX2 and FMA")
	}
}

// avx2Lens are the lengths the tests try.
func avx2Lens() []int {
	var ns []int
	for n := range 41 {
		ns = append(ns, n)
	}
	return append(ns, 63, 64, 65, 100, 1000, 1027)
}

// randSliceAVX2 returns n normal values then pad NaNs.
func randSliceAVX2[T Float](rng *rand.Rand, n, pad int) []T {
	x := make([]T, n+pad)
	for i := range n {
		x[i] = T(rng.NormFloat64())
		if rng.IntN(20) == 0 {
			x[i] = T([]float64{0, math.Copysign(0, -1), math.Inf(1), 1e-310}[rng.IntN(4)])
		}
	}
	for i := n; i < len(x); i++ {
		x[i] = T(math.NaN())
	}
	return x
}

func sameBitsAVX2[T Float](a, b T) bool {
	if _, ok := any(a).(float32); ok {
		return math.Float32bits(float32(a)) == math.Float32bits(float32(b))
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || a != a && b != b
}

func TestAxpyAVX2(t *testing.T) {
	needAVX2(t)
	testAxpyAVX2(t, func(a float32, x, y []float32) { axpyAVX2(a, slicePtr(x), slicePtr(y), len(y)) })
	testAxpyAVX2(t, func(a float64, x, y []float64) { axpy64AVX2(a, slicePtr(x), slicePtr(y), len(y)) })
}

// slicePtr returns &x[0], or nil for an empty x (the kernels read nothing then).
func slicePtr[T any](x []T) *T {
	if len(x) == 0 {
		return nil
	}
	return &x[0]
}

func testAxpyAVX2[T Float](t *testing.T, kern func(a T, x, y []T)) {
	rng := rand.New(rand.NewPCG(1, 52))
	for _, n := range avx2Lens() {
		a := T(rng.NormFloat64())
		x, y := randSliceAVX2[T](rng, n, 9), randSliceAVX2[T](rng, n, 0)
		y = append(y, 7, 7, 7)
		want := append([]T(nil), y...)
		for i := range n {
			want[i] += T(a * x[i])
		}
		kern(a, x[:n+9], y[:n])
		for i := range want {
			if !sameBitsAVX2(y[i], want[i]) {
				t.Fatalf("%T n=%d: y[%d] = %v, want %v", a, n, i, y[i], want[i])
			}
		}
	}
}

func TestLinCombAVX2(t *testing.T) {
	needAVX2(t)
	testLinCombAVX2(t, func(dst, base []float32, coef []float32, src []*float32) {
		linCombAVX2(slicePtr(dst), slicePtr(base), len(dst), slicePtr(coef), slicePtr(src), len(src))
	})
	testLinCombAVX2(t, func(dst, base []float64, coef []float64, src []*float64) {
		linComb64AVX2(slicePtr(dst), slicePtr(base), len(dst), slicePtr(coef), slicePtr(src), len(src))
	})
}

func testLinCombAVX2[T Float](t *testing.T, kern func(dst, base, coef []T, src []*T)) {
	rng := rand.New(rand.NewPCG(2, 52))
	for _, n := range avx2Lens() {
		for _, m := range []int{0, 1, 3, 16} {
			for _, withBase := range []bool{false, true} {
				coef := make([]T, m)
				src := make([][]T, m)
				ptrs := make([]*T, m)
				for j := range src {
					coef[j] = T(rng.NormFloat64())
					src[j] = randSliceAVX2[T](rng, n, 9)
					ptrs[j] = &src[j][0]
				}
				var base []T
				want := make([]T, n, n+3)
				if withBase {
					base = randSliceAVX2[T](rng, n, 9)
					copy(want, base)
				}
				for j := range src {
					for i := range want {
						want[i] += T(coef[j] * src[j][i])
					}
				}
				dst := append(make([]T, n), 7, 7, 7)
				if n == 0 {
					continue
				}
				var b []T
				if withBase {
					b = base[:n]
				}
				kern(dst[:n], b, coef, ptrs)
				want = append(want, 7, 7, 7)
				for i := range want {
					if !sameBitsAVX2(dst[i], want[i]) {
						t.Fatalf("%T n=%d m=%d base=%v: dst[%d] = %v, want %v", dst[0], n, m, withBase, i, dst[i], want[i])
					}
				}
			}
		}
	}
}

// TestColSumsAVX2: each column's (Σ even rows + Σ odd rows) + dst, as
// colSumsAVX512 forms it.
func TestColSumsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(3, 52))
	for _, rows := range []int{0, 1, 2, 3, 4, 5, 17} {
		for _, cols := range avx2Lens() {
			x := randSliceAVX2[float32](rng, rows*cols, 9)
			dst := append(randSliceAVX2[float32](rng, cols, 0), 7, 7, 7)
			want := append([]float32(nil), dst...)
			for j := range cols {
				var even, odd float32
				for i := range rows {
					if i%2 == 0 {
						even += x[i*cols+j]
					} else {
						odd += x[i*cols+j]
					}
				}
				want[j] = (even + odd) + want[j]
			}
			if cols > 0 && rows > 0 {
				colSumsAVX2(&dst[0], &x[0], rows, cols)
			}
			for j := range want {
				if rows > 0 && !sameBitsAVX2(dst[j], want[j]) {
					t.Fatalf("rows=%d cols=%d: dst[%d] = %v, want %v", rows, cols, j, dst[j], want[j])
				}
			}
		}
	}
}

// sumOrder512 is sumAVX512's sum in Go: four sums of 8 lanes over blocks
// of 32, then blocks of 8 into the first, the tail into the second, and
// the lanes added in a tree.
func sumOrder512(x []float32) float64 {
	var acc [4][8]float64
	i := 0
	for ; len(x)-i >= 32; i += 32 {
		for z := range 4 {
			for l := range 8 {
				acc[z][l] += float64(x[i+8*z+l])
			}
		}
	}
	for ; len(x)-i >= 8; i += 8 {
		for l := range 8 {
			acc[0][l] += float64(x[i+l])
		}
	}
	for l := range len(x) - i {
		acc[1][l] += float64(x[i+l])
	}
	var z0 [8]float64
	for l := range 8 {
		z0[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	var y [4]float64
	for l := range 4 {
		y[l] = z0[l] + z0[l+4]
	}
	return (y[0] + y[2]) + (y[1] + y[3])
}

// TestSumAVX2: sumAVX2 is sumAVX512's sum to the bit (and sumAVX512 itself
// where the CPU runs it).
func TestSumAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(4, 52))
	for _, n := range avx2Lens() {
		x := randSliceAVX2[float32](rng, n, 9)
		for i := range n {
			x[i] *= float32(math.Pow(2, float64(rng.IntN(40)-20)))
		}
		want := sumOrder512(x[:n])
		if n == 0 {
			continue
		}
		if got := sumAVX2(&x[0], n); !sameBitsAVX2(got, want) {
			t.Fatalf("n=%d: sumAVX2 = %v, want %v", n, got, want)
		}
		if isa.Best() == isa.AVX512 {
			if got := sumAVX512(&x[0], n); !sameBitsAVX2(got, want) {
				t.Fatalf("n=%d: sumAVX512 = %v, want %v", n, got, want)
			}
		}
	}
}

// TestReLU64AVX2: relu64AVX2 and leaky64AVX2 against max(x, 0) and
// x > 0 ? x : slope·x, NaN kept.
func TestReLU64AVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(5, 52))
	for _, n := range avx2Lens() {
		x := randSliceAVX2[float64](rng, n, 2)
		if n > 3 {
			x[3] = math.NaN()
		}
		for _, slope := range []float64{0, 0.3, -2.5} {
			z := append(make([]float64, n), 7, 7)
			want := append(make([]float64, n), 7, 7)
			for i := range n {
				if slope == 0 {
					want[i] = max(x[i], 0)
				} else if x[i] > 0 || x[i] != x[i] {
					want[i] = x[i]
				} else {
					want[i] = slope * x[i]
				}
			}
			if slope == 0 {
				relu64AVX2(z[:n], x[:n])
			} else {
				leaky64AVX2(z[:n], x[:n], slope)
			}
			for i := range want {
				if !sameBitsAVX2(z[i], want[i]) {
					t.Fatalf("slope=%v n=%d: z[%d] = %v, want %v (x %v)", slope, n, i, z[i], want[i], x[i])
				}
			}
		}
	}
}
