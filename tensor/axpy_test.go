package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddColumnSums: AddColumnSums adds each column's sum to dst, for
// every row count 0–5 and some larger, and column counts around the
// assembly's blocks of 16 and 64; within float32's rounding of the sum
// (float64: its own) of the exact sum, bit for bit equal to (Σ even rows +
// Σ odd rows) + dst where the assembly runs, writing nothing past dst and
// reading nothing past x (NaNs there would show).
func TestAddColumnSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, rows := range []int{0, 1, 2, 3, 4, 5, 17, 589} {
		for _, cols := range []int{1, 2, 15, 16, 17, 31, 48, 63, 64, 65, 79, 80, 127, 128, 129, 159, 200} {
			x := make([]float32, rows*cols+16)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := rows * cols; i < len(x); i++ {
				x[i] = float32(math.NaN())
			}
			dst := make([]float32, cols+16)
			for i := range dst {
				dst[i] = float32(rng.NormFloat64())
			}
			orig := append([]float32(nil), dst...)
			x64, dst64 := make([]float64, rows*cols), make([]float64, cols)
			for i := range x64 {
				x64[i] = float64(x[i])
			}
			for j := range dst64 {
				dst64[j] = float64(dst[j])
			}
			AddColumnSums(dst[:cols], x[:rows*cols])
			AddColumnSums(dst64, x64)
			for j := range cols {
				exact, abs := float64(orig[j]), math.Abs(float64(orig[j]))
				var even, odd float32
				for i := range rows {
					v := x[i*cols+j]
					exact += float64(v)
					abs += math.Abs(float64(v))
					if i%2 == 0 {
						even += v
					} else {
						odd += v
					}
				}
				tol := float64(rows+2) * abs
				if d := math.Abs(float64(dst[j]) - exact); d > tol*0x1p-24 || math.IsNaN(d) {
					t.Fatalf("float32 rows=%d cols=%d: column %d sums to %v, want %v", rows, cols, j, dst[j], exact)
				}
				if d := math.Abs(dst64[j] - exact); d > tol*0x1p-53 {
					t.Fatalf("float64 rows=%d cols=%d: column %d sums to %v, want %v", rows, cols, j, dst64[j], exact)
				}
				if want := (even + odd) + orig[j]; axpyAVX && rows > 0 && dst[j] != want {
					t.Fatalf("float32 rows=%d cols=%d: column %d sums to %v, want %v bit for bit", rows, cols, j, dst[j], want)
				}
			}
			for j := cols; j < len(dst); j++ {
				if dst[j] != orig[j] {
					t.Fatalf("rows=%d cols=%d: wrote dst[%d], past the end", rows, cols, j)
				}
			}
		}
	}
}

// TestAddColumnSumsMisuse: a length that is not whole rows panics, naming
// both; empty operands do nothing.
func TestAddColumnSumsMisuse(t *testing.T) {
	AddColumnSums([]float32{}, nil)
	AddColumnSums([]float32{1, 2}, nil)
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("7 values as rows of 2 columns did not panic")
		}
	}()
	AddColumnSums(make([]float32, 2), make([]float32, 7))
}

// TestSumSlice: SumSlice (in assembly for float32 where the CPU has
// AVX-512) is the float64 sum of its elements to within float64's rounding,
// at every length 0–100 and some long ones, reads nothing past the slice,
// and carries NaN and ±Inf through.
func TestSumSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range append([]int{1000, 4099}, func() []int {
		var ns []int
		for n := range 101 {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		x := make([]float32, n+9)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for i := n; i < len(x); i++ {
			x[i] = float32(math.NaN()) // past the end: must not be read
		}
		var exact, abs float64
		for _, v := range x[:n] {
			exact += float64(v)
			abs += math.Abs(float64(v))
		}
		got := SumSlice(x[:n])
		if d := math.Abs(got - exact); d > float64(n+1)*abs*0x1p-52 || math.IsNaN(got) {
			t.Fatalf("n=%d: SumSlice = %v, want %v", n, got, exact)
		}
		if n > 0 {
			for _, special := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				y := append([]float32(nil), x[:n]...)
				y[rng.IntN(n)] = special
				if got, want := SumSlice(y), float64(special); !(math.IsNaN(want) && math.IsNaN(got)) && got != want {
					t.Fatalf("n=%d with %v: SumSlice = %v", n, special, got)
				}
			}
		}
	}
}

// TestLinearCombination: LinearCombination equals a copy of base (or
// zeros) followed by one AxpySlice per term, bit for bit, for lengths 0–150
// (blocks of 64 and 16 and masked tails), 0–7 and 17 terms (more than the
// assembly's 16), with and without base, zero coefficients included; it
// reads nothing past the operands (NaNs there would show) and writes nothing
// past dst.
func TestLinearCombination(t *testing.T) {
	testLinearCombination[float32](t, 0x1p-22)
	testLinearCombination[float64](t, 0x1p-51)
}

// testLinearCombination checks LinearCombination in T against axpys,
// bit for bit where the assembly runs (else within tol of the terms'
// magnitude).
func testLinearCombination[T Float](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(6, 6))
	for n := range 151 {
		for _, m := range []int{0, 1, 2, 5, 7, 17} {
			for _, withBase := range []bool{false, true} {
				src := make([][]T, m)
				coef := make([]T, m)
				for j := range src {
					src[j] = make([]T, n+17)
					for i := range src[j] {
						src[j][i] = T(rng.NormFloat64())
					}
					for i := n; i < len(src[j]); i++ {
						src[j][i] = T(math.NaN())
					}
					if rng.IntN(4) > 0 {
						coef[j] = T(rng.NormFloat64())
					}
				}
				var base []T
				if withBase {
					base = make([]T, n+3)
					for i := range base {
						base[i] = T(rng.NormFloat64())
					}
					base[n] = T(math.NaN())
				}
				want, mag := make([]T, n), make([]float64, n)
				if withBase {
					copy(want, base)
				}
				for j := range src {
					for i := range want {
						want[i] += T(coef[j] * src[j][i]) // the conversion rounds the product
						mag[i] += math.Abs(float64(want[i]))
					}
				}
				dst := make([]T, n+5)
				for i := range dst {
					dst[i] = 7
				}
				var b []T
				if withBase {
					b = base[:n]
				}
				LinearCombination(dst[:n], b, coef, src)
				for i := range want {
					// Bit for bit where the assembly runs; gonum's axpy loop
					// may be fused into multiply-adds on other architectures.
					if d := math.Abs(float64(dst[i] - want[i])); dst[i] != want[i] && (axpyAVX || !(d <= tol*mag[i])) {
						t.Fatalf("%T n=%d m=%d base=%v: dst[%d] = %v, want %v", dst[i], n, m, withBase, i, dst[i], want[i])
					}
				}
				for i := n; i < len(dst); i++ {
					if dst[i] != 7 {
						t.Fatalf("n=%d m=%d: wrote dst[%d], past the end", n, m, i)
					}
				}
			}
		}
	}
}

// TestLinearCombinationMisuse: mismatched coefficients and sources, and a
// short base or source, panic.
func TestLinearCombinationMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"coefficients": func() { LinearCombination(make([]float32, 4), nil, []float32{1}, nil) },
		"base":         func() { LinearCombination(make([]float32, 4), make([]float32, 3), nil, nil) },
		"source":       func() { LinearCombination(make([]float32, 4), nil, []float32{1}, [][]float32{make([]float32, 3)}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
