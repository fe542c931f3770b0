//go:build !amd64 || purego

package odeblock

// avx512 is false: the kernels run in Go.
const avx512 = false

func adamBandAVX512(a *adamBandArgs) { panic("odeblock: no assembly in this build") }

func adamBandPostAVX512(a *adamBandArgs) { panic("odeblock: no assembly in this build") }

func adamRHSBwdAVX512(a *adamBwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSBwdPostAVX512(a *adamBwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSFwdAVX512(a *adamFwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSFwdEpsAVX512(a *adamFwdArgs) { panic("odeblock: no assembly in this build") }

func norm2AVX512(x *float32, n int) float64 { panic("odeblock: no assembly in this build") }
