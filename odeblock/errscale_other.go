//go:build !amd64 || purego

package odeblock

// errScaleAVX is false: the scaling loop runs in Go.
const errScaleAVX = false

func errScaleAVX512(e, y0, y1 *float32, n int, atol, rtol float32) {
	panic("odeblock: no assembly in this build")
}

func adamBandAVX512(a *adamBandArgs) { panic("odeblock: no assembly in this build") }

func adamBandPostAVX512(a *adamBandArgs) { panic("odeblock: no assembly in this build") }

func adamRHSBwdAVX512(a *adamBwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSBwdPostAVX512(a *adamBwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSFwdAVX512(a *adamFwdArgs) { panic("odeblock: no assembly in this build") }

func adamRHSFwdEpsAVX512(a *adamFwdArgs) { panic("odeblock: no assembly in this build") }

func allFiniteAVX512(x *float32, n int) bool { panic("odeblock: no assembly in this build") }

func norm2AVX512(x *float32, n int) float64 { panic("odeblock: no assembly in this build") }
