//go:build !purego

package tensor

import "golang.org/x/sys/cpu"

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

// checked returns k with the bounds check that the assembly leaves out.
func checked(k func(z, x []float32)) func(z, x []float32) {
	return func(z, x []float32) {
		_ = x[:len(z)]
		k(z, x)
	}
}

// avx512Path runs 16 lanes in ZMM registers (AVX-512F).
var avx512Path = vecPath{
	name:     "avx512",
	exp:      checked(expAVX512),
	tanh:     checked(tanhAVX512),
	sigmoid:  checked(sigmoidAVX512),
	softplus: checked(softplusAVX512),
	log:      checked(logAVX512),
	sqrt:     checked(sqrtAVX512),
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
}

// vecPaths returns the float32 kernel paths this CPU can run, fastest
// first: AVX-512, AVX2+FMA, pure Go. (GODEBUG=cpu.avx512f=off or
// cpu.avx2=off, read by golang.org/x/sys/cpu, takes a path away.)
func vecPaths() []vecPath {
	var ps []vecPath
	if cpu.X86.HasAVX512F {
		ps = append(ps, avx512Path)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ps = append(ps, avx2Path)
	}
	return append(ps, goPath)
}
