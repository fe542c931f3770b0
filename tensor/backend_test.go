package tensor_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestEngines runs the conformance suite on every compiled-in backend, with
// one worker and with several, in float32 and float64: the runs side by
// side (a backend serves concurrent callers; the suite keeps nothing
// between its calls).
func TestEngines(t *testing.T) {
	for _, workers := range []int{1, 3} {
		for _, b := range tensor.Backends(workers) {
			t.Run(fmt.Sprintf("%s/%d/float64", b.Name(), workers), func(t *testing.T) {
				t.Parallel()
				enginetest.Run(t, tensor.EngineFor[float64](b))
			})
			t.Run(fmt.Sprintf("%s/%d/float32", b.Name(), workers), func(t *testing.T) {
				t.Parallel()
				enginetest.Run(t, tensor.EngineFor[float32](b))
			})
		}
	}
}

// TestSerial checks Workers and Serial: a serial engine has one worker,
// runs Parallel in one band on the calling goroutine, passes the
// conformance suite, and is the engine itself when it has one worker or is
// not a CPU engine.
func TestSerial(t *testing.T) {
	for _, b := range tensor.Backends(3) {
		e := tensor.EngineFor[float32](b)
		if w := tensor.Workers(e); w != 3 {
			t.Errorf("%s: Workers = %d, want 3", b.Name(), w)
		}
		s := tensor.Serial(e)
		if w := tensor.Workers(s); w != 1 || s == e {
			t.Errorf("%s: Serial has %d workers (same engine %v), want 1 of its own", b.Name(), w, s == e)
		}
		if s2 := tensor.Serial(e); s2 != s {
			t.Errorf("%s: Serial makes a new engine at each call", b.Name())
		}
		if s1 := tensor.Serial(s); s1 != s {
			t.Errorf("%s: Serial of a serial engine is another engine", b.Name())
		}
		bands := 0
		s.Parallel(1000, func(lo, hi int) {
			bands++
			if lo != 0 || hi != 1000 {
				t.Errorf("%s: serial Parallel band [%d, %d), want [0, 1000)", b.Name(), lo, hi)
			}
		})
		if bands != 1 {
			t.Errorf("%s: serial Parallel ran %d bands", b.Name(), bands)
		}
		t.Run(b.Name(), func(t *testing.T) { enginetest.Run(t, s) })
	}
	var other otherEngine
	if tensor.Serial[float32](other) != tensor.Engine[float32](other) || tensor.Workers[float32](other) != 1 {
		t.Error("an engine without Workers and Serial methods: want itself and 1 worker")
	}
}

// otherEngine is an engine of another package: the conformance reference,
// without the CPU engine's Workers and Serial methods.
type otherEngine struct{ tensor.Engine[float32] }

// TestConvAllocatesNothing checks that the convolution passes and split
// GEMMs (by rows, and along k) into given destinations allocate nothing in steady state on backends
// whose BLAS does not allocate (OpenBLAS; gonum's gemm allocates internally).
func TestConvAllocatesNothing(t *testing.T) {
	if tensor.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	b, err := tensor.OpenBLAS(2)
	if err != nil {
		t.Skip(err)
	}
	e := tensor.EngineFor[float32](b)
	p := tensor.ConvParams{Pad: 1}
	x := tensor.New[float32](4, 5, 9, 9)
	w := tensor.New[float32](6, 5, 3, 3)
	y := tensor.New[float32](tensor.Conv2DOutputShape(x.Shape(), w.Shape(), p)...)
	dx, dw := tensor.New[float32](x.Shape()...), tensor.New[float32](w.Shape()...)
	bias := tensor.New[float32](6)
	m := tensor.New[float32](256, 256)
	mm := tensor.New[float32](256, 256)
	g, xs, gw := tensor.New[float32](1024, 64), tensor.New[float32](1024, 64), tensor.New[float32](64, 64)
	for name, f := range map[string]func(){
		"forward":         func() { e.Conv2D(y, x, w, bias, p) },
		"backward-data":   func() { e.Conv2DBackwardData(dx, y, w, p, false) },
		"backward-filter": func() { e.Conv2DBackwardFilter(dw, bias, y, x, p, true) },
		"split gemm":      func() { mm.MatMul(e, m, false, m, true) },
		"gemm split on k": func() { gw.MatMul(e, g, true, xs, false) },
	} {
		if n := testing.AllocsPerRun(50, f); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, n)
		}
	}
}

