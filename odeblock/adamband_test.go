package odeblock

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestAdamBandKernel: adamBandAVX512 and adamBandPostAVX512 read
// adamBandArgs at the offsets they assume and equal band's Go loops bit for
// bit (the second after scaleDerivInto's last loop) at every length 0–70
// (whole vectors and masked tails), with signed zeros, NaN and ±Inf among
// the operands, writing nothing past n.
func TestAdamBandKernel(t *testing.T) {
	var a adamBandArgs
	if o := [4]uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps)}; o != [4]uintptr{104, 112, 116, 120} || unsafe.Offsetof(a.dav) != 96 {
		t.Fatalf("adamBandArgs: n, a1, a2, eps at %v, dav at %d; the assembly reads 104, 112, 116, 120 and 96", o, unsafe.Offsetof(a.dav))
	}
	if !avx512 {
		t.Skip("no AVX-512 kernel in this build or on this CPU")
	}
	for _, post := range []bool{false, true} {
		testAdamBandKernel(t, post)
	}
}

func testAdamBandKernel(t *testing.T, post bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	const eps = float32(1e-3)
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-30}
	const a1, a2 = float32(0.3), float32(0.9)
	for n := range 71 {
		in := make([][]float32, 8) // g, m, v, ah, am, av, s, ds
		for k := range in {
			in[k] = make([]float32, n+1)
			for i := range in[k] {
				in[k][i] = float32(rng.NormFloat64())
				if rng.IntN(12) == 0 {
					in[k][i] = specials[rng.IntN(len(specials))]
				}
			}
		}
		out := make([][]float32, 5) // dh, dm, dv, dam, dav
		for k := range out {
			out[k] = make([]float32, n+1)
			out[k][n] = 42
		}
		if n > 0 {
			args := &adamBandArgs{
				g: &in[0][0], m: &in[1][0], v: &in[2][0], ah: &in[3][0], am: &in[4][0], av: &in[5][0], s: &in[6][0], ds: &in[7][0],
				dh: &out[0][0], dm: &out[1][0], dv: &out[2][0], dam: &out[3][0], dav: &out[4][0], n: n, a1: a1, a2: a2, eps: eps,
			}
			if post {
				adamBandPostAVX512(args)
			} else {
				adamBandAVX512(args)
			}
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
			want := [5]float32{-m * inv, a1 * (-g - m), a2 * (g*g - v), ah*inv + a1*am, -ah*m*ds*inv*inv + a2*av}
			for k := range want {
				if got := out[k][i]; math.Float32bits(got) != math.Float32bits(want[k]) && !(got != got && want[k] != want[k]) {
					t.Fatalf("post=%v n=%d: output %d element %d = %v, want %v", post, n, k, i, got, want[k])
				}
			}
		}
		for k := range out {
			if out[k][n] != 42 {
				t.Fatalf("n=%d: wrote past the end of output %d", n, k)
			}
		}
	}
}

