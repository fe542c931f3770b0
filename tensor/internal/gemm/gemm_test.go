package gemm

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// goKernel is a Kernel in Go: rowsInPlace selects the layout of A read by
// rows (a[i·ka + p]), else a[p·ka + i]. maxRows is the rows it computes at
// most; it records the calls in *calls.
func goKernel(maxRows int, rowsInPlace bool, calls *int) Kernel[float64] {
	return func(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
		*calls++
		if rows > maxRows {
			panic(fmt.Sprintf("a kernel of %d rows asked for %d", maxRows, rows))
		}
		w := bits.OnesCount32(mask)
		if mask != Lanes(w) {
			panic(fmt.Sprintf("mask %b is not the first lanes", mask))
		}
		at := func(p int) float64 { return *(*float64)(ptrAdd(a, p)) }
		for i := range rows {
			for j := range w {
				var s float64
				for p := range k {
					ai := p*ka + i
					if rowsInPlace {
						ai = i*ka + p
					}
					s += at(ai) * *(*float64)(ptrAdd(b, p*ldb+j))
				}
				cp := (*float64)(ptrAdd(c, i*ldc+j))
				v := alpha * s
				if beta != 0 {
					v += beta * *cp
				}
				if bias != nil {
					v += *(*float64)(ptrAdd(bias, j))
				}
				*cp = v
			}
		}
	}
}

// testDriver is a Driver with blocks small enough that every edge is met
// at small sizes: tiles of 3 × 4 (edge kernels of 1, 2 and 3 rows; panels
// of 2 or 4 columns), k in blocks of 5, A in blocks of 7 rows, B of 9
// columns; A packed from widths of 6, B read in place up to 4 rows.
func testDriver(calls *int) *Driver[float64] {
	return &Driver[float64]{
		MR: 3, NR: 4, KC: 5, MC: 7, NC: 9,
		DirectBMaxM: 4, PackAMinN: 6, Enabled: true,
		PanelWidth: func(w int) int {
			if w <= 2 {
				return 2
			}
			return 4
		},
		InPlaceTiles: func(trans bool, w, kb int, a []float64, lda, edge int, b *float64, ldb int, c []float64, ldc int, alpha, beta float64, mask uint32, bias *float64) {
			kern, step := goKernel(3, !trans, calls), lda
			if trans {
				step = 1
			}
			for i0 := 0; i0 < edge; i0 += 3 {
				kern(kb, &a[i0*step], lda, b, ldb, &c[i0*ldc], ldc, alpha, beta, 3, mask, bias)
			}
		},
		Edge: func(rows, w int) Kernel[float64] { return goKernel(min(3, rows+rows%2), false, calls) },
		PackPanel: func(d []float64, s, w, kb int, perStep bool, src []float64, base, ld int) {
			PackPanelGo(d, s, w, kb, perStep, src, base, ld)
		},
		Fallback: gonum.Implementation{}.Dgemm,
	}
}

// TestDriver: Gemm and GemmBias through the blocking equal gonum's Dgemm
// for every transposition, shapes around the blocks, beta 0 (C's NaNs
// unread), 1 and another, strides wider than the matrices, with reused
// and with fresh (exactly sized) pack buffers; the kernels run (calls
// counted); nothing outside C's m×n is written.
func TestDriver(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var calls int
	d := testDriver(&calls)
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 19}
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	for trial := range 600 {
		m, n, k := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]
		tA, tB := trans[rng.IntN(2)], trans[rng.IntN(2)]
		beta := []float64{0, 1, -0.5}[rng.IntN(3)]
		withBias := rng.IntN(3) == 0
		ar, ac := m, k
		if tA == blas.Trans {
			ar, ac = k, m
		}
		br, bc := k, n
		if tB == blas.Trans {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+rng.IntN(3), bc+rng.IntN(3), n+rng.IntN(3)
		a, b := randSlice(rng, (ar-1)*lda+ac), randSlice(rng, (br-1)*ldb+bc)
		c := randSlice(rng, m*ldc)
		if beta == 0 || withBias {
			for i := range c {
				c[i] = math.NaN() // not read
			}
		}
		for i := range m {
			for j := n; j < ldc; j++ {
				c[i*ldc+j] = 42 // beyond the matrix
			}
		}
		want := append([]float64(nil), c...)
		bias := randSlice(rng, n)
		before := calls
		dt := d
		if trial%2 == 1 {
			dt = testDriver(&calls) // pack buffers of exactly the size needed
		}
		if withBias {
			for i := range m {
				copy(want[i*ldc:i*ldc+n], bias)
			}
			gonum.Implementation{}.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 1, want, ldc)
			dt.GemmBias(tA, tB, m, n, k, 1.5, a, lda, b, ldb, bias, c, ldc)
		} else {
			gonum.Implementation{}.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, beta, want, ldc)
			dt.Gemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, beta, c, ldc)
		}
		if calls == before {
			t.Fatalf("trial %d: no kernel ran", trial)
		}
		for i := range c {
			if !(math.Abs(c[i]-want[i]) <= 1e-12*(1+math.Abs(want[i]))) {
				t.Fatalf("trial %d (m=%d n=%d k=%d %c%c beta=%g bias=%v lda=%d ldb=%d ldc=%d): c[%d] = %v, want %v",
					trial, m, n, k, tA, tB, beta, withBias, lda, ldb, ldc, i, c[i], want[i])
			}
		}
	}
	if len(d.free) != 1 {
		t.Errorf("%d pack buffers on the free list after sequential calls, want 1", len(d.free))
	}
}

