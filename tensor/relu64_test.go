package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReLU64 checks the float64 ReLU and LeakyReLU of tensors (in
// assembly where the CPU has AVX-512) exactly, bit for bit, against
// max(x, 0) and x > 0 ? x : slope·x: on signed zeros, NaN, infinities,
// denormals and random values, at every length 0–40 and several offsets,
// in place, and without writing past the end.
func TestReLU64(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	xs := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1, -1}
	for range 200 {
		xs = append(xs, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
	}
	leakyRef := func(s float64) func(float64) float64 {
		return func(v float64) float64 {
			if v > 0 || v != v {
				return v
			}
			return s * v
		}
	}
	for _, c := range []struct {
		name string
		f    func(z, x *Tensor[float64])
		ref  func(float64) float64
	}{
		{"relu", func(z, x *Tensor[float64]) { z.ReLU(x) }, func(v float64) float64 { return max(v, 0) }},
		{"leaky 0.3", func(z, x *Tensor[float64]) { z.LeakyReLU(x, 0.3) }, leakyRef(0.3)},
		{"leaky -2.5", func(z, x *Tensor[float64]) { z.LeakyReLU(x, -2.5) }, leakyRef(-2.5)},
	} {
		same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
		for n := 0; n <= 40; n++ {
			for off := 0; off < 3; off++ {
				x := FromSlice(append([]float64(nil), xs[off*17:off*17+n]...), n)
				buf := make([]float64, n+2)
				buf[n], buf[n+1] = 7, 7
				z := FromSlice(buf[:n], n)
				c.f(z, x)
				for i, v := range x.Data() {
					if got, want := z.Data()[i], c.ref(v); !same(got, want) {
						t.Fatalf("%s n=%d: f(%g) = %g, want %g", c.name, n, v, got, want)
					}
				}
				if buf[n] != 7 || buf[n+1] != 7 {
					t.Fatalf("%s n=%d: wrote past the end", c.name, n)
				}
				c.f(x, x) // in place
				for i, v := range x.Data() {
					if !same(v, z.Data()[i]) {
						t.Fatalf("%s n=%d in place: %g at %d, want %g", c.name, n, v, i, z.Data()[i])
					}
				}
			}
		}
	}
}
