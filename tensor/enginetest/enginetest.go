// Package enginetest is the conformance suite for tensor.Engine
// implementations: every backend's tests call Run, which checks GEMM and the
// three convolution passes against plain reference loops on many shapes
// (size-1 dimensions, odd sizes, batch 1, stride 1 and 2, padding 0, 1 and 2),
// and the engine's tensor.Elementwise where it has one (the CPU engines and
// package cuda's do).
package enginetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// Run runs the whole suite on e: Elementwise's too where e has one
// (tensor.ElementwiseOf), the CPU engines' included.
func Run[T tensor.Float](t *testing.T, e tensor.Engine[T]) {
	t.Run("Gemm", func(t *testing.T) { Gemm(t, e) })
	t.Run("GemmBias", func(t *testing.T) { GemmBias(t, e) })
	t.Run("Conv2D", func(t *testing.T) { Conv2D(t, e) })
	if el := tensor.ElementwiseOf(e); el != nil {
		t.Run("Elementwise", func(t *testing.T) { Elementwise(t, el) })
	}
}

// tol is the relative tolerance for type T: reductions of a few hundred
// terms in float32 lose a few ulps.
func tol[T tensor.Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 2e-4
	}
	return 1e-11
}

// assertClose fails unless got and want agree elementwise within rel·scale,
// where scale is the largest magnitude of want (or 1).
func assertClose[T tensor.Float](t *testing.T, name string, got, want []T, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	scale := 1.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(float64(w)))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= rel*scale) {
			t.Fatalf("%s: element %d = %v, want %v (|diff| %g > %g)", name, i, got[i], want[i], d, rel*scale)
		}
	}
}

func randSlice[T tensor.Float](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(2*rng.Float64() - 1)
	}
	return s
}

// RefGemm computes C = alpha·op(A)·op(B) + beta·C with plain loops.
func RefGemm[T tensor.Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				ai, bi := i*lda+l, l*ldb+j
				if transA {
					ai = l*lda + i
				}
				if transB {
					bi = j*ldb + l
				}
				av, bv := a[ai], b[bi]
				s += float64(av) * float64(bv)
			}
			c[i*ldc+j] = alpha*T(s) + beta*c[i*ldc+j]
		}
	}
}

// Gemm checks e.Gemm against RefGemm over shapes, transposes, strides
// larger than the row length, and alpha/beta, including products large enough
// that an engine splits them across workers.
func Gemm[T tensor.Float](t *testing.T, e tensor.Engine[T]) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {1, 7, 3}, {5, 1, 4}, {3, 4, 1}, {17, 13, 11}, {64, 33, 70}, {130, 129, 131}, {2, 300, 5000}, {300, 2, 5000}}
	for _, sh := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				m, n, k := sh[0], sh[1], sh[2]
				pad := rng.IntN(3)
				ar, ac := m, k
				if ta {
					ar, ac = k, m
				}
				br, bc := k, n
				if tb {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+pad, bc+pad, n+pad
				a := randSlice[T](rng, ar*lda)
				b := randSlice[T](rng, br*ldb)
				c := randSlice[T](rng, m*ldc)
				want := append([]T(nil), c...)
				alpha, beta := T(1.5), T(-0.5)
				e.Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
				RefGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
				assertClose(t, fmt.Sprintf("%s gemm m=%d n=%d k=%d tA=%v tB=%v", e.Name(), m, n, k, ta, tb), c, want, tol[T]()*math.Sqrt(float64(k)))
			}
		}
	}
}

// GemmBias checks Tensor.GemmBias on e (the engine's BiasGemmer, or the
// copy of the bias followed by Gemm) against RefGemm plus the bias, on
// shapes that the engines split by rows and by columns, with the
// destination filled with NaN beforehand (it must not be read).
func GemmBias[T tensor.Float](t *testing.T, e tensor.Engine[T]) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{1, 1, 1}, {5, 1, 4}, {3, 4, 0}, {17, 13, 11}, {64, 33, 70}, {130, 129, 131}, {100, 20, 300}, {2048, 64, 64}, {64, 2048, 64}}
	for _, sh := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				m, n, k := sh[0], sh[1], sh[2]
				as, bs := []int{m, k}, []int{k, n}
				if ta {
					as = []int{k, m}
				}
				if tb {
					bs = []int{n, k}
				}
				a := tensor.FromSlice(randSlice[T](rng, m*k), as...)
				b := tensor.FromSlice(randSlice[T](rng, k*n), bs...)
				bias := tensor.FromSlice(randSlice[T](rng, n), n)
				z := tensor.New[T](m, n)
				z.Fill(T(math.NaN()))
				z.GemmBias(e, 1.5, a, ta, b, tb, bias)
				want := make([]T, m*n)
				RefGemm(ta, tb, m, n, k, 1.5, a.ReadData(), as[1], b.ReadData(), bs[1], 0, want, n)
				for i := range m {
					for j := range n {
						want[i*n+j] += bias.ReadData()[j]
					}
				}
				assertClose(t, fmt.Sprintf("%s GemmBias m=%d n=%d k=%d tA=%v tB=%v", e.Name(), m, n, k, ta, tb), z.ReadData(), want, tol[T]()*math.Sqrt(float64(k+1)))
			}
		}
	}
}

