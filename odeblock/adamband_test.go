package odeblock

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// bitsOf returns x's bits (float32's in the low 32).
func bitsOf[T tensor.Float](x T) uint64 {
	if f, ok := any(x).(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(float64(x))
}

// sameOrNaN reports whether got and want have the same bits or are both NaN.
func sameOrNaN[T tensor.Float](got, want T) bool {
	return bitsOf(got) == bitsOf(want) || (got != got && want != want)
}

// scalarOffsets returns the offsets the assembly reads the scalars of an
// argument block at: n at nOff, then the element type's scalars one after
// the other (k of them), each at its size.
func scalarOffsets[T tensor.Float](nOff uintptr, k int) []uintptr {
	size := unsafe.Sizeof(T(0))
	o := []uintptr{nOff}
	for i := range k {
		o = append(o, nOff+8+uintptr(i)*size)
	}
	return o
}

func sameOffsets(got, want []uintptr) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestAdamBandKernel: the adjoint update's kernels (each the CPU runs:
// forEachKernels) read adamBandArgs at
// the offsets they assume and equal band's Go loops bit for bit (the Post
// ones after scaleDerivInto's last loop), in float32 and float64, at every
// length 0–70 (whole vectors and masked tails), with signed zeros, NaN and
// ±Inf among the operands, writing nothing past n.
func TestAdamBandKernel(t *testing.T) {
	forEachKernels(t, func(t *testing.T) {
		t.Run("float32", testAdamBandKernel[float32])
		t.Run("float64", testAdamBandKernel[float64])
	})
}

func testAdamBandKernel[T tensor.Float](t *testing.T) {
	var a adamBandArgs[T]
	if o, w := []uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps)}, scalarOffsets[T](104, 3); !sameOffsets(o, w) || unsafe.Offsetof(a.dav) != 96 {
		t.Fatalf("adamBandArgs: n, a1, a2, eps at %v, dav at %d; the assembly reads %v and 96", o, unsafe.Offsetof(a.dav), w)
	}
	if !hasAdamKernels[T]() {
		t.Skip("no assembly kernel in this build or on this kernel path")
	}
	for _, post := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 4))
		eps := T(1e-3)
		specials := []T{0, T(math.Copysign(0, -1)), T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1)), 1e-30}
		a1, a2 := T(0.3), T(0.9)
		for n := range 71 {
			in := make([][]T, 8) // g, m, v, ah, am, av, s, ds
			for k := range in {
				in[k] = make([]T, n+1)
				for i := range in[k] {
					in[k][i] = T(rng.NormFloat64())
					if rng.IntN(12) == 0 {
						in[k][i] = specials[rng.IntN(len(specials))]
					}
				}
			}
			out := make([][]T, 5) // dh, dm, dv, dam, dav
			for k := range out {
				out[k] = make([]T, n+1)
				out[k][n] = 42
			}
			ran := runAdamBand(&adamBandArgs[T]{
				g: &in[0][0], m: &in[1][0], v: &in[2][0], ah: &in[3][0], am: &in[4][0], av: &in[5][0], s: &in[6][0], ds: &in[7][0],
				dh: &out[0][0], dm: &out[1][0], dv: &out[2][0], dam: &out[3][0], dav: &out[4][0], n: n, a1: a1, a2: a2, eps: eps,
			}, post)
			if ran != (n > 0) {
				t.Fatalf("n=%d: runAdamBand ran a kernel: %v", n, ran)
			}
			for i := range n {
				g, m, v, ah, am, av, s, ds := in[0][i], in[1][i], in[2][i], in[3][i], in[4][i], in[5][i], in[6][i], in[7][i]
				if post { // s holds r = √softplus(v), ds σ(v): scaleDerivInto's loop
					if r := s; r > 0 {
						ds *= 0.5 / r
					} else {
						ds = 0
					}
					s += eps
				}
				inv := 1 / s
				want := [5]T{-m * inv, a1 * (-g - m), a2 * (g*g - v), ah*inv + a1*am, -ah*m*ds*inv*inv + a2*av}
				for k := range want {
					if got := out[k][i]; !sameOrNaN(got, want[k]) {
						t.Fatalf("post=%v n=%d: output %d element %d = %v, want %v", post, n, k, i, got, want[k])
					}
				}
			}
			for k := range out {
				if out[k][n] != 42 {
					t.Fatalf("post=%v n=%d: wrote past the end of output %d", post, n, k)
				}
			}
		}
	}
}

