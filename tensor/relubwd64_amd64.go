//go:build !purego

package tensor

// reluBwd64Asm is ReLUBackward on float64 in assembly (relubwd64_amd64.s,
// the kernels of axpyKernels' path): z = g where y > 0, else +0, or added
// to z with acc. len(g) and len(y) ≥ len(z).
func reluBwd64Asm(z, g, y []float64, acc bool) {
	switch {
	case axpy512 && acc:
		reluBwdAcc64AVX512(z, g, y)
	case axpy512:
		reluBwd64AVX512(z, g, y)
	case acc:
		reluBwdAcc64AVX2(z, g, y)
	default:
		reluBwd64AVX2(z, g, y)
	}
}

// leakyBwd64Asm is LeakyReLUBackward on float64 in assembly: z = g where
// y > 0, else slope·g, or added to z with acc.
func leakyBwd64Asm(z, g, y []float64, slope float64, acc bool) {
	switch {
	case axpy512 && acc:
		leakyBwdAcc64AVX512(z, g, y, slope)
	case axpy512:
		leakyBwd64AVX512(z, g, y, slope)
	case acc:
		leakyBwdAcc64AVX2(z, g, y, slope)
	default:
		leakyBwd64AVX2(z, g, y, slope)
	}
}

//go:noescape
func reluBwd64AVX512(z, g, y []float64)

//go:noescape
func reluBwdAcc64AVX512(z, g, y []float64)

//go:noescape
func leakyBwd64AVX512(z, g, y []float64, slope float64)

//go:noescape
func leakyBwdAcc64AVX512(z, g, y []float64, slope float64)

//go:noescape
func reluBwd64AVX2(z, g, y []float64)

//go:noescape
func reluBwdAcc64AVX2(z, g, y []float64)

//go:noescape
func leakyBwd64AVX2(z, g, y []float64, slope float64)

//go:noescape
func leakyBwdAcc64AVX2(z, g, y []float64, slope float64)