// TestParallel checks that Parallel covers [0, n) exactly once, in bands,
// for sizes below and above the worker count.
func TestParallel(t *testing.T) {
	for _, b := range tensor.Backends(3) {
		e := tensor.EngineFor[float32](b)
		for _, n := range []int{0, 1, 2, 3, 7, 1000} {
			hits := make([]int32, n)
			e.Parallel(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i]++
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("%s n=%d: element %d visited %d times", b.Name(), n, i, h)
				}
			}
		}
	}
}

// TestParallelWaitsForParts checks that Parallel returns only once every
// part has finished, whether the parts finish before the caller's own part,
// while it polls for them, or after it has stopped polling and blocked
// (parts that sleep for 2 ms), and whether the workers were polling for the
// call or had blocked (a pause of 2 ms before it).
func TestParallelWaitsForParts(t *testing.T) {
	for _, b := range tensor.Backends(3) {
		e := tensor.EngineFor[float32](b)
		for _, d := range []time.Duration{0, 50 * time.Microsecond, 2 * time.Millisecond} {
			for _, pause := range []time.Duration{0, 2 * time.Millisecond} {
				time.Sleep(pause)
				var done [3]atomic.Bool
				e.Parallel(3, func(lo, hi int) {
					if lo > 0 {
						time.Sleep(d)
					}
					for i := lo; i < hi; i++ {
						done[i].Store(true)
					}
				})
				for i := range done {
					if !done[i].Load() {
						t.Fatalf("%s: part %d (sleeping %v, after a pause of %v) had not finished when Parallel returned", b.Name(), i, d, pause)
					}
				}
			}
		}
	}
}

// TestSplitGemmShapes runs float32 GEMMs large enough to be split over
// two workers — along m, along n, and along k (k at least twice m and n,
// including k not a multiple of the parts) — with every combination of
// transposes, alpha and beta not 1, C wider than n (ldc > n), and the bias
// form, against the sums in float64.
func TestSplitGemmShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, be := range tensor.Backends(2) {
		e := tensor.EngineFor[float32](be)
		for _, s := range []struct{ m, n, k int }{{2048, 48, 40}, {40, 2048, 40}, {64, 48, 4096}, {37, 23, 3001}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for _, withBias := range []bool{false, true} {
						lda, ldb, ldc := s.k, s.n, s.n+3
						if tA {
							lda = s.m
						}
						if tB {
							ldb = s.k
						}
						a := tensor.RandN[float32](rng, 0, 1, s.m*s.k).Data()
						b := tensor.RandN[float32](rng, 0, 1, s.k*s.n).Data()
						c := tensor.RandN[float32](rng, 0, 1, s.m*ldc).Data()
						bias := tensor.RandN[float32](rng, 0, 1, s.n).Data()
						// The reference: C's rows set to the bias (beta 1) or
						// kept (beta 0.5), then the product summed in float64.
						want := append([]float32(nil), c...)
						const alpha, beta = 1.5, 0.5
						refBeta := float32(beta)
						if withBias {
							for i := range s.m {
								copy(want[i*ldc:i*ldc+s.n], bias)
							}
							refBeta = 1
						}
						enginetest.RefGemm(tA, tB, s.m, s.n, s.k, alpha, a, lda, b, ldb, refBeta, want, ldc)
						if withBias {
							e.(tensor.BiasGemmer[float32]).GemmBias(tA, tB, s.m, s.n, s.k, alpha, a, lda, b, ldb, bias, c, ldc)
						} else {
							e.Gemm(tA, tB, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c, ldc)
						}
						for i, w := range want { // past n in each row: untouched
							if d := c[i] - w; d > 2e-3 || d < -2e-3 {
								t.Fatalf("%s %v tA=%v tB=%v bias=%v: C[%d,%d] = %v, want %v", be.Name(), s, tA, tB, withBias, i/ldc, i%ldc, c[i], w)
							}
						}
					}
				}
			}
		}
	}
}