// TestAdamRHSBwdKernel: the kernels of adamRHS's backward (each the CPU
// runs) read adamBwdArgs
// at the offsets they assume and equal adamRHSBwdLoop (the Post ones after
// scaleDerivInto's last loop), in float32 and float64: the gradients bit
// for bit, the sums for r1 and r2 to within the rounding of their terms, at
// every length 0–150, with special values among the operands, writing
// nothing past n.
func TestAdamRHSBwdKernel(t *testing.T) {
	forEachKernels(t, func(t *testing.T) {
		t.Run("float32", testAdamRHSBwdKernel[float32])
		t.Run("float64", testAdamRHSBwdKernel[float64])
	})
}

func testAdamRHSBwdKernel[T tensor.Float](t *testing.T) {
	var a adamBwdArgs[T]
	w := scalarOffsets[T](72, 3)
	w = append(w, (w[3]+unsafe.Sizeof(T(0))+7)&^7)
	w = append(w, w[4]+8)
	if o := []uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps), unsafe.Offsetof(a.sr1), unsafe.Offsetof(a.sr2)}; !sameOffsets(o, w) || unsafe.Offsetof(a.gg) != 64 {
		t.Fatalf("adamBwdArgs: n, a1, a2, eps, sr1, sr2 at %v, gg at %d; the assembly reads %v and 64", o, unsafe.Offsetof(a.gg), w)
	}
	if !hasAdamKernels[T]() {
		t.Skip("no assembly kernel in this build or on this kernel path")
	}
	// The sums' terms are formed in T; summed in another order their
	// difference is within n·ε(T)·Σ|term|, loosely.
	tol := 0x1p-22
	if unsafe.Sizeof(T(0)) == 8 {
		tol = 0x1p-50
	}
	a1, a2, eps := T(0.3), T(0.9), T(1e-3)
	for _, post := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 6))
		for n := range 151 {
			in := make([][]T, 8) // g, m, v, ch, cm, cv, s, ds
			for k := range in {
				in[k] = make([]T, n+1)
				for i := range in[k] {
					in[k][i] = T(rng.NormFloat64())
					if k >= 6 && rng.IntN(10) == 0 {
						in[k][i] = [...]T{0, -1, 1e-30}[rng.IntN(3)]
					}
				}
			}
			s, ds := append([]T(nil), in[6]...), append([]T(nil), in[7]...)
			gg := make([]T, n+1)
			gg[n] = 42
			s[n], ds[n] = 42, 42
			args := &adamBwdArgs[T]{g: &in[0][0], m: &in[1][0], v: &in[2][0], ch: &in[3][0], cm: &in[4][0], cv: &in[5][0], s: &s[0], ds: &ds[0], gg: &gg[0], n: n, a1: a1, a2: a2, eps: eps}
			if ran := runAdamRHSBwd(args, post); ran != (n > 0) {
				t.Fatalf("n=%d: runAdamRHSBwd ran a kernel: %v", n, ran)
			}
			sr1, sr2 := args.sr1, args.sr2
			ws, wds, wgg := append([]T(nil), in[6][:n]...), append([]T(nil), in[7][:n]...), make([]T, n)
			if post {
				for i, r := range ws {
					if r > 0 {
						wds[i] *= 0.5 / r
					} else {
						wds[i] = 0
					}
					ws[i] = r + eps
				}
			}
			w1, w2 := adamRHSBwdLoop(in[0], in[1], in[2], in[3], in[4], in[5], ws, wds, wgg, a1, a2)
			for i := range n {
				for k, pair := range [][2]T{{gg[i], wgg[i]}, {s[i], ws[i]}, {ds[i], wds[i]}} {
					if bitsOf(pair[0]) != bitsOf(pair[1]) {
						t.Fatalf("post=%v n=%d: output %d element %d = %v, want %v", post, n, k, i, pair[0], pair[1])
					}
				}
			}
			var abs1, abs2 float64
			for i := range n {
				g, m, v, cm, cv := in[0][i], in[1][i], in[2][i], in[4][i], in[5][i]
				abs1 += math.Abs(float64(cm * (-g - m)))
				abs2 += math.Abs(float64(cv * (g*g - v)))
			}
			if d1, d2 := math.Abs(sr1-w1), math.Abs(sr2-w2); d1 > tol*abs1 || d2 > tol*abs2 {
				t.Fatalf("post=%v n=%d: sums %v, %v, want %v, %v", post, n, sr1, sr2, w1, w2)
			}
			if gg[n] != 42 || s[n] != 42 || ds[n] != 42 {
				t.Fatalf("post=%v n=%d: wrote past the end", post, n)
			}
		}
	}
}

