//go:build !amd64 || purego

package odeblock

// adamKernels is "go": the kernels run in Go (a variable, as on amd64,
// for the tests).
var adamKernels = "go"

func noAsm() { panic("odeblock: no assembly in this build") }

func adamBandAVX512(*adamBandArgs[float32])        { noAsm() }
func adamBandPostAVX512(*adamBandArgs[float32])    { noAsm() }
func adamRHSBwdAVX512(*adamBwdArgs[float32])       { noAsm() }
func adamRHSBwdPostAVX512(*adamBwdArgs[float32])   { noAsm() }
func adamRHSFwdAVX512(*adamFwdArgs[float32])       { noAsm() }
func adamRHSFwdEpsAVX512(*adamFwdArgs[float32])    { noAsm() }
func adamBand64AVX512(*adamBandArgs[float64])      { noAsm() }
func adamBandPost64AVX512(*adamBandArgs[float64])  { noAsm() }
func adamRHSBwd64AVX512(*adamBwdArgs[float64])     { noAsm() }
func adamRHSBwdPost64AVX512(*adamBwdArgs[float64]) { noAsm() }
func adamRHSFwd64AVX512(*adamFwdArgs[float64])     { noAsm() }
func adamRHSFwdEps64AVX512(*adamFwdArgs[float64])  { noAsm() }
func norm2AVX512(*float32, int) float64            { noAsm(); return 0 }
func norm2F64AVX512(*float64, int) float64         { noAsm(); return 0 }
func adamBandAVX2(*adamBandArgs[float32])          { noAsm() }
func adamBandPostAVX2(*adamBandArgs[float32])      { noAsm() }
func adamRHSBwdAVX2(*adamBwdArgs[float32])         { noAsm() }
func adamRHSBwdPostAVX2(*adamBwdArgs[float32])     { noAsm() }
func adamRHSFwdAVX2(*adamFwdArgs[float32])         { noAsm() }
func adamRHSFwdEpsAVX2(*adamFwdArgs[float32])      { noAsm() }
func adamBand64AVX2(*adamBandArgs[float64])        { noAsm() }
func adamBandPost64AVX2(*adamBandArgs[float64])    { noAsm() }
func adamRHSBwd64AVX2(*adamBwdArgs[float64])       { noAsm() }
func adamRHSBwdPost64AVX2(*adamBwdArgs[float64])   { noAsm() }
func adamRHSFwd64AVX2(*adamFwdArgs[float64])       { noAsm() }
func adamRHSFwdEps64AVX2(*adamFwdArgs[float64])    { noAsm() }
func norm2AVX2(*float32, int) float64              { noAsm(); return 0 }
func norm2F64AVX2(*float64, int) float64           { noAsm(); return 0 }

// asmBuilt is false: this build has no assembly kernels.
const asmBuilt = false
