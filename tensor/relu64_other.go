//go:build !amd64 || purego

package tensor

func relu64AVX512(z, x []float64) { panic("tensor: no assembly in this build") }

func leaky64AVX512(z, x []float64, slope float64) { panic("tensor: no assembly in this build") }