// ConvCase is one convolution shape of the suite.
type ConvCase struct {
	B, C, H, W, Co, KH, KW int
	P                      tensor.ConvParams
}

// ConvCases returns the suite's shapes: batch 1 and more, 1×1 and larger
// kernels, stride 1 and 2, padding 0, 1 and 2, odd and non-square sizes.
func ConvCases() []ConvCase {
	var cs []ConvCase
	for _, b := range []int{1, 3} {
		for _, k := range [][2]int{{1, 1}, {3, 3}, {2, 3}} {
			for _, stride := range []int{1, 2} {
				for _, pad := range []int{0, 1, 2} {
					cs = append(cs, ConvCase{B: b, C: 2, H: 7, W: 6, Co: 3, KH: k[0], KW: k[1], P: tensor.ConvParams{Stride: stride, Pad: pad}})
				}
			}
		}
	}
	cs = append(cs,
		ConvCase{B: 5, C: 4, H: 9, W: 11, Co: 6, KH: 3, KW: 3, P: tensor.ConvParams{Stride: 1, Pad: 1}},
		ConvCase{B: 2, C: 1, H: 1, W: 1, Co: 1, KH: 1, KW: 1},
		ConvCase{B: 2, C: 3, H: 2, W: 2, Co: 2, KH: 5, KW: 5, P: tensor.ConvParams{Pad: 2}}, // kernel wider than input
		ConvCase{B: 4, C: 6, H: 28, W: 28, Co: 5, KH: 1, KW: 1},                             // the paper's pointwise shape, small
	)
	// 3×3 at stride 1 with many channels (the CPU engines' Winograd path,
	// from C·Co/(C + Co) ≥ 6 or 16): odd and even output sizes, pads 0 to
	// 2, an output of one pixel.
	for _, pad := range []int{0, 1, 2} {
		cs = append(cs, ConvCase{B: 2, C: 40, H: 7, W: 6, Co: 41, KH: 3, KW: 3, P: tensor.ConvParams{Stride: 1, Pad: pad}})
	}
	cs = append(cs,
		ConvCase{B: 1, C: 41, H: 3, W: 3, Co: 40, KH: 3, KW: 3, P: tensor.ConvParams{Stride: 1}},
		ConvCase{B: 2, C: 40, H: 1, W: 2, Co: 40, KH: 3, KW: 3, P: tensor.ConvParams{Stride: 1, Pad: 1}},
		ConvCase{B: 1, C: 40, H: 4, W: 37, Co: 40, KH: 3, KW: 3, P: tensor.ConvParams{Stride: 1, Pad: 1}}, // rows of more than 16 tiles
	)
	return cs
}

// RefConv2D computes y = w ⋆ x with direct loops (see tensor.Engine).
func RefConv2D[T tensor.Float](y, x, w *tensor.Tensor[T], p tensor.ConvParams) {
	forEachTap(x, w, y, p, func(yi, xi, wi int) {
		y.Data()[yi] += x.Data()[xi] * w.Data()[wi]
	}, true)
}

