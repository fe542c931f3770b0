//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// The float64 NEON kernels of vecmath64_arm64.s. Each sets z[i] = f(x[i])
// (or g[i]·f′(y[i])) for i < len(z) and needs the sources at least as long
// as z, which checked64 and checked3_64 make sure of.

//go:noescape
func exp64NEON(z, x []float64)

//go:noescape
func tanh64NEON(z, x []float64)

//go:noescape
func sigmoid64NEON(z, x []float64)

//go:noescape
func softplus64NEON(z, x []float64)

//go:noescape
func log64NEON(z, x []float64)

//go:noescape
func sqrt64NEON(z, x []float64)

//go:noescape
func tanhBwd64NEON(z, g, y []float64)

//go:noescape
func tanhBwdAcc64NEON(z, g, y []float64)

//go:noescape
func sigmoidBwd64NEON(z, g, y []float64)

//go:noescape
func sigmoidBwdAcc64NEON(z, g, y []float64)

//go:noescape
func softplusBwd64NEON(z, g, y []float64)

//go:noescape
func softplusBwdAcc64NEON(z, g, y []float64)

// neonPath64 runs 2 lanes in the 128-bit V registers (Advanced SIMD).
var neonPath64 = vecPath64{
	name:        "neon",
	exp:         checked64(exp64NEON),
	tanh:        checked64(tanh64NEON),
	sigmoid:     checked64(sigmoid64NEON),
	softplus:    checked64(softplus64NEON),
	log:         checked64(log64NEON),
	sqrt:        checked64(sqrt64NEON),
	tanhBwd:     checked3_64(tanhBwd64NEON, tanhBwdAcc64NEON),
	sigmoidBwd:  checked3_64(sigmoidBwd64NEON, sigmoidBwdAcc64NEON),
	softplusBwd: checked3_64(softplusBwd64NEON, softplusBwdAcc64NEON),
}

// vecPaths64 returns the float64 kernel paths that the kernel path allows,
// fastest first: NEON, pure Go (as vecPaths).
func vecPaths64() []vecPath64 {
	if isa.Current() == isa.NEON {
		return []vecPath64{neonPath64, goPath64}
	}
	return []vecPath64{goPath64}
}
