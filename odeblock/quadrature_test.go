package odeblock

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestQuadrature solves a system with quadrature elements (x' = A·x
// rotated and damped, q' = x ⊙ x and a sum of x) with Options.Quadrature
// and without: the results must agree to the bit, f must never see the
// quadratures' stage inputs but at an FSAL method's last stage, and at
// dopri5's second stage (weights zero) it must be handed a dy without
// them, once per step tried. Output times inside the solve turn it off.
func TestQuadrature(t *testing.T) {
	const nx, nq = 4, 3
	f := func(short, shortDy *int) Func[float64] {
		return func(_ float64, y, dy []float64) error {
			x := y[:nx]
			if len(y) < nx+nq {
				*short++
			}
			dy[0] = -0.1*x[0] + 2*x[1]
			dy[1] = -2*x[0] - 0.1*x[1]
			dy[2] = -0.3*x[2] + x[3]
			dy[3] = -x[2] - 0.3*x[3]
			if len(dy) < nx+nq {
				*shortDy++
				return nil
			}
			dy[4] = x[0] * x[0]
			dy[5] = x[1]*x[2] + x[3]
			dy[6] = math.Sin(x[0])
			return nil
		}
	}
	y0 := []float64{1, -0.5, 0.25, 2, 0, 0, 0}
	for _, c := range []struct {
		method string
		step   float64
		ts     []float64
		// want: stage inputs without quadratures, and dys without them,
		// per step tried (of the stages after the first).
		shortIn, shortDy int
	}{
		{"dopri5", 0, []float64{0, 3}, 5, 1},
		{"tsit5", 0, []float64{0, 3}, 5, 0},
		{"bosh3", 0, []float64{0, 3}, 2, 0},
		{"rk4", 0.1, []float64{0, 3}, 3, 0},
		{"dopri5", 0, []float64{0, 1.3, 3}, 0, 0},
		{"dopri5", 0, []float64{3, 0}, 5, 1},
	} {
		t.Run(fmt.Sprintf("%s%v", c.method, c.ts), func(t *testing.T) {
			var outs [2][][]float64
			var stats [2]Stats
			var short, shortDy int
			for i, q := range []int{0, nq} {
				s, err := NewSolver[float64](Options{Method: c.method, Step: c.step, RTol: 1e-7, ATol: 1e-9, Quadrature: q})
				if err != nil {
					t.Fatal(err)
				}
				out := make([][]float64, len(c.ts))
				for j := range out {
					out[j] = make([]float64, len(y0))
				}
				short, shortDy = 0, 0
				st, err := s.Solve(f(&short, &shortDy), y0, c.ts, out)
				if err != nil {
					t.Fatal(err)
				}
				outs[i], stats[i] = out, st
				if q == 0 && (short != 0 || shortDy != 0) {
					t.Fatalf("without Quadrature f got %d short states and %d short dys", short, shortDy)
				}
			}
			for j := range outs[0] {
				if !slices.Equal(outs[0][j], outs[1][j]) {
					t.Fatalf("output %d: %v with Quadrature, %v without", j, outs[1][j], outs[0][j])
				}
			}
			if stats[0] != stats[1] {
				t.Fatalf("stats %+v with Quadrature, %+v without", stats[1], stats[0])
			}
			tried := stats[1].Accepted + stats[1].Rejected
			if short != c.shortIn*tried || shortDy != c.shortDy*tried {
				t.Errorf("%d steps tried: f got %d short states (want %d) and %d short dys (want %d)", tried, short, c.shortIn*tried, shortDy, c.shortDy*tried)
			}
		})
	}
	if _, err := NewSolver[float64](Options{Quadrature: -1}); err == nil {
		t.Error("a negative Quadrature was accepted")
	}
	s, err := NewSolver[float64](Options{Quadrature: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Solve(f(new(int), new(int)), y0, []float64{0, 1}, [][]float64{make([]float64, 7), make([]float64, 7)}); err == nil {
		t.Error("a Quadrature longer than the state was accepted")
	}
}

// TestNorm2: norm2 (in each assembly the CPU runs: forEachKernels) is Σ x² in
// float64 to within its rounding, for float32 and float64, at every length
// 0–70 and a long one, reading nothing past the slice, and NaN where an
// element is.
func TestNorm2(t *testing.T) {
	forEachKernels(t, func(t *testing.T) {
		t.Run("float32", testNorm2[float32])
		t.Run("float64", testNorm2[float64])
	})
}

func testNorm2[T tensor.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range append([]int{1000}, func() []int {
		var ns []int
		for n := range 71 {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		buf := make([]T, n+17)
		for i := range buf {
			buf[i] = T(rng.NormFloat64() * 1e3)
		}
		for i := n; i < len(buf); i++ {
			buf[i] = T(math.NaN())
		}
		x := buf[:n]
		var want float64
		for _, v := range x {
			want += float64(v) * float64(v)
		}
		if got := norm2(x); math.Abs(got-want) > float64(n+1)*0x1p-52*want || math.IsNaN(got) {
			t.Fatalf("n=%d: norm2 = %v, want %v", n, got, want)
		}
		if n > 0 {
			x[rng.IntN(n)] = T(math.NaN())
			if got := norm2(x); !math.IsNaN(got) {
				t.Fatalf("n=%d with a NaN: norm2 = %v", n, got)
			}
		}
	}
}
