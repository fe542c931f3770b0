package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkWinogradChannels times the forward 3×3 pad-1 convolution of a
// batch of 32 28×28 images with C = Co channels, one worker, by Winograd's
// F(2×2, 3×3) and by im2col + GEMM: the measurement behind
// winogradMinHarmonic.
func BenchmarkWinogradChannels(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	be, err := OpenBLAS(1)
	if err != nil {
		be = Gonum(1)
	}
	one := EngineFor[float32](be)
	for _, c := range []int{4, 8, 12, 16, 32, 64} {
		x := RandN[float32](rng, 0, 1, 32, c, 28, 28)
		w := RandN[float32](rng, 0, 1, c, c, 3, 3)
		y := New[float32](32, c, 28, 28)
		for _, wino := range []bool{true, false} {
			name := fmt.Sprintf("c%d/im2col", c)
			if wino {
				name = fmt.Sprintf("c%d/winograd", c)
			}
			b.Run(name, func(b *testing.B) {
				defer func(m int) { winogradMinHarmonic = m }(winogradMinHarmonic)
				winogradMinHarmonic = 1 << 30
				if wino {
					winogradMinHarmonic = 1
				}
				for b.Loop() {
					one.Conv2D(y, x, w, nil, ConvParams{Pad: 1})
				}
			})
		}
	}
}

// winoKindsRun returns the kernels of the transforms that the tests run
// on this CPU: the Go loops; the SSE2 assembly on every amd64 CPU and the
// AVX2 assembly where the CPU has AVX2 and FMA, whatever the kernel path;
// the AVX-512 assembly on the avx512 path.
func winoKindsRun() []winoKernels {
	ks := []winoKernels{winoGo}
	if winoHasSSE2 {
		ks = append(ks, winoOnSSE2)
	}
	if winoHasAVX2 {
		ks = append(ks, winoOnAVX2)
	}
	if winoAVX512 {
		ks = append(ks, winoOnAVX512)
	}
	return ks
}

// withWino runs f with the float32 transforms on the kernels k.
func withWino(k winoKernels, f func()) {
	defer func(old winoKernels) { winoKern = old }(winoKern)
	winoKern = k
	f()
}

// lengthsTo returns 0, 1, …, n and then more.
func lengthsTo(n int, more ...int) []int {
	l := make([]int, 0, n+1+len(more))
	for i := range n + 1 {
		l = append(l, i)
	}
	return append(l, more...)
}

// TestWinoKernels: winoCombine and winoDown equal their definitions bit
// for bit on every kernel set this CPU runs (the Go loops, AVX2, AVX-512:
// winoKindsRun), at every length 0–70 (full vectors and tails) and some
// long ones, in float32 and float64.
func TestWinoKernels(t *testing.T) {
	for _, k := range winoKindsRun() {
		withWino(k, func() {
			testWinoKernels[float32](t, k)
			testWinoKernels[float64](t, k)
		})
	}
}

func testWinoKernels[T Float](t *testing.T, kern winoKernels) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range lengthsTo(70, 127, 128, 129, 1000, 1031) {
		in := make([][]T, 4)
		for i := range in {
			in[i] = make([]T, n+3) // longer than n: only n are read
			for k := range in[i] {
				in[i][k] = T(rng.NormFloat64())
			}
		}
		out := make([][]T, 4)
		for i := range out {
			out[i] = make([]T, n+1)
			out[i][n] = 42 // must stay
		}
		winoCombine(out[0][:n], out[1][:n], out[2][:n], out[3][:n], in[0], in[1], in[2], in[3])
		for k := range n {
			a, b, c, d := in[0][k], in[1][k], in[2][k], in[3][k]
			if want := [4]T{a - c, b + c, c - b, b - d}; [4]T{out[0][k], out[1][k], out[2][k], out[3][k]} != want {
				t.Fatalf("%v %T winoCombine n=%d: element %d = %v, want %v", kern, a, n, k, [4]T{out[0][k], out[1][k], out[2][k], out[3][k]}, want)
			}
		}
		bias := T(rng.NormFloat64())
		winoDown(out[0][:n], out[1][:n], in[0], in[1], in[2], in[3], bias)
		for k := range n {
			m0, m1, m2, m3 := in[0][k], in[1][k], in[2][k], in[3][k]
			if a, b := m0+m1+m2+bias, m1-m2-m3+bias; out[0][k] != a || out[1][k] != b {
				t.Fatalf("%v %T winoDown n=%d: element %d = %v, %v, want %v, %v", kern, a, n, k, out[0][k], out[1][k], a, b)
			}
		}
		for i := range out {
			if out[i][n] != 42 {
				t.Fatalf("%v n=%d: wrote past the end of output %d", kern, n, i)
			}
		}
	}
}

