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

// The run functions call the kernels directly, not through func values,
// so that their //go:noescape arguments stay on the caller's stack.

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
			if adamKernels == "avx512" {
				adamBandPostAVX512(a)
			} else {
				adamBandPostAVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamBandAVX512(a)
			} else {
				adamBandAVX2(a)
			}
		}
	case *adamBandArgs[float64]:
		if post {
			if adamKernels == "avx512" {
				adamBandPost64AVX512(a)
			} else {
				adamBandPost64AVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamBand64AVX512(a)
			} else {
				adamBand64AVX2(a)
			}
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
			if adamKernels == "avx512" {
				adamRHSBwdPostAVX512(a)
			} else {
				adamRHSBwdPostAVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamRHSBwdAVX512(a)
			} else {
				adamRHSBwdAVX2(a)
			}
		}
	case *adamBwdArgs[float64]:
		if post {
			if adamKernels == "avx512" {
				adamRHSBwdPost64AVX512(a)
			} else {
				adamRHSBwdPost64AVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamRHSBwd64AVX512(a)
			} else {
				adamRHSBwd64AVX2(a)
			}
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
			if adamKernels == "avx512" {
				adamRHSFwdEpsAVX512(a)
			} else {
				adamRHSFwdEpsAVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamRHSFwdAVX512(a)
			} else {
				adamRHSFwdAVX2(a)
			}
		}
	case *adamFwdArgs[float64]:
		if eps {
			if adamKernels == "avx512" {
				adamRHSFwdEps64AVX512(a)
			} else {
				adamRHSFwdEps64AVX2(a)
			}
		} else {
			if adamKernels == "avx512" {
				adamRHSFwd64AVX512(a)
			} else {
				adamRHSFwd64AVX2(a)
			}
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