// TestAdamRHSFwdKernel: the kernels of adamRHS's forward (each the CPU
// runs) read adamFwdArgs
// at the offsets they assume and equal adamRHS's Go loop (the Eps ones
// after adding ε to s) bit for bit, in float32 and float64, at every length
// 0–70, with special values among the operands, writing nothing past n.
func TestAdamRHSFwdKernel(t *testing.T) {
	forEachKernels(t, func(t *testing.T) {
		t.Run("float32", testAdamRHSFwdKernel[float32])
		t.Run("float64", testAdamRHSFwdKernel[float64])
	})
}

func testAdamRHSFwdKernel[T tensor.Float](t *testing.T) {
	var a adamFwdArgs[T]
	if o, w := []uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps)}, scalarOffsets[T](48, 3); !sameOffsets(o, w) || unsafe.Offsetof(a.dv) != 40 {
		t.Fatalf("adamFwdArgs: n, a1, a2, eps at %v, dv at %d; the assembly reads %v and 40", o, unsafe.Offsetof(a.dv), w)
	}
	if !hasAdamKernels[T]() {
		t.Skip("no assembly kernel in this build or on this kernel path")
	}
	a1, a2, eps := T(0.3), T(0.9), T(1e-3)
	specials := []T{0, T(math.Copysign(0, -1)), T(math.NaN()), T(math.Inf(1)), 1e-30}
	for _, withEps := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 8))
		for n := range 71 {
			in := make([][]T, 4) // g, m, v, s
			for k := range in {
				in[k] = make([]T, n+1)
				for i := range in[k] {
					in[k][i] = T(rng.NormFloat64())
					if rng.IntN(12) == 0 {
						in[k][i] = specials[rng.IntN(len(specials))]
					}
				}
			}
			dh, dm, dv := append([]T(nil), in[3]...), make([]T, n+1), make([]T, n+1)
			dh[n], dm[n], dv[n] = 42, 42, 42
			args := &adamFwdArgs[T]{g: &in[0][0], m: &in[1][0], v: &in[2][0], dh: &dh[0], dm: &dm[0], dv: &dv[0], n: n, a1: a1, a2: a2, eps: eps}
			if ran := runAdamRHSFwd(args, withEps); ran != (n > 0) {
				t.Fatalf("n=%d: runAdamRHSFwd ran a kernel: %v", n, ran)
			}
			for i := range n {
				g, m, v, s := in[0][i], in[1][i], in[2][i], in[3][i]
				if withEps {
					s += eps
				}
				want := [3]T{-m / s, a1 * (-g - m), a2 * (g*g - v)}
				for k, got := range [3]T{dh[i], dm[i], dv[i]} {
					if !sameOrNaN(got, want[k]) {
						t.Fatalf("eps=%v n=%d: output %d element %d = %v, want %v", withEps, n, k, i, got, want[k])
					}
				}
			}
			if dh[n] != 42 || dm[n] != 42 || dv[n] != 42 {
				t.Fatalf("eps=%v n=%d: wrote past the end", withEps, n)
			}
		}
	}
}

// TestUseAdamKernels: the kernels are taken for a positive length on the
// avx512 and avx2 kernel paths, never for an empty state.
func TestUseAdamKernels(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 100} {
		if got, want := useAdamKernels[float32](n), adamKernels != "go" && n > 0; got != want {
			t.Errorf("useAdamKernels[float32](%d) = %v, want %v", n, got, want)
		}
		if got, want := useAdamKernels[float64](n), adamKernels != "go" && n > 0; got != want {
			t.Errorf("useAdamKernels[float64](%d) = %v, want %v", n, got, want)
		}
	}
}

// TestAdamKernelsNamedType: a type defined on float32 has no kernel, and
// the callers fall back to the Go loops.
func TestAdamKernelsNamedType(t *testing.T) {
	type f32 float32
	x := []f32{1, 2}
	if runAdamRHSFwd(&adamFwdArgs[f32]{g: &x[0], m: &x[0], v: &x[0], dh: &x[0], dm: &x[0], dv: &x[0], n: 2}, false) {
		t.Error("runAdamRHSFwd ran a kernel for a defined type")
	}
	if hasAdamKernels[f32]() {
		t.Error("hasAdamKernels reports a kernel for a defined type")
	}
}
