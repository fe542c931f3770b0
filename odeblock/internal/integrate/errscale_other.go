//go:build !amd64 || purego

package integrate

// errScaleAVX is false: the scaling loop runs in Go.
const errScaleAVX = false

func errScaleAVX512(e, y0, y1 *float32, n int, atol, rtol float32) {
	panic("odeblock: no assembly in this build")
}

func allFiniteAVX512(x *float32, n int) bool { panic("odeblock: no assembly in this build") }

func errScale64AVX512(e, y0, y1 *float64, n int, atol, rtol float64) {
	panic("odeblock: no assembly in this build")
}

func allFinite64AVX512(x *float64, n int) bool { panic("odeblock: no assembly in this build") }