// TestEngineConcurrentCallers runs split GEMMs and Parallel calls from four
// goroutines at once on one engine of two workers (the pool's tasks are
// shared): each caller must get its own product, and its parts only.
func TestEngineConcurrentCallers(t *testing.T) {
	e := tensor.EngineFor[float32](tensor.Gonum(2))
	const m, n, k = 512, 64, 64 // split: 4.2 Mflop
	rng := rand.New(rand.NewPCG(8, 8))
	b := tensor.RandN[float32](rng, 0, 1, k, n).Data()
	var as, wants [4][]float32
	for g := range as {
		as[g] = tensor.RandN[float32](rng, 0, 1, m, k).Data()
		wants[g] = make([]float32, m*n)
		tensor.EngineFor[float32](tensor.Gonum(1)).Gemm(false, false, m, n, k, 1, as[g], k, b, n, 0, wants[g], n)
	}
	errs := make(chan error, len(as))
	for g := range as {
		go func() {
			c := make([]float32, m*n)
			for it := range 50 {
				e.Gemm(false, false, m, n, k, 1, as[g], k, b, n, 0, c, n)
				for i, v := range c {
					if d := v - wants[g][i]; d > 1e-3 || d < -1e-3 {
						errs <- fmt.Errorf("caller %d, call %d: element %d = %v, want %v", g, it, i, v, wants[g][i])
						return
					}
				}
				var sum atomic.Int64
				e.Parallel(1000, func(lo, hi int) { sum.Add(int64(hi - lo)) })
				if sum.Load() != 1000 {
					errs <- fmt.Errorf("caller %d, call %d: Parallel covered %d of 1000 items", g, it, sum.Load())
					return
				}
			}
			errs <- nil
		}()
	}
	for range as {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestSplitGemmTransposes runs GEMMs large enough to be split over two
// workers with every combination of transposes, on shapes where the split
// dimension of a transposed operand is far longer than the other (the
// split once sliced a transposed A by rows and ran past its end), against
// a one-worker product; and one split along k (k far longer than m and n,
// not a multiple of the parts).
func TestSplitGemmTransposes(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, be := range tensor.Backends(2) {
		ref := tensor.EngineFor[float64](tensor.Gonum(1))
		e := tensor.EngineFor[float64](be)
		for _, s := range []struct{ m, n, k int }{{4096, 64, 8}, {64, 4096, 8}, {512, 512, 16}, {32, 24, 4097}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					as, bs := []int{s.m, s.k}, []int{s.k, s.n}
					if tA {
						as = []int{s.k, s.m}
					}
					if tB {
						bs = []int{s.n, s.k}
					}
					a, b := tensor.RandN[float64](rng, 0, 1, as...), tensor.RandN[float64](rng, 0, 1, bs...)
					got, want := tensor.New[float64](s.m, s.n), tensor.New[float64](s.m, s.n)
					got.MatMul(e, a, tA, b, tB)
					want.MatMul(ref, a, tA, b, tB)
					for i, v := range got.Data() {
						if d := v - want.Data()[i]; d > 1e-9 || d < -1e-9 {
							t.Fatalf("%s %v tA=%v tB=%v: element %d = %v, want %v", be.Name(), s, tA, tB, i, v, want.Data()[i])
						}
					}
				}
			}
		}
	}
}
