//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// The assembly kernels of vecmath_amd64.s. Each sets z[i] = f(x[i]) for
// i < len(z) and needs len(x) ≥ len(z), which checked makes sure of.

//go:noescape
func expAVX512(z, x []float32)

//go:noescape
func tanhAVX512(z, x []float32)

//go:noescape
func sigmoidAVX512(z, x []float32)

//go:noescape
func softplusAVX512(z, x []float32)

//go:noescape
func logAVX512(z, x []float32)

//go:noescape
func sqrtAVX512(z, x []float32)

//go:noescape
func expAVX2(z, x []float32)

//go:noescape
func tanhAVX2(z, x []float32)

//go:noescape
func sigmoidAVX2(z, x []float32)

//go:noescape
func softplusAVX2(z, x []float32)

//go:noescape
func logAVX2(z, x []float32)

//go:noescape
func sqrtAVX2(z, x []float32)

//go:noescape
func reluAVX512(z, x []float32)

//go:noescape
func leakyAVX512(z, x []float32, slope float32)

//go:noescape
func tanhBwdAVX512(z, g, y []float32)

//go:noescape
func tanhBwdAccAVX512(z, g, y []float32)

//go:noescape
func sigmoidBwdAVX512(z, g, y []float32)

//go:noescape
func sigmoidBwdAccAVX512(z, g, y []float32)

//go:noescape
func softplusBwdAVX512(z, g, y []float32)

//go:noescape
func softplusBwdAccAVX512(z, g, y []float32)

//go:noescape
func reluBwdAVX512(z, g, y []float32)

//go:noescape
func reluBwdAccAVX512(z, g, y []float32)

//go:noescape
func leakyBwdAVX512(z, g, y []float32, slope float32)

//go:noescape
func leakyBwdAccAVX512(z, g, y []float32, slope float32)

//go:noescape
func reluAVX2(z, x []float32)

//go:noescape
func leakyAVX2(z, x []float32, slope float32)

//go:noescape
func tanhBwdAVX2(z, g, y []float32)

//go:noescape
func tanhBwdAccAVX2(z, g, y []float32)

//go:noescape
func sigmoidBwdAVX2(z, g, y []float32)

//go:noescape
func sigmoidBwdAccAVX2(z, g, y []float32)

//go:noescape
func softplusBwdAVX2(z, g, y []float32)

//go:noescape
func softplusBwdAccAVX2(z, g, y []float32)

//go:noescape
func reluBwdAVX2(z, g, y []float32)

//go:noescape
func reluBwdAccAVX2(z, g, y []float32)

//go:noescape
func leakyBwdAVX2(z, g, y []float32, slope float32)

//go:noescape
func leakyBwdAccAVX2(z, g, y []float32, slope float32)

// avx512Path runs 16 lanes in ZMM registers (AVX-512F).
var avx512Path = vecPath{
	name:     "avx512",
	exp:      checked(expAVX512),
	tanh:     checked(tanhAVX512),
	sigmoid:  checked(sigmoidAVX512),
	softplus: checked(softplusAVX512),
	log:      checked(logAVX512),
	sqrt:     checked(sqrtAVX512),

	relu:        checked(reluAVX512),
	leaky:       checkedSlope(leakyAVX512),
	tanhBwd:     checked3(tanhBwdAVX512, tanhBwdAccAVX512),
	sigmoidBwd:  checked3(sigmoidBwdAVX512, sigmoidBwdAccAVX512),
	softplusBwd: checked3(softplusBwdAVX512, softplusBwdAccAVX512),
	reluBwd:     checked3(reluBwdAVX512, reluBwdAccAVX512),
	leakyBwd:    checked3Slope(leakyBwdAVX512, leakyBwdAccAVX512),
}

// avx2Path runs 8 lanes in YMM registers (AVX2 and FMA).
var avx2Path = vecPath{
	name:     "avx2",
	exp:      checked(expAVX2),
	tanh:     checked(tanhAVX2),
	sigmoid:  checked(sigmoidAVX2),
	softplus: checked(softplusAVX2),
	log:      checked(logAVX2),
	sqrt:     checked(sqrtAVX2),

	relu:        checked(reluAVX2),
	leaky:       checkedSlope(leakyAVX2),
	tanhBwd:     checked3(tanhBwdAVX2, tanhBwdAccAVX2),
	sigmoidBwd:  checked3(sigmoidBwdAVX2, sigmoidBwdAccAVX2),
	softplusBwd: checked3(softplusBwdAVX2, softplusBwdAccAVX2),
	reluBwd:     checked3(reluBwdAVX2, reluBwdAccAVX2),
	leakyBwd:    checked3Slope(leakyBwdAVX2, leakyBwdAccAVX2),
}

// vecPaths returns the float32 kernel paths that the kernel path
// (isa.Current: this CPU's fastest, or the one ADAMNODE_CPU forces)
// allows, fastest first: AVX-512, AVX2+FMA, pure Go.
func vecPaths() []vecPath {
	var ps []vecPath
	if isa.Current() >= isa.AVX512 {
		ps = append(ps, avx512Path)
	}
	if isa.Current() >= isa.AVX2 {
		ps = append(ps, avx2Path)
	}
	return append(ps, goPath)
}