// TestDriverDegenerate: k = 0 or alpha = 0 scale C (or set it to the bias)
// without a kernel; a driver without kernels is its Fallback.
func TestDriverDegenerate(t *testing.T) {
	var calls int
	d := testDriver(&calls)
	c := []float64{1, 2, 3, 4}
	d.Gemm(blas.NoTrans, blas.NoTrans, 2, 2, 0, 1, []float64{0}, 1, nil, 2, 3, c, 2)
	d.Gemm(blas.NoTrans, blas.NoTrans, 2, 2, 1, 0, []float64{1, 1}, 1, []float64{1, 1}, 2, 0.5, c, 2)
	if want := []float64{1.5, 3, 4.5, 6}; fmt.Sprint(c) != fmt.Sprint(want) || calls != 0 {
		t.Errorf("C = %v after two scalings (%d kernel calls), want %v", c, calls, want)
	}
	d.GemmBias(blas.NoTrans, blas.NoTrans, 2, 2, 0, 1, []float64{0}, 1, nil, 2, []float64{7, 8}, c, 2)
	if want := []float64{7, 8, 7, 8}; fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("C = %v after a bias with k = 0, want %v", c, want)
	}
	d.Enabled = false
	d.GemmBias(blas.NoTrans, blas.NoTrans, 2, 2, 1, 2, []float64{1, 2}, 1, []float64{3, 4}, 2, []float64{1, 1}, c, 2)
	if want := []float64{7, 9, 13, 17}; fmt.Sprint(c) != fmt.Sprint(want) || calls != 0 {
		t.Errorf("C = %v from the fallback (%d kernel calls), want %v", c, calls, want)
	}
}

// TestCheckArgs: each argument check panics with gonum's message when its
// argument is one short (or negative), and passes when it is just enough,
// for both transpositions of A and B; empty matrices need no storage.
func TestCheckArgs(t *testing.T) {
	N, T := blas.NoTrans, blas.Trans
	type args struct {
		tA, tB                    blas.Transpose
		m, n, k                   int
		la, lda, lb, ldb, lc, ldc int
	}
	// A valid call for m = 2, n = 3, k = 4 with tight storage.
	valid := func(tA, tB blas.Transpose) args {
		a := args{tA: tA, tB: tB, m: 2, n: 3, k: 4, lda: 4, la: 8, ldb: 3, lb: 12, ldc: 3, lc: 6}
		if tA == T {
			a.lda, a.la = 2, 8
		}
		if tB == T {
			a.ldb, a.lb = 4, 12
		}
		return a
	}
	call := func(a args) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		CheckArgs(a.tA, a.tB, a.m, a.n, a.k, make([]float64, a.la), a.lda, make([]float64, a.lb), a.ldb, make([]float64, a.lc), a.ldc)
		return ""
	}
	for _, tA := range []blas.Transpose{N, T} {
		for _, tB := range []blas.Transpose{N, T} {
			v := valid(tA, tB)
			if msg := call(v); msg != "" {
				t.Fatalf("%c%c: a valid call panicked: %s", tA, tB, msg)
			}
			for _, c := range []struct {
				name string
				edit func(*args)
				want string
			}{
				{"transpose A", func(a *args) { a.tA = 'x' }, "blas: illegal transpose"},
				{"transpose B", func(a *args) { a.tB = 'x' }, "blas: illegal transpose"},
				{"m", func(a *args) { a.m = -1 }, "blas: m < 0"},
				{"n", func(a *args) { a.n = -1 }, "blas: n < 0"},
				{"k", func(a *args) { a.k = -1 }, "blas: k < 0"},
				{"lda", func(a *args) { a.lda-- }, "blas: bad leading dimension of A"},
				{"ldb", func(a *args) { a.ldb-- }, "blas: bad leading dimension of B"},
				{"ldc", func(a *args) { a.ldc-- }, "blas: bad leading dimension of C"},
				{"len a", func(a *args) { a.la-- }, "blas: insufficient length of a"},
				{"len b", func(a *args) { a.lb-- }, "blas: insufficient length of b"},
				{"len c", func(a *args) { a.lc-- }, "blas: insufficient length of c"},
			} {
				a := v
				c.edit(&a)
				if msg := call(a); msg != c.want {
					t.Errorf("%c%c %s: panic %q, want %q", tA, tB, c.name, msg, c.want)
				}
			}
			for _, empty := range []func(*args){
				func(a *args) { a.m, a.la, a.lc = 0, 0, 0 },
				func(a *args) { a.n, a.lb, a.lc = 0, 0, 0 },
			} {
				a := v
				empty(&a)
				if msg := call(a); msg != "" {
					t.Errorf("%c%c: an empty C with no storage panicked: %s", tA, tB, msg)
				}
			}
		}
	}
	var calls int
	func() {
		defer func() {
			if r := recover(); fmt.Sprint(r) != "blas: bias shorter than n" {
				t.Errorf("a short bias: panic %v", r)
			}
		}()
		a := make([]float64, 6)
		testDriver(&calls).GemmBias(blas.NoTrans, blas.NoTrans, 2, 3, 1, 1, a, 1, a, 3, a[:2], a, 3)
	}()
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}
