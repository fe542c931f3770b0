//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// The float64 assembly kernels of vecmath64_amd64.s. Each sets z[i] =
// f(x[i]) (or g[i]·f′(y[i])) for i < len(z) and needs the sources at
// least as long as z, which checked64 and checked3_64 make sure of.

//go:noescape
func exp64AVX512(z, x []float64)

//go:noescape
func tanh64AVX512(z, x []float64)

//go:noescape
func sigmoid64AVX512(z, x []float64)

//go:noescape
func softplus64AVX512(z, x []float64)

//go:noescape
func log64AVX512(z, x []float64)

//go:noescape
func sqrt64AVX512(z, x []float64)

//go:noescape
func tanhBwd64AVX512(z, g, y []float64)

//go:noescape
func tanhBwdAcc64AVX512(z, g, y []float64)

//go:noescape
func sigmoidBwd64AVX512(z, g, y []float64)

//go:noescape
func sigmoidBwdAcc64AVX512(z, g, y []float64)

//go:noescape
func softplusBwd64AVX512(z, g, y []float64)

//go:noescape
func softplusBwdAcc64AVX512(z, g, y []float64)

//go:noescape
func exp64AVX2(z, x []float64)

//go:noescape
func tanh64AVX2(z, x []float64)

//go:noescape
func sigmoid64AVX2(z, x []float64)

//go:noescape
func softplus64AVX2(z, x []float64)

//go:noescape
func log64AVX2(z, x []float64)

//go:noescape
func sqrt64AVX2(z, x []float64)

//go:noescape
func tanhBwd64AVX2(z, g, y []float64)

//go:noescape
func tanhBwdAcc64AVX2(z, g, y []float64)

//go:noescape
func sigmoidBwd64AVX2(z, g, y []float64)

//go:noescape
func sigmoidBwdAcc64AVX2(z, g, y []float64)

//go:noescape
func softplusBwd64AVX2(z, g, y []float64)

//go:noescape
func softplusBwdAcc64AVX2(z, g, y []float64)

// avx512Path64 runs 8 lanes in ZMM registers (AVX-512F).
var avx512Path64 = vecPath64{
	name:        "avx512",
	exp:         checked64(exp64AVX512),
	tanh:        checked64(tanh64AVX512),
	sigmoid:     checked64(sigmoid64AVX512),
	softplus:    checked64(softplus64AVX512),
	log:         checked64(log64AVX512),
	sqrt:        checked64(sqrt64AVX512),
	tanhBwd:     checked3_64(tanhBwd64AVX512, tanhBwdAcc64AVX512),
	sigmoidBwd:  checked3_64(sigmoidBwd64AVX512, sigmoidBwdAcc64AVX512),
	softplusBwd: checked3_64(softplusBwd64AVX512, softplusBwdAcc64AVX512),
}

// avx2Path64 runs 4 lanes in YMM registers (AVX2 and FMA).
var avx2Path64 = vecPath64{
	name:        "avx2",
	exp:         checked64(exp64AVX2),
	tanh:        checked64(tanh64AVX2),
	sigmoid:     checked64(sigmoid64AVX2),
	softplus:    checked64(softplus64AVX2),
	log:         checked64(log64AVX2),
	sqrt:        checked64(sqrt64AVX2),
	tanhBwd:     checked3_64(tanhBwd64AVX2, tanhBwdAcc64AVX2),
	sigmoidBwd:  checked3_64(sigmoidBwd64AVX2, sigmoidBwdAcc64AVX2),
	softplusBwd: checked3_64(softplusBwd64AVX2, softplusBwdAcc64AVX2),
}

// vecPaths64 returns the float64 kernel paths that the kernel path
// allows, fastest first: AVX-512, AVX2+FMA, pure Go (as vecPaths).
func vecPaths64() []vecPath64 {
	var ps []vecPath64
	if isa.Current() >= isa.AVX512 {
		ps = append(ps, avx512Path64)
	}
	if isa.Current() >= isa.AVX2 {
		ps = append(ps, avx2Path64)
	}
	return append(ps, goPath64)
}
