package odeblock

import "github.com/adamnode/adamnode/tensor"

// The operands of AdamNODE's elementwise kernels (adamband_amd64.h), laid
// out as the assembly reads them: the pointers first, at the same offsets
// for float32 and float64, then n and the scalars in the element type (the
// offsets are checked by the kernels' tests).

// adamBandArgs are the adjoint update's operands: the 13 arrays of band's
// loop (n elements each), the two rates and ε (the Post kernels').
type adamBandArgs[T tensor.Float] struct {
	g, m, v, ah, am, av, s, ds *T
	dh, dm, dv, dam, dav       *T
	n                          int
	a1, a2, eps                T
}

// adamBwdArgs are the operands of adamRHS's backward: the 9 arrays of
// adamRHSBwdLoop (n elements each), the rates, ε, and the two sums it
// returns.
type adamBwdArgs[T tensor.Float] struct {
	g, m, v, ch, cm, cv, s, ds, gg *T
	n                              int
	a1, a2, eps                    T
	sr1, sr2                       float64
}

// adamFwdArgs are the operands of adamRHS's forward: g, m, v, then dh
// (holding s on entry), dm and dv, n elements each, the rates and ε.
type adamFwdArgs[T tensor.Float] struct {
	g, m, v, dh, dm, dv *T
	n                   int
	a1, a2, eps         T
}

// runAdamBand runs the adjoint update's kernel for T on a (the Post one
// when post is set) and reports whether there was one: none for n = 0,
// on the generic kernel path, or for a type defined on float32 or float64.
func runAdamBand[T tensor.Float](a *adamBandArgs[T], post bool) bool {
	if adamKernels == "go" || a.n <= 0 {
		return false
	}
	switch a := any(a).(type) {
	case *adamBandArgs[float32]:
		if post {
			pick(adamBandPostAVX512, adamBandPostAVX2)(a)
		} else {
			pick(adamBandAVX512, adamBandAVX2)(a)
		}
	case *adamBandArgs[float64]:
		if post {
			pick(adamBandPost64AVX512, adamBandPost64AVX2)(a)
		} else {
			pick(adamBand64AVX512, adamBand64AVX2)(a)
		}
	default:
		return false
	}
	return true
}

// runAdamRHSBwd runs the kernel of adamRHS's backward for T on a (the Post
// one when post is set) and reports whether there was one.
func runAdamRHSBwd[T tensor.Float](a *adamBwdArgs[T], post bool) bool {
	if adamKernels == "go" || a.n <= 0 {
		return false
	}
	switch a := any(a).(type) {
	case *adamBwdArgs[float32]:
		if post {
			pick(adamRHSBwdPostAVX512, adamRHSBwdPostAVX2)(a)
		} else {
			pick(adamRHSBwdAVX512, adamRHSBwdAVX2)(a)
		}
	case *adamBwdArgs[float64]:
		if post {
			pick(adamRHSBwdPost64AVX512, adamRHSBwdPost64AVX2)(a)
		} else {
			pick(adamRHSBwd64AVX512, adamRHSBwd64AVX2)(a)
		}
	default:
		return false
	}
	return true
}

// runAdamRHSFwd runs the kernel of adamRHS's forward for T on a (the Eps
// one, adding ε to s first, when eps is set) and reports whether there was
// one.
func runAdamRHSFwd[T tensor.Float](a *adamFwdArgs[T], eps bool) bool {
	if adamKernels == "go" || a.n <= 0 {
		return false
	}
	switch a := any(a).(type) {
	case *adamFwdArgs[float32]:
		if eps {
			pick(adamRHSFwdEpsAVX512, adamRHSFwdEpsAVX2)(a)
		} else {
			pick(adamRHSFwdAVX512, adamRHSFwdAVX2)(a)
		}
	case *adamFwdArgs[float64]:
		if eps {
			pick(adamRHSFwdEps64AVX512, adamRHSFwdEps64AVX2)(a)
		} else {
			pick(adamRHSFwd64AVX512, adamRHSFwd64AVX2)(a)
		}
	default:
		return false
	}
	return true
}

// useAdamKernels reports whether adamRHS and adamWork.band take their
// kernels for n elements of T: there is one for T, and n is positive.
func useAdamKernels[T tensor.Float](n int) bool { return hasAdamKernels[T]() && n > 0 }

// hasAdamKernels reports whether runAdamBand, runAdamRHSBwd and
// runAdamRHSFwd have a kernel for T (n > 0 aside).
func hasAdamKernels[T tensor.Float]() bool {
	if adamKernels == "go" {
		return false
	}
	switch any(T(0)).(type) {
	case float32, float64:
		return true
	}
	return false
}

// pick returns k512 on the avx512 kernel path, k2 on avx2 (adamKernels).
func pick[F any](k512, k2 F) F {
	if adamKernels == "avx512" {
		return k512
	}
	return k2
}
