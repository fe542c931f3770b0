//go:build !purego

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// TestReLUBackward64Kernels: the float64 ReLU and LeakyReLU backward
// kernels (relubwd64_amd64.s) of every instruction set this CPU runs,
// whatever the kernel path, against the Go loops bit for bit: every
// length 0–40 and some long ones, set and accumulating, y holding ±0,
// ±Inf, NaN and subnormals beside normal values, g too; nothing read or
// written past the operands (NaNs there would show; z's pad is checked).
func TestReLUBackward64Kernels(t *testing.T) {
	type kernels struct {
		name        string
		runs        bool
		relu, reluA func(z, g, y []float64)
		leaky       func(z, g, y []float64, slope float64)
		leakyA      func(z, g, y []float64, slope float64)
	}
	sets := []kernels{
		{"avx512", isa.AVX512.Runs(isa.Best()), reluBwd64AVX512, reluBwdAcc64AVX512, leakyBwd64AVX512, leakyBwdAcc64AVX512},
		{"avx2", isa.AVX2.Runs(isa.Best()), reluBwd64AVX2, reluBwdAcc64AVX2, leakyBwd64AVX2, leakyBwdAcc64AVX2},
	}
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -5e-324}
	draw := func(rng *rand.Rand, n, pad int) []float64 {
		x := make([]float64, n+pad)
		for i := range n {
			x[i] = rng.NormFloat64()
			if rng.IntN(6) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		for i := n; i < len(x); i++ {
			x[i] = math.NaN()
		}
		return x
	}
	// The Go loops, as elementwise.go has them.
	refReLU := func(z, g, y []float64, acc bool) {
		for i := range z {
			var m uint64
			if y[i] > 0 {
				m = ^uint64(0)
			}
			v := math.Float64frombits(math.Float64bits(g[i]) & m)
			if acc {
				z[i] += v
			} else {
				z[i] = v
			}
		}
	}
	refLeaky := func(z, g, y []float64, slope float64, acc bool) {
		for i := range z {
			d := g[i]
			if !(y[i] > 0) {
				d *= slope
			}
			if acc {
				z[i] += d
			} else {
				z[i] = d
			}
		}
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	var lens []int
	for n := range 41 {
		lens = append(lens, n)
	}
	lens = append(lens, 63, 64, 65, 1000, 1027)
	rng := rand.New(rand.NewPCG(5, 8))
	ran := 0
	for _, k := range sets {
		if !k.runs {
			continue
		}
		ran++
		for _, n := range lens {
			for _, acc := range []bool{false, true} {
				for _, leaky := range []bool{false, true} {
					name := fmt.Sprintf("%s n=%d acc=%v leaky=%v", k.name, n, acc, leaky)
					g, y, z0 := draw(rng, n, 8), draw(rng, n, 8), draw(rng, n, 8)
					const pad = -7.25
					got := append([]float64(nil), z0[:n]...)
					got = append(got, pad, pad, pad, pad, pad, pad, pad, pad)
					want := append([]float64(nil), z0[:n]...)
					switch {
					case leaky && acc:
						k.leakyA(got[:n], g[:n], y[:n], 0.2)
						refLeaky(want, g, y, 0.2, true)
					case leaky:
						k.leaky(got[:n], g[:n], y[:n], 0.2)
						refLeaky(want, g, y, 0.2, false)
					case acc:
						k.reluA(got[:n], g[:n], y[:n])
						refReLU(want, g, y, true)
					default:
						k.relu(got[:n], g[:n], y[:n])
						refReLU(want, g, y, false)
					}
					for i := range n {
						if !same(got[i], want[i]) {
							t.Fatalf("%s: z[%d] = %v (g %v, y %v), want %v", name, i, got[i], g[i], y[i], want[i])
						}
					}
					for i := n; i < len(got); i++ {
						if got[i] != pad {
							t.Fatalf("%s: wrote z[%d] past the end", name, i)
						}
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("this CPU runs neither AVX-512 nor AVX2")
	}
}
