//go:build !amd64 || purego

package odeblock

// avx512 is false: the kernels run in Go.
const avx512 = false

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
