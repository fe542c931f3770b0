//go:build !purego

package odeblock

import "github.com/adamnode/adamnode/tensor"

// adamKernels names the kernels of this package that run: "avx512"
// (adamband_amd64.s, adamband64_amd64.s) on the avx512 kernel path
// (tensor.KernelPath), "avx2" (adamband_avx2_amd64.s,
// adamband64_avx2_amd64.s: the same operations, rounded alike) on avx2,
// "go" (the Go loops) on generic. Tests set it to run each kernel the CPU
// has.
var adamKernels = func() string {
	switch p := tensor.KernelPath(); p {
	case "avx512", "avx2":
		return p
	}
	return "go"
}()

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

// The AVX2 versions (adamband_avx2_amd64.h): the AdamNODE kernels equal to
// the AVX-512 ones bit for bit (the backward's sums aside: four float64
// lanes each, in their own order), norm2AVX2 and norm2F64AVX2 to the bit.

//go:noescape
func adamBandAVX2(a *adamBandArgs[float32])

//go:noescape
func adamBandPostAVX2(a *adamBandArgs[float32])

//go:noescape
func adamRHSBwdAVX2(a *adamBwdArgs[float32])

//go:noescape
func adamRHSBwdPostAVX2(a *adamBwdArgs[float32])

//go:noescape
func adamRHSFwdAVX2(a *adamFwdArgs[float32])

//go:noescape
func adamRHSFwdEpsAVX2(a *adamFwdArgs[float32])

//go:noescape
func adamBand64AVX2(a *adamBandArgs[float64])

//go:noescape
func adamBandPost64AVX2(a *adamBandArgs[float64])

//go:noescape
func adamRHSBwd64AVX2(a *adamBwdArgs[float64])

//go:noescape
func adamRHSBwdPost64AVX2(a *adamBwdArgs[float64])

//go:noescape
func adamRHSFwd64AVX2(a *adamFwdArgs[float64])

//go:noescape
func adamRHSFwdEps64AVX2(a *adamFwdArgs[float64])

//go:noescape
func norm2AVX2(x *float32, n int) float64

//go:noescape
func norm2F64AVX2(x *float64, n int) float64

// asmBuilt is true: this build has the assembly kernels.
const asmBuilt = true