// TestWinoColumns: splitColumns and joinColumns move each element where
// their definitions say on every kernel set this CPU runs, for row
// lengths 0–100 (whole steps of 32 or 16, 8-element steps and tails) and
// some long ones, both paddings' parities, set and added, float32 and
// float64, and write nothing else.
func TestWinoColumns(t *testing.T) {
	for _, k := range winoKindsRun() {
		withWino(k, func() {
			testWinoColumns[float32](t, k)
			testWinoColumns[float64](t, k)
		})
	}
}

func testWinoColumns[T Float](t *testing.T, kern winoKernels) {
	rng := rand.New(rand.NewPCG(10, 11))
	const guard = 42
	for _, m := range lengthsTo(100, 255, 256, 1000, 1001) {
		row := make([]T, m+5) // longer than m: only m are read
		for i := range row {
			row[i] = T(rng.NormFloat64())
		}
		for _, pad := range []int{0, 1, 2, 3} {
			w := (m + pad + 2) / 2 // ev and od hold the padded row's halves
			ev, od := make([]T, w+4), make([]T, w+4)
			for i := range ev {
				ev[i], od[i] = guard, guard
			}
			splitColumns(ev[:w+1], od[:w+1], row[:m], pad)
			wantEv, wantOd := make([]T, len(ev)), make([]T, len(od))
			for i := range wantEv {
				wantEv[i], wantOd[i] = guard, guard
			}
			for x := range m {
				if c := x + pad; c%2 == 0 {
					wantEv[c/2] = row[x]
				} else {
					wantOd[c/2] = row[x]
				}
			}
			for i := range ev {
				if ev[i] != wantEv[i] || od[i] != wantOd[i] {
					t.Fatalf("%v %T splitColumns m=%d pad=%d: column pair %d = (%v, %v), want (%v, %v)", kern, row[0:0], m, pad, i, ev[i], od[i], wantEv[i], wantOd[i])
				}
			}
		}
		for _, add := range []bool{false, true} {
			even, odd := make([]T, (m+1)/2+2), make([]T, m/2+2) // longer than needed: only the halves are read
			for i := range even {
				even[i] = T(rng.NormFloat64())
			}
			for i := range odd {
				odd[i] = T(rng.NormFloat64())
			}
			dst := make([]T, m+3)
			for i := range dst {
				dst[i] = T(rng.NormFloat64())
			}
			want := append([]T(nil), dst...)
			for x := range m {
				v := even[x/2]
				if x%2 == 1 {
					v = odd[x/2]
				}
				if add {
					want[x] += v
				} else {
					want[x] = v
				}
			}
			joinColumns(dst[:m], even, odd, add)
			for i := range dst {
				if dst[i] != want[i] {
					t.Fatalf("%v %T joinColumns m=%d add=%v: dst[%d] = %v, want %v", kern, row[0:0], m, add, i, dst[i], want[i])
				}
			}
		}
	}
}

