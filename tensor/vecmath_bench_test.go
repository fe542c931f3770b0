package tensor

import (
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
