package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkVecKernel measures each float32 kernel of each path on 32768
// elements (the [512, 64] tensor of BenchmarkMap), reporting ns per element.
func BenchmarkVecKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, p := range vecPaths() {
		for _, f := range vecFuncs {
			lo, hi := -10.0, 10.0
			switch f.name {
			case "tanh":
				lo, hi = -5, 5
			case "log":
				lo, hi = 1e-3, 100
			case "sqrt":
				lo, hi = 0, 100
			}
			x := make([]float32, 512*64)
			for i := range x {
				x[i] = float32(lo + (hi-lo)*rng.Float64())
			}
			z := make([]float32, len(x))
			k := f.kernel(p)
			b.Run(p.name+"/"+f.name, func(b *testing.B) {
				for b.Loop() {
					k(z, x)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/elem")
			})
		}
	}
}

// BenchmarkVecBwdKernel measures the ReLU kernels and each backward map of
// each path, set and accumulated, on 32768 elements, reporting ns per
// element.
func BenchmarkVecBwdKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n = 512 * 64
	x, g, z := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
		g[i] = float32(rng.NormFloat64())
	}
	perElem := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
	}
	for _, p := range vecPaths() {
		b.Run(p.name+"/relu", func(b *testing.B) {
			for b.Loop() {
				p.relu(z, x)
			}
			perElem(b)
		})
		b.Run(p.name+"/leaky", func(b *testing.B) {
			for b.Loop() {
				p.leaky(z, x, 0.3)
			}
			perElem(b)
		})
		for _, f := range vecBwdFuncs {
			k := f.kernel(p)
			for _, acc := range []bool{false, true} {
				name := p.name + "/" + f.name
				if acc {
					name += "+acc"
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						k(z, g, x, acc)
					}
					perElem(b)
				})
			}
		}
	}
}

// mathMap64 returns a float64 kernel that calls f element by element: what
// the float64 maps did before vecPath64.
func mathMap64(f func(float64) float64) func(z, x []float64) {
	return func(z, x []float64) {
		x = x[:len(z)]
		for i, v := range x {
			z[i] = f(v)
		}
	}
}

// mathPath64 is the math package's scalar functions as a path, for
// comparison in BenchmarkVec64Kernel.
var mathPath64 = vecPath64{
	name:     "math",
	exp:      mathMap64(math.Exp),
	tanh:     mathMap64(math.Tanh),
	sigmoid:  mathMap64(SigmoidOf),
	softplus: mathMap64(SoftplusOf),
	log:      mathMap64(math.Log),
	sqrt:     mathMap64(math.Sqrt),
}

// BenchmarkVec64Kernel measures each float64 kernel of each path, and the
// math package's scalar functions element by element (path "math"), on
// 32768 elements, reporting ns per element. The paths alternate within
// each function, so that a background load shifts them alike.
func BenchmarkVec64Kernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, f := range vecFuncs64 {
		lo, hi := -10.0, 10.0
		switch f.name {
		case "tanh":
			lo, hi = -5, 5
		case "log":
			lo, hi = 1e-3, 100
		case "sqrt":
			lo, hi = 0, 100
		}
		x := make([]float64, 512*64)
		for i := range x {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		z := make([]float64, len(x))
		for _, p := range append([]vecPath64{mathPath64}, vecPaths64()...) {
			k := f.kernel(p)
			b.Run(f.name+"/path="+p.name, func(b *testing.B) {
				for b.Loop() {
					k(z, x)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/elem")
			})
		}
	}
}

// BenchmarkVec64BwdKernel measures each float64 backward map of each path,
// set and accumulated, on 32768 elements, reporting ns per element.
func BenchmarkVec64BwdKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const n = 512 * 64
	y, g, z := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = rng.Float64()
		g[i] = rng.NormFloat64()
	}
	for _, f := range vecBwdFuncs64 {
		for _, p := range vecPaths64() {
			k := f.kernel(p)
			for _, acc := range []bool{false, true} {
				name := f.name + "/path=" + p.name
				if acc {
					name += "+acc"
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						k(z, g, y, acc)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
				})
			}
		}
	}
}