// TestWinoSplitRows: splitColumnRows on several rows at once (winoInput's
// call: a source stride of two rows, the planes' stride) writes the bits
// of the Go loop on every kernel set this CPU runs, for row lengths 0–40
// and some long ones, both paddings' parities, and nothing else.
func TestWinoSplitRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const guard = 42
	for _, cols := range lengthsTo(40, 63, 64, 65, 255, 1001) {
		for _, pad := range []int{0, 1} {
			for _, rows := range []int{1, 2, 5} {
				xs, we := 2*cols+3, (cols+pad+2)/2+1
				x := make([]float32, rows*xs)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				var want []float32
				for _, k := range winoKindsRun() {
					ev, od := make([]float32, rows*we+4), make([]float32, rows*we+4)
					for i := range ev {
						ev[i], od[i] = guard, -guard
					}
					withWino(k, func() { splitColumnRows(ev, od, x, cols, rows, xs, we, pad) })
					got := append(ev, od...)
					if k == winoGo {
						want = got
						continue
					}
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v splitColumnRows cols=%d pad=%d rows=%d: element %d of ev, od = %v, the Go loop's %v", k, cols, pad, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestAxpySlice: AxpySlice (in assembly for float32 where the CPU has
// AVX-512) equals y + a·x, the product rounded first, bit for bit at every
// length 0–100 (within an ulp where gonum's loop runs), and writes nothing
// past len(y).
func TestAxpySlice(t *testing.T) {
	testAxpySlice[float32](t)
	testAxpySlice[float64](t)
}

// testAxpySlice checks AxpySlice in T against its definition, bit for
// bit where the assembly runs (else within an ulp of the result).
func testAxpySlice[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := range 101 {
		x, y := make([]T, n+2), make([]T, n+1)
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
		for i := range y {
			y[i] = T(rng.NormFloat64())
		}
		a := T(rng.NormFloat64())
		want := make([]T, n)
		for i := range want {
			want[i] = y[i] + T(a*x[i]) // the conversion rounds the product
		}
		last := y[n]
		AxpySlice(a, x, y[:n])
		for i := range want {
			// Exact where the assembly runs; gonum's Go loop may be fused
			// into a multiply-add by the compiler on some architectures.
			if y[i] != want[i] && (axpyAVX || math.Abs(float64(y[i]-want[i])) > 1e-6*math.Abs(float64(want[i]))) {
				t.Fatalf("%T n=%d: y[%d] = %v, want %v", a, n, i, y[i], want[i])
			}
		}
		if y[n] != last {
			t.Fatalf("%T n=%d: wrote past the end", a, n)
		}
	}
}

// winoShape is the shape of a 3×3, stride-1 convolution of one sample of
// c channels, h × w, into co channels with padding pad.
func winoShape(c, co, h, w, pad int) convShape {
	p := ConvParams{Pad: pad}
	s := convShape{b: 1, c: c, h: h, w: w, co: co, kh: 3, kw: 3, stride: 1, pad: pad}
	s.oh, s.ow = ConvOutputSize(h, 3, p), ConvOutputSize(w, 3, p)
	s.k, s.p = c*9, s.oh*s.ow
	return s
}

// winoFusedShapes are the shapes (channels, input size, padding) the
// transforms' kernels are checked at as winoInput, winoOutput and
// winoOutputGrad call them: odd and even sizes, paddings 0–2, channel
// counts whose planes end inside a vector, and, at 3 and 4 rows, every
// plane length n from 2 to 41 (one row of tiles: n = tw + 1), then with
// two and three rows of tiles: the AVX2 kernels' whole vectors and the
// last partial one, and the planes under 8 they leave to the two passes.
var winoFusedShapes = func() []struct{ c, h, w, pad int } {
	sh := []struct{ c, h, w, pad int }{
		{1, 3, 3, 0}, {1, 4, 4, 1}, {2, 5, 7, 1}, {3, 28, 28, 1}, {5, 9, 31, 2}, {4, 32, 33, 1}, {2, 17, 2, 1}, {51, 28, 28, 1}, {50, 28, 28, 1}, {3, 66, 64, 1},
	}
	for w := 3; w <= 84; w++ {
		sh = append(sh, struct{ c, h, w, pad int }{2 + w%2, 3 + w%2, w, 0})
	}
	for w := 3; w <= 20; w++ {
		sh = append(sh, struct{ c, h, w, pad int }{2, 6, w, 0}, struct{ c, h, w, pad int }{2, 6, w, 1})
	}
	return sh
}()

// winoKindsFused are the ways the float32 transforms run on the
// assembly kernels this CPU runs: each kernel set with its fused kernels
// and with the two passes of winoCombine or winoDown calls.
func winoKindsFused() (ks []winoKernels, fused []bool) {
	for _, k := range winoKindsRun()[1:] {
		ks, fused = append(ks, k, k), append(fused, true, false)
	}
	return ks, fused
}

// TestWinoInputFused: winoInput on the assembly kernels (fused into one
// kernel per channel, and in two passes) writes the bits of the Go loops
// at every position of every plane but each tile row's extra tile, which
// no one reads, on winoFusedShapes.
func TestWinoInputFused(t *testing.T) {
	ks, fused := winoKindsFused()
	if len(ks) == 0 {
		t.Skip("no assembly transforms on this CPU")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range winoFusedShapes {
		s := winoShape(c.c, 1, c.h, c.w, c.pad)
		x := make([]float32, c.c*c.h*c.w)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		vs, _, scr := winoSizes(s)
		want := make([]float32, vs)
		scratch := make([]float32, scr)
		for i := range scratch {
			scratch[i] = float32(math.NaN()) // what the two passes read must be theirs
		}
		withWino(winoGo, func() { winoInput(want, x, scratch, s) })
		_, tw, n := s.tiles()
		for ki, k := range ks {
			got := make([]float32, vs)
			for i := range scratch {
				scratch[i] = float32(math.NaN())
			}
			winoFused = fused[ki]
			withWino(k, func() { winoInput(got, x, scratch, s) })
			winoFused = true
			for i := range got {
				if pos := i % n; pos%(tw+1) == tw {
					continue // a row's extra tile
				}
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v fused %v %+v: V[%d] (plane %d, channel %d, position %d) = %v, the Go loops' %v",
						k, fused[ki], c, i, i/(s.c*n), i/n%s.c, i%n, got[i], want[i])
				}
			}
		}
	}
}

// TestWinoOutputFused: winoOutput on the assembly kernels (fused into one
// kernel per channel, and in two passes) writes the bits of the Go loops'
// six winoDown calls, setting and adding, with and without a bias, and
// negative zeros among the products (the first pass's zero bias turns −0
// into +0 in both), on winoFusedShapes (c output channels).
func TestWinoOutputFused(t *testing.T) {
	ks, fused := winoKindsFused()
	if len(ks) == 0 {
		t.Skip("no assembly transforms on this CPU")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range winoFusedShapes {
		s := winoShape(1, c.c, c.h, c.w, c.pad)
		_, ms, scr := winoSizes(s)
		m := make([]float32, ms)
		for i := range m {
			m[i] = float32(rng.NormFloat64())
			if i%7 == 0 {
				m[i] = float32(math.Copysign(0, -1))
			}
		}
		bias := make([]float32, c.c)
		for i := range bias {
			bias[i] = float32(rng.NormFloat64())
		}
		for _, b := range [][]float32{nil, bias} {
			for _, add := range []bool{false, true} {
				y0 := make([]float32, c.c*s.oh*s.ow)
				for i := range y0 {
					y0[i] = float32(i % 5)
				}
				want := append([]float32(nil), y0...)
				withWino(winoGo, func() { winoOutput(want, m, b, make([]float32, scr), s, add) })
				for ki, k := range ks {
					got := append([]float32(nil), y0...)
					winoFused = fused[ki]
					withWino(k, func() { winoOutput(got, m, b, make([]float32, scr), s, add) })
					winoFused = true
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v fused %v %+v bias %v add %v: y[%d] = %v, the Go loops' %v", k, fused[ki], c, b != nil, add, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestWinoOutputGradFused: winoOutputGrad on the assembly kernels (fused
// into one kernel per channel, and in two passes) writes the bits of the
// Go loops' six winoCombine calls at every position, zeros and negative
// zeros among dy included, on winoFusedShapes (c output channels).
func TestWinoOutputGradFused(t *testing.T) {
	ks, fused := winoKindsFused()
	if len(ks) == 0 {
		t.Skip("no assembly transforms on this CPU")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range winoFusedShapes {
		s := winoShape(1, c.c, c.h, c.w, c.pad)
		dy := make([]float32, c.c*s.oh*s.ow)
		for i := range dy {
			dy[i] = float32(rng.NormFloat64())
			switch i % 7 {
			case 0:
				dy[i] = float32(math.Copysign(0, -1))
			case 3:
				dy[i] = 0
			}
		}
		_, ms, scr := winoSizes(s)
		want := make([]float32, ms)
		withWino(winoGo, func() { winoOutputGrad(want, dy, make([]float32, scr), s) })
		for ki, k := range ks {
			got := make([]float32, ms)
			winoFused = fused[ki]
			withWino(k, func() { winoOutputGrad(got, dy, make([]float32, scr), s) })
			winoFused = true
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v fused %v %+v: m[%d] = %v, the Go loops' %v", k, fused[ki], c, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkWinoTransforms times the transforms of one 28×28 sample at
// the paper's 3×3 convolution (51 channels in, 50 out, pad 1) on every
// kernel set this CPU runs: winoInput, winoOutput (adding, with a bias)
// and winoOutputGrad, float32.
func BenchmarkWinoTransforms(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 18))
	s := winoShape(51, 50, 28, 28, 1)
	vs, ms, scr := winoSizes(s)
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	x, dy, bias := rnd(s.c*s.h*s.w), rnd(s.co*s.oh*s.ow), rnd(s.co)
	v, m, y, scratch := make([]float32, vs), rnd(ms), make([]float32, s.co*s.oh*s.ow), make([]float32, scr)
	for _, tr := range []struct {
		name string
		f    func()
	}{
		{"input", func() { winoInput(v, x, scratch, s) }},
		{"output", func() { winoOutput(y, m, bias, scratch, s, true) }},
		{"outputgrad", func() { winoOutputGrad(m, dy, scratch, s) }},
	} {
		for _, k := range winoKindsRun() {
			b.Run(tr.name+"/"+k.String(), func(b *testing.B) {
				withWino(k, func() {
					for b.Loop() {
						tr.f()
					}
				})
			})
		}
	}
}

// alternate runs the functions fs in turn, rounds times, and returns each
// one's median time per call and the median over the rounds of each one's
// time over fs[0]'s in the same round: steadier ratios than consecutive
// benchmarks on a machine whose speed moves second to second.
func alternate(rounds int, fs ...func()) (med, ratio []float64) {
	times := make([][]float64, len(fs))
	ratios := make([][]float64, len(fs))
	for _, f := range fs {
		f() // warm the workspaces
	}
	for range rounds {
		var first float64
		for i, f := range fs {
			start := time.Now()
			f()
			d := float64(time.Since(start).Nanoseconds())
			if i == 0 {
				first = d
			}
			times[i] = append(times[i], d)
			ratios[i] = append(ratios[i], d/first)
		}
	}
	for i := range fs {
		slices.Sort(times[i])
		slices.Sort(ratios[i])
		med, ratio = append(med, times[i][rounds/2]), append(ratio, ratios[i][rounds/2])
	}
	return med, ratio
}

// BenchmarkWinogradAlternating times, one worker, in alternation (see
// alternate; -benchtime 1x runs each sub-benchmark once): the three passes
// of the paper's 3×3 convolution (batch 32, 51 channels to 50, 28×28,
// pad 1) with the transforms on the Go loops and on each kernel set this
// CPU runs (metrics ms per pass and the ratio to the Go loops), and
// BenchmarkWinogradChannels' convolutions by Winograd on the kernel
// path's transforms and by im2col (the ratio Winograd / im2col: the
// measurement behind winogradMinHarmonic).
func BenchmarkWinogradAlternating(b *testing.B) {
	const rounds = 21
	rng := rand.New(rand.NewPCG(19, 20))
	be, err := OpenBLAS(1)
	if err != nil {
		be = Gonum(1)
	}
	one := EngineFor[float32](be)
	defer func(m int) { winogradMinHarmonic = m }(winogradMinHarmonic)
	b.Run("conv", func(b *testing.B) {
		p := ConvParams{Pad: 1}
		x, w := RandN[float32](rng, 0, 1, 32, 51, 28, 28), RandN[float32](rng, 0, 0.1, 50, 51, 3, 3)
		y, dx, dw := RandN[float32](rng, 0, 1, 32, 50, 28, 28), New[float32](32, 51, 28, 28), New[float32](50, 51, 3, 3)
		winogradMinHarmonic = 1
		for _, pass := range []struct {
			name string
			f    func()
		}{
			{"forward", func() { one.Conv2D(y, x, w, nil, p) }},
			{"backward-data", func() { one.Conv2DBackwardData(dx, y, w, p, false) }},
			{"backward-filter", func() { one.Conv2DBackwardFilter(dw, nil, y, x, p, false) }},
		} {
			b.Run(pass.name, func(b *testing.B) {
				ks := winoKindsRun()
				fs := make([]func(), len(ks))
				for i, k := range ks {
					fs[i] = func() { withWino(k, pass.f) }
				}
				for b.Loop() {
					med, ratio := alternate(rounds, fs...)
					for i, k := range ks {
						b.ReportMetric(med[i]/1e6, k.String()+"-ms")
						if i > 0 {
							b.ReportMetric(ratio[i], k.String()+"/go")
						}
					}
				}
			})
		}
	})
	b.Run("channels", func(b *testing.B) {
		for _, c := range []int{4, 8, 12, 16, 24, 32, 64} {
			x := RandN[float32](rng, 0, 1, 32, c, 28, 28)
			w := RandN[float32](rng, 0, 1, c, c, 3, 3)
			y := New[float32](32, c, 28, 28)
			conv := func(m int) func() {
				return func() {
					winogradMinHarmonic = m
					one.Conv2D(y, x, w, nil, ConvParams{Pad: 1})
				}
			}
			b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
				for b.Loop() {
					med, ratio := alternate(rounds, conv(1<<30), conv(1))
					b.ReportMetric(med[0]/1e6, "im2col-ms")
					b.ReportMetric(med[1]/1e6, "wino-ms")
					b.ReportMetric(ratio[1], "wino/im2col")
				}
			})
		}
	})
}

// TestWinoKernelChoice: which kernels Winograd's transforms take, for
// each kernel set: the fused kernels only on AVX2 (a whole vector of
// positions) and AVX-512 (any), never on SSE2 or the Go loops, and none
// in float64 or with winoFused off; the lower threshold only with the
// fused ones; and the names the kernel paths give them.
func TestWinoKernelChoice(t *testing.T) {
	for _, c := range []struct {
		k        winoKernels
		name     string
		fast     bool
		fusedMin int // the least n with fused kernels; 0 for none
	}{
		{winoGo, "go", false, 0},
		{winoOnSSE2, "sse2", false, 0},
		{winoOnAVX2, "avx2", true, 8},
		{winoOnAVX512, "avx512", true, 1},
	} {
		if got := c.k.String(); got != c.name {
			t.Errorf("winoKernels(%d).String() = %q, want %q", c.k, got, c.name)
		}
		if got := c.k.fast(); got != c.fast {
			t.Errorf("%v.fast() = %v, want %v", c.k, got, c.fast)
		}
		withWino(c.k, func() {
			for _, n := range []int{0, 1, 7, 8, 9, 100} {
				want := winoGo
				if c.fusedMin > 0 && n >= c.fusedMin {
					want = c.k
				}
				if got := fusedWino[float32](n); got != want {
					t.Errorf("%v: fusedWino[float32](%d) = %v, want %v", c.k, n, got, want)
				}
				if got := fusedWino[float64](n); got != winoGo {
					t.Errorf("%v: fusedWino[float64](%d) = %v, want go", c.k, n, got)
				}
			}
			defer func(old bool) { winoFused = old }(winoFused)
			winoFused = false
			if got := fusedWino[float32](100); got != winoGo {
				t.Errorf("%v without winoFused: fusedWino[float32](100) = %v, want go", c.k, got)
			}
		})
	}
}
