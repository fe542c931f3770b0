//go:build !purego

package odeblock

import "github.com/adamnode/adamnode/tensor"

// avx512 reports whether the AVX-512 kernels of this package run: on the
// avx512 kernel path (tensor.KernelPath; on avx2 and generic the Go loops
// run).
var avx512 = tensor.KernelPath() == "avx512"

// The AdamNODE kernels (adamband_amd64.h), each for float32 and float64:
//
//   - adamBand*: adamWork.band's loop (after s and s′); the Post ones with
//     scaleDerivInto's last loop first: s holds √softplus(v) and ds holds
//     σ(v) on entry (they are not written);
//   - adamRHSBwd*: adamRHS's backward loop (after s and s′), with the sums;
//     the Post ones as adamBandPost*;
//   - adamRHSFwd*: adamRHS's forward loop, s read from dh; the Eps ones add
//     eps to s first.

//go:noescape
func adamBandAVX512(a *adamBandArgs[float32])

//go:noescape
func adamBandPostAVX512(a *adamBandArgs[float32])

//go:noescape
func adamRHSBwdAVX512(a *adamBwdArgs[float32])

//go:noescape
func adamRHSBwdPostAVX512(a *adamBwdArgs[float32])

//go:noescape
func adamRHSFwdAVX512(a *adamFwdArgs[float32])

//go:noescape
func adamRHSFwdEpsAVX512(a *adamFwdArgs[float32])

//go:noescape
func adamBand64AVX512(a *adamBandArgs[float64])

//go:noescape
func adamBandPost64AVX512(a *adamBandArgs[float64])

//go:noescape
func adamRHSBwd64AVX512(a *adamBwdArgs[float64])

//go:noescape
func adamRHSBwdPost64AVX512(a *adamBwdArgs[float64])

//go:noescape
func adamRHSFwd64AVX512(a *adamFwdArgs[float64])

//go:noescape
func adamRHSFwdEps64AVX512(a *adamFwdArgs[float64])

// norm2AVX512 returns Σ x[i]² for i < n, in float64.
//
//go:noescape
func norm2AVX512(x *float32, n int) float64

// norm2F64AVX512 returns Σ x[i]² for i < n.
//
//go:noescape
func norm2F64AVX512(x *float64, n int) float64
