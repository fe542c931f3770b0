//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// The NEON kernels of vecmath_arm64.s. Each sets z[i] = f(x[i]) (or
// g[i]·f′(y[i])) for i < len(z) and needs the sources at least as long as
// z, which the wrappers of vecmath_check.go make sure of.

//go:noescape
func expNEON(z, x []float32)

//go:noescape
func tanhNEON(z, x []float32)

//go:noescape
func sigmoidNEON(z, x []float32)

//go:noescape
func softplusNEON(z, x []float32)

//go:noescape
func logNEON(z, x []float32)

//go:noescape
func sqrtNEON(z, x []float32)

//go:noescape
func reluNEON(z, x []float32)

//go:noescape
func leakyNEON(z, x []float32, slope float32)

//go:noescape
func tanhBwdNEON(z, g, y []float32)

//go:noescape
func tanhBwdAccNEON(z, g, y []float32)

//go:noescape
func sigmoidBwdNEON(z, g, y []float32)

//go:noescape
func sigmoidBwdAccNEON(z, g, y []float32)

//go:noescape
func softplusBwdNEON(z, g, y []float32)

//go:noescape
func softplusBwdAccNEON(z, g, y []float32)

//go:noescape
func reluBwdNEON(z, g, y []float32)

//go:noescape
func reluBwdAccNEON(z, g, y []float32)

//go:noescape
func leakyBwdNEON(z, g, y []float32, slope float32)

//go:noescape
func leakyBwdAccNEON(z, g, y []float32, slope float32)

// neonPath runs 4 lanes in the 128-bit V registers (Advanced SIMD).
var neonPath = vecPath{
	name:     "neon",
	exp:      checked(expNEON),
	tanh:     checked(tanhNEON),
	sigmoid:  checked(sigmoidNEON),
	softplus: checked(softplusNEON),
	log:      checked(logNEON),
	sqrt:     checked(sqrtNEON),

	relu:        checked(reluNEON),
	leaky:       checkedSlope(leakyNEON),
	tanhBwd:     checked3(tanhBwdNEON, tanhBwdAccNEON),
	sigmoidBwd:  checked3(sigmoidBwdNEON, sigmoidBwdAccNEON),
	softplusBwd: checked3(softplusBwdNEON, softplusBwdAccNEON),
	reluBwd:     checked3(reluBwdNEON, reluBwdAccNEON),
	leakyBwd:    checked3Slope(leakyBwdNEON, leakyBwdAccNEON),
}

// vecPaths returns the float32 kernel paths that the kernel path
// (isa.Current: NEON, or generic where ADAMNODE_CPU forces it) allows,
// fastest first: NEON, pure Go.
func vecPaths() []vecPath {
	if isa.Current() == isa.NEON {
		return []vecPath{neonPath, goPath}
	}
	return []vecPath{goPath}
}
