//go:build !purego

package odeblock

import "golang.org/x/sys/cpu"

// avx512 reports whether the AVX-512 kernels of this package can run.
var avx512 = cpu.X86.HasAVX512F

// adamBandAVX512 is adamWork.band's loop on float32 (after s and s′), with
// its operands in a.
//
//go:noescape
func adamBandAVX512(a *adamBandArgs)

// adamBandPostAVX512 is adamBandAVX512 with scaleDerivInto's last loop
// first: s holds √softplus(v) and ds holds σ(v) on entry (they are not
// written).
//
//go:noescape
func adamBandPostAVX512(a *adamBandArgs)

// adamRHSBwdAVX512 is adamRHS's backward loop on float32 (after s and s′),
// with its operands and the sums in a.
//
//go:noescape
func adamRHSBwdAVX512(a *adamBwdArgs)

// adamRHSBwdPostAVX512 is adamRHSBwdAVX512 with scaleDerivInto's last loop
// first, as adamBandPostAVX512.
//
//go:noescape
func adamRHSBwdPostAVX512(a *adamBwdArgs)

// adamRHSFwdAVX512 is adamRHS's forward loop on float32, s read from dh.
//
//go:noescape
func adamRHSFwdAVX512(a *adamFwdArgs)

// adamRHSFwdEpsAVX512 is adamRHSFwdAVX512 with eps added to s first.
//
//go:noescape
func adamRHSFwdEpsAVX512(a *adamFwdArgs)

// norm2AVX512 returns Σ x[i]² for i < n, in float64.
//
//go:noescape
func norm2AVX512(x *float32, n int) float64