// TestAdamRHSBwdKernel: adamRHSBwdAVX512 and adamRHSBwdPostAVX512 read
// adamBwdArgs at the offsets they assume and equal adamRHSBwdLoop (the
// second after scaleDerivInto's last loop): the gradients bit for bit, the
// sums for r1 and r2 to within float32's rounding of their terms, at every
// length 0–150, with special values among the operands, writing nothing
// past n.
func TestAdamRHSBwdKernel(t *testing.T) {
	var a adamBwdArgs
	if o := [6]uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps), unsafe.Offsetof(a.sr1), unsafe.Offsetof(a.sr2)}; o != [6]uintptr{72, 80, 84, 88, 96, 104} || unsafe.Offsetof(a.gg) != 64 {
		t.Fatalf("adamBwdArgs: n, a1, a2, eps, sr1, sr2 at %v, gg at %d; the assembly reads 72, 80, 84, 88, 96, 104 and 64", o, unsafe.Offsetof(a.gg))
	}
	if !avx512 {
		t.Skip("no AVX-512 kernel in this build or on this CPU")
	}
	const a1, a2, eps = float32(0.3), float32(0.9), float32(1e-3)
	for _, post := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 6))
		for n := range 151 {
			in := make([][]float32, 8) // g, m, v, ch, cm, cv, s, ds
			for k := range in {
				in[k] = make([]float32, n+1)
				for i := range in[k] {
					in[k][i] = float32(rng.NormFloat64())
					if k >= 6 && rng.IntN(10) == 0 {
						in[k][i] = [...]float32{0, -1, 1e-30}[rng.IntN(3)]
					}
				}
			}
			s, ds := append([]float32(nil), in[6]...), append([]float32(nil), in[7]...)
			gg := make([]float32, n+1)
			gg[n] = 42
			s[n], ds[n] = 42, 42
			var sr1, sr2 float64
			if n > 0 {
				args := &adamBwdArgs{g: &in[0][0], m: &in[1][0], v: &in[2][0], ch: &in[3][0], cm: &in[4][0], cv: &in[5][0], s: &s[0], ds: &ds[0], gg: &gg[0], n: n, a1: a1, a2: a2, eps: eps}
				if post {
					adamRHSBwdPostAVX512(args)
				} else {
					adamRHSBwdAVX512(args)
				}
				sr1, sr2 = args.sr1, args.sr2
			}
			ws, wds, wgg := append([]float32(nil), in[6][:n]...), append([]float32(nil), in[7][:n]...), make([]float32, n)
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
				for k, pair := range [][2]float32{{gg[i], wgg[i]}, {s[i], ws[i]}, {ds[i], wds[i]}} {
					if math.Float32bits(pair[0]) != math.Float32bits(pair[1]) {
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
			if d1, d2 := math.Abs(sr1-w1), math.Abs(sr2-w2); d1 > 0x1p-22*abs1 || d2 > 0x1p-22*abs2 {
				t.Fatalf("post=%v n=%d: sums %v, %v, want %v, %v", post, n, sr1, sr2, w1, w2)
			}
			if gg[n] != 42 || s[n] != 42 || ds[n] != 42 {
				t.Fatalf("post=%v n=%d: wrote past the end", post, n)
			}
		}
	}
}

// TestAdamRHSFwdKernel: adamRHSFwdAVX512 and adamRHSFwdEpsAVX512 read
// adamFwdArgs at the offsets they assume and equal adamRHS's Go loop (the
// second after adding ε to s) bit for bit at every length 0–70, with
// special values among the operands, writing nothing past n.
func TestAdamRHSFwdKernel(t *testing.T) {
	var a adamFwdArgs
	if o := [4]uintptr{unsafe.Offsetof(a.n), unsafe.Offsetof(a.a1), unsafe.Offsetof(a.a2), unsafe.Offsetof(a.eps)}; o != [4]uintptr{48, 56, 60, 64} || unsafe.Offsetof(a.dv) != 40 {
		t.Fatalf("adamFwdArgs: n, a1, a2, eps at %v, dv at %d; the assembly reads 48, 56, 60, 64 and 40", o, unsafe.Offsetof(a.dv))
	}
	if !avx512 {
		t.Skip("no AVX-512 kernel in this build or on this CPU")
	}
	const a1, a2, eps = float32(0.3), float32(0.9), float32(1e-3)
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), 1e-30}
	for _, withEps := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 8))
		for n := range 71 {
			in := make([][]float32, 4) // g, m, v, s
			for k := range in {
				in[k] = make([]float32, n+1)
				for i := range in[k] {
					in[k][i] = float32(rng.NormFloat64())
					if rng.IntN(12) == 0 {
						in[k][i] = specials[rng.IntN(len(specials))]
					}
				}
			}
			dh, dm, dv := append([]float32(nil), in[3]...), make([]float32, n+1), make([]float32, n+1)
			dh[n], dm[n], dv[n] = 42, 42, 42
			if n > 0 {
				args := &adamFwdArgs{g: &in[0][0], m: &in[1][0], v: &in[2][0], dh: &dh[0], dm: &dm[0], dv: &dv[0], n: n, a1: a1, a2: a2, eps: eps}
				if withEps {
					adamRHSFwdEpsAVX512(args)
				} else {
					adamRHSFwdAVX512(args)
				}
			}
			for i := range n {
				g, m, v, s := in[0][i], in[1][i], in[2][i], in[3][i]
				if withEps {
					s += eps
				}
				want := [3]float32{-m / s, a1 * (-g - m), a2 * (g*g - v)}
				for k, got := range [3]float32{dh[i], dm[i], dv[i]} {
					if math.Float32bits(got) != math.Float32bits(want[k]) && !(got != got && want[k] != want[k]) {
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