// forEachTap calls f for every (output, input, filter) index triple that
// contributes to a convolution, after zeroing y when zero is set.
func forEachTap[T tensor.Float](x, w, y *tensor.Tensor[T], p tensor.ConvParams, f func(yi, xi, wi int), zero bool) {
	xs, ws, ys := x.Shape(), w.Shape(), y.Shape()
	stride := max(p.Stride, 1)
	if zero {
		y.Zero()
	}
	for b := 0; b < xs[0]; b++ {
		for o := 0; o < ws[0]; o++ {
			for oy := 0; oy < ys[2]; oy++ {
				for ox := 0; ox < ys[3]; ox++ {
					yi := ((b*ys[1]+o)*ys[2]+oy)*ys[3] + ox
					for c := 0; c < xs[1]; c++ {
						for i := 0; i < ws[2]; i++ {
							for j := 0; j < ws[3]; j++ {
								iy, ix := oy*stride-p.Pad+i, ox*stride-p.Pad+j
								if iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3] {
									continue
								}
								xi := ((b*xs[1]+c)*xs[2]+iy)*xs[3] + ix
								wi := ((o*ws[1]+c)*ws[2]+i)*ws[3] + j
								f(yi, xi, wi)
							}
						}
					}
				}
			}
		}
	}
}

// RefConv2DBackwardData computes dx from dy with direct loops.
func RefConv2DBackwardData[T tensor.Float](dx, dy, w *tensor.Tensor[T], p tensor.ConvParams) {
	dx.Zero()
	forEachTap(dx, w, dy, p, func(yi, xi, wi int) {
		dx.Data()[xi] += dy.Data()[yi] * w.Data()[wi]
	}, false)
}

// RefConv2DBackwardFilter computes dw from dy and x with direct loops.
func RefConv2DBackwardFilter[T tensor.Float](dw, dy, x *tensor.Tensor[T], p tensor.ConvParams) {
	dw.Zero()
	forEachTap(x, dw, dy, p, func(yi, xi, wi int) {
		dw.Data()[wi] += dy.Data()[yi] * x.Data()[xi]
	}, false)
}

// Conv2D checks the three convolution passes of e against the reference
// loops on every case of ConvCases, with and without accumulation, with a
// bias on every other case and none on the rest.
func Conv2D[T tensor.Float](t *testing.T, e tensor.Engine[T]) {
	rng := rand.New(rand.NewPCG(3, 4))
	for ci, c := range ConvCases() {
		name := fmt.Sprintf("%s %+v", e.Name(), c)
		x := tensor.RandU[T](rng, -1, 1, c.B, c.C, c.H, c.W)
		w := tensor.RandU[T](rng, -1, 1, c.Co, c.C, c.KH, c.KW)
		ys := tensor.Conv2DOutputShape(x.Shape(), w.Shape(), c.P)
		if ys[2] == 0 || ys[3] == 0 {
			continue
		}
		var b, db, wantDb *tensor.Tensor[T]
		if ci%2 == 0 {
			b = tensor.RandU[T](rng, -1, 1, c.Co)
			db, wantDb = tensor.Full[T](7, c.Co), tensor.New[T](c.Co)
		}
		rel := tol[T]() * 10
		y := tensor.Full[T](7, ys...) // stale contents must be overwritten
		want := tensor.New[T](ys...)
		e.Conv2D(y, x, w, b, c.P)
		RefConv2D(want, x, w, c.P)
		if b != nil {
			want.AddBias(want, b)
		}
		assertClose(t, name+" forward", y.Data(), want.Data(), rel)

		dy := tensor.RandU[T](rng, -1, 1, ys...)
		dx := tensor.Full[T](7, x.Shape()...)
		wantDx := tensor.New[T](x.Shape()...)
		e.Conv2DBackwardData(dx, dy, w, c.P, false)
		RefConv2DBackwardData(wantDx, dy, w, c.P)
		assertClose(t, name+" backward data", dx.Data(), wantDx.Data(), rel)
		e.Conv2DBackwardData(dx, dy, w, c.P, true)
		assertClose(t, name+" backward data (accumulate)", dx.Data(), tensor.Scale(wantDx, 2).Data(), rel)

		dw := tensor.Full[T](7, w.Shape()...)
		wantDw := tensor.New[T](w.Shape()...)
		e.Conv2DBackwardFilter(dw, db, dy, x, c.P, false)
		RefConv2DBackwardFilter(wantDw, dy, x, c.P)
		assertClose(t, name+" backward filter", dw.Data(), wantDw.Data(), rel)
		if db != nil {
			wantDb.SumPerChannel(dy)
			assertClose(t, name+" bias gradient", db.Data(), wantDb.Data(), rel)
		}
		e.Conv2DBackwardFilter(dw, db, dy, x, c.P, true)
		assertClose(t, name+" backward filter (accumulate)", dw.Data(), tensor.Scale(wantDw, 2).Data(), rel)
		if db != nil {
			assertClose(t, name+" bias gradient (accumulate)", db.Data(), tensor.Scale(wantDb, 2).Data(), rel)
		}
	}
}
