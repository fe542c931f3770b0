package sde

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

func mustBrownian[T tensor.Float](t *testing.T, t0, t1 float64, shape []int, opt BrownianOptions) *Brownian[T] {
	t.Helper()
	b, err := NewBrownian[T](t0, t1, shape, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustW[T tensor.Float](t *testing.T, b *Brownian[T], s, u float64) []T {
	t.Helper()
	w, err := b.W(s, u)
	if err != nil {
		t.Fatal(err)
	}
	return w.Data()
}

func meanVar(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}

func toF64[T tensor.Float](x []T) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestBrownianMoments: W(s, t) over 20000 independent components has mean
// 0 and variance t − s. The standard error of the sample variance is
// (t − s)·√(2/N) = 1%, so the 5% band is five standard errors; the mean's
// band is five of its standard errors √((t − s)/N).
func TestBrownianMoments(t *testing.T) {
	const n = 20000
	b := mustBrownian[float64](t, 0, 2, []int{n}, BrownianOptions{Seed: 1})
	for _, tc := range []struct{ s, u float64 }{
		{0, 2}, {0, 1}, {0.1234, 0.77}, {1.5, 1.5 + 1e-6}, {0.3, 0.3001}, {1 / 3.0, 2 / 3.0}, {1.999, 2},
	} {
		m, v := meanVar(mustW(t, b, tc.s, tc.u))
		h := tc.u - tc.s
		if math.Abs(m) > 5*math.Sqrt(h/n) {
			t.Errorf("W(%g, %g): mean %.4g, want 0 within %.3g", tc.s, tc.u, m, 5*math.Sqrt(h/n))
		}
		if r := v / h; math.Abs(r-1) > 0.05 {
			t.Errorf("W(%g, %g): variance/(t−s) = %.4f, want 1 ± 0.05", tc.s, tc.u, r)
		}
	}
}

// TestBrownianIndependence: disjoint increments are uncorrelated (|ρ| within
// five standard errors 5/√N of 0), nested ones have the correlation of
// Brownian motion, √(|I ∩ J|² / (|I|·|J|)).
func TestBrownianIndependence(t *testing.T) {
	const n = 20000
	b := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 2})
	corr := func(x, y []float64) float64 {
		mx, vx := meanVar(x)
		my, vy := meanVar(y)
		var c float64
		for i := range x {
			c += (x[i] - mx) * (y[i] - my)
		}
		return c / float64(len(x)-1) / math.Sqrt(vx*vy)
	}
	band := 5 / math.Sqrt(n)
	for _, tc := range []struct {
		i, j [2]float64
		want float64
	}{
		{[2]float64{0, 0.3}, [2]float64{0.3, 0.7}, 0},
		{[2]float64{0.3, 0.7}, [2]float64{0.7, 1}, 0},
		{[2]float64{0, 0.25}, [2]float64{0.5, 0.75}, 0},
		{[2]float64{0.1, 0.11}, [2]float64{0.11, 0.9}, 0},
		{[2]float64{0, 1}, [2]float64{0.25, 0.5}, math.Sqrt(0.25)},
		{[2]float64{0, 0.6}, [2]float64{0.3, 0.9}, 0.3 / 0.6},
	} {
		x := mustW(t, b, tc.i[0], tc.i[1])
		y := mustW(t, b, tc.j[0], tc.j[1])
		if r := corr(x, y); math.Abs(r-tc.want) > band {
			t.Errorf("corr(W%v, W%v) = %.4f, want %.4f ± %.3f", tc.i, tc.j, r, tc.want, band)
		}
	}
}

// TestBrownianQuadraticVariation: on a grid of 1024 steps the sum of
// squared increments of each component is about t1 − t0 (its standard
// deviation is √(2/1024) of it; averaged over 64 components, 0.55%): the
// deep levels of the tree have the right scale.
func TestBrownianQuadraticVariation(t *testing.T) {
	const comps, steps = 64, 1024
	b := mustBrownian[float64](t, 0, 3, []int{comps}, BrownianOptions{Seed: 3})
	qv := make([]float64, comps)
	h := 3.0 / steps
	for k := range steps {
		for i, v := range mustW(t, b, float64(k)*h, float64(k+1)*h) {
			qv[i] += v * v
		}
	}
	m, _ := meanVar(qv)
	if math.Abs(m/3-1) > 0.03 {
		t.Errorf("mean quadratic variation %.4f, want 3 ± 3%%", m)
	}
}

func testAdditivity[T tensor.Float](t *testing.T, tol float64) {
	b := mustBrownian[T](t, -1, 2, []int{3, 50}, BrownianOptions{Seed: 4})
	for _, tc := range [][3]float64{{-1, 0.5, 2}, {0.1, 0.2, 0.30000000000000004}, {0.123, 0.456, 1.789}, {-0.5, -0.5 + 1e-7, 1}} {
		whole := toF64(mustW(t, b, tc[0], tc[2]))
		a := toF64(mustW(t, b, tc[0], tc[1]))
		c := toF64(mustW(t, b, tc[1], tc[2]))
		sum := make([]float64, len(a))
		for i := range a {
			sum[i] = a[i] + c[i]
		}
		if d := cmp.Diff(whole, sum, cmpopts.EquateApprox(0, tol)); d != "" {
			t.Errorf("W(%g, %g) ≠ W(%g, %g) + W(%g, %g) (-whole +sum):\n%s", tc[0], tc[2], tc[0], tc[1], tc[1], tc[2], d)
		}
	}
}

// TestBrownianAdditivity: W(s, u) = W(s, t) + W(t, u) to the rounding of
// the increments to T (W is of order 1 here).
func TestBrownianAdditivity(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testAdditivity[float64](t, 1e-14) })
	t.Run("float32", func(t *testing.T) { testAdditivity[float32](t, 1e-6) })
}

// TestBrownianOrderIndependence: the increments do not depend on the order
// of the queries, nor on the cache (a cache of 2 nodes evicts constantly),
// and a path read backward gives the forward path's increments bit for bit.
func TestBrownianOrderIndependence(t *testing.T) {
	times := []float64{0, 0.05, 0.1, 0.17, 0.2, 0.25, 0.3, 0.333, 0.5, 0.61, 0.75, 0.9, 0.95, 1}
	forward := mustBrownian[float32](t, 0, 1, []int{2, 3}, BrownianOptions{Seed: 5})
	var want [][]float32
	for k := 1; k < len(times); k++ {
		want = append(want, mustW(t, forward, times[k-1], times[k]))
	}
	for _, tc := range []struct {
		name  string
		cache int
		order func(n int) []int
	}{
		{"backward", 0, func(n int) []int {
			o := make([]int, n)
			for i := range o {
				o[i] = n - 1 - i
			}
			return o
		}},
		{"shuffled, cache 2", 2, func(n int) []int { return rand.New(rand.NewPCG(9, 9)).Perm(n) }},
		{"shuffled twice over, cache 3", 3, func(n int) []int {
			r := rand.New(rand.NewPCG(7, 7))
			return append(r.Perm(n), r.Perm(n)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustBrownian[float32](t, 0, 1, []int{2, 3}, BrownianOptions{Seed: 5, CacheSize: tc.cache})
			got := make([][]float32, len(want))
			for _, k := range tc.order(len(want)) {
				got[k] = mustW(t, b, times[k], times[k+1])
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("increments differ from the forward queries' (-want +got):\n%s", d)
			}
		})
	}
}

// TestBrownianSeed: the same seed gives the same path in a new Brownian;
// another seed another path.
func TestBrownianSeed(t *testing.T) {
	w := func(seed uint64) []float64 {
		return mustW(t, mustBrownian[float64](t, 0, 1, []int{8}, BrownianOptions{Seed: seed}), 0.2, 0.7)
	}
	if d := cmp.Diff(w(11), w(11)); d != "" {
		t.Errorf("seed 11 twice (-first +second):\n%s", d)
	}
	if cmp.Equal(w(11), w(12)) {
		t.Errorf("seeds 11 and 12 give the same increment %v", w(11))
	}
}

func TestBrownianErrors(t *testing.T) {
	b := mustBrownian[float64](t, 0, 1, []int{2}, BrownianOptions{})
	for _, tc := range []struct {
		s, u float64
		want error
	}{
		{0.5, 0.4, ErrReversedInterval},
		{-0.1, 0.5, ErrOutsideSpan},
		{0.5, 1.01, ErrOutsideSpan},
		{math.NaN(), 0.5, ErrOutsideSpan},
	} {
		if _, err := b.W(tc.s, tc.u); !errors.Is(err, tc.want) {
			t.Errorf("W(%g, %g): error %v, want %v", tc.s, tc.u, err, tc.want)
		}
	}
	if w := mustW(t, b, 0.3, 0.3); !cmp.Equal(w, []float64{0, 0}) {
		t.Errorf("W(0.3, 0.3) = %v, want zeros", w)
	}
	if err := b.Increment(tensor.New[float64](3), 0, 1); err == nil {
		t.Error("Increment into a tensor of 3 elements for a path of 2: no error")
	}
	for _, tc := range []struct {
		t0, t1 float64
		shape  []int
		opt    BrownianOptions
	}{
		{1, 1, []int{2}, BrownianOptions{}},
		{0, math.Inf(1), []int{2}, BrownianOptions{}},
		{0, 1, []int{-2}, BrownianOptions{}},
		{0, 1, []int{2}, BrownianOptions{Tol: -1}},
		{0, 1, []int{2}, BrownianOptions{CacheSize: -1}},
	} {
		if _, err := NewBrownian[float64](tc.t0, tc.t1, tc.shape, tc.opt); err == nil {
			t.Errorf("NewBrownian(%g, %g, %v, %+v): no error", tc.t0, tc.t1, tc.shape, tc.opt)
		}
	}
}

func mustArea(t *testing.T, b *Brownian[float64], s, u float64) (w, h []float64) {
	t.Helper()
	dw, dh := tensor.New[float64](b.Shape()...), tensor.New[float64](b.Shape()...)
	if err := b.IncrementArea(dw, dh, s, u); err != nil {
		t.Fatal(err)
	}
	return dw.Data(), dh.Data()
}

// TestLevyAreaMoments: the space-time Lévy area H(s, t) over 20000
// components has mean 0, variance (t − s)/12 (±5%, five standard errors)
// and no correlation with W(s, t) (|ρ| ≤ 5/√N); IncrementArea's W is
// Increment's.
func TestLevyAreaMoments(t *testing.T) {
	const n = 20000
	b := mustBrownian[float64](t, 0, 2, []int{n}, BrownianOptions{Seed: 21})
	for _, tc := range []struct{ s, u float64 }{{0, 2}, {0, 1}, {0.5, 0.75}, {0.1234, 0.77}, {1.3, 1.3001}} {
		w, a := mustArea(t, b, tc.s, tc.u)
		h := tc.u - tc.s
		m, v := meanVar(a)
		if math.Abs(m) > 5*math.Sqrt(h/12/n) || math.Abs(v/(h/12)-1) > 0.05 {
			t.Errorf("H(%g, %g): mean %.3g, variance·12/h %.4f; want 0 and 1 ± 0.05", tc.s, tc.u, m, v/(h/12))
		}
		var c float64
		for i := range a {
			c += a[i] * w[i]
		}
		if rho := c / n / math.Sqrt(v*h); math.Abs(rho) > 5/math.Sqrt(n) {
			t.Errorf("corr(H, W) on [%g, %g] = %.4f, want 0 ± %.3f", tc.s, tc.u, rho, 5/math.Sqrt(n))
		}
		if d := cmp.Diff(mustW(t, b, tc.s, tc.u), w); d != "" {
			t.Errorf("IncrementArea's W(%g, %g) is not Increment's:\n%s", tc.s, tc.u, d)
		}
	}
}

// TestLevyAreaIsTheIntegral: H(s, t) is (1/h)∫W(s, u)du − W(s, t)/2 of the
// path that Increment gives: the trapezoidal rule on 4096 subintervals of
// W read from the same tree agrees within 1e-3 (its own error is about
// 1e-4 of H's scale here), and the integrals over two halves add up as
// ∫ₛᵘ = ∫ₛᵗ + (u − t)W(s, t) + ∫ₜᵘ to rounding.
func TestLevyAreaIsTheIntegral(t *testing.T) {
	const comps, grid = 6, 4096
	b := mustBrownian[float64](t, 0, 1, []int{comps}, BrownianOptions{Seed: 22})
	for _, iv := range [][2]float64{{0.25, 0.75}, {0.1, 0.6}, {0, 1}} {
		s, u := iv[0], iv[1]
		h := u - s
		integral := make([]float64, comps)
		prev := make([]float64, comps)
		for k := 1; k <= grid; k++ {
			cur := mustW(t, b, s, s+h*float64(k)/grid)
			for i := range integral {
				integral[i] += (prev[i] + cur[i]) / 2 * h / grid
			}
			prev = cur
		}
		w, a := mustArea(t, b, s, u)
		for i := range a {
			if want := integral[i]/h - w[i]/2; math.Abs(a[i]-want) > 1e-3 {
				t.Errorf("H(%g, %g)[%d] = %.6f, the trapezoidal rule gives %.6f", s, u, i, a[i], want)
			}
		}
	}
	for _, tc := range [][3]float64{{0, 0.5, 1}, {0.1, 0.37, 0.9}} {
		s, m, u := tc[0], tc[1], tc[2]
		wl, al := mustArea(t, b, s, m)
		wr, ar := mustArea(t, b, m, u)
		w, a := mustArea(t, b, s, u)
		for i := range a {
			whole := (u - s) * (a[i] + w[i]/2)
			parts := (m-s)*(al[i]+wl[i]/2) + (u-m)*wl[i] + (u-m)*(ar[i]+wr[i]/2)
			if math.Abs(whole-parts) > 1e-12 {
				t.Errorf("∫W over [%g, %g] = %.15g, over [%g, %g] and [%g, %g] %.15g", s, u, whole, s, m, m, u, parts)
			}
		}
	}
}

// TestBrownianNoArea: a tree without Lévy areas is a Brownian motion too:
// increments of variance t − s (±5%), disjoint ones uncorrelated (within
// 5/√N), additive to rounding, the same whatever the order of the queries
// and the cache; IncrementArea and sri2 on it are errors.
func TestBrownianNoArea(t *testing.T) {
	const n = 20000
	b := mustBrownian[float64](t, 0, 2, []int{n}, BrownianOptions{Seed: 1, NoArea: true})
	for _, tc := range []struct{ s, u float64 }{{0, 2}, {0, 1}, {0.1234, 0.77}, {0.3, 0.3001}, {1 / 3.0, 2 / 3.0}, {1.999, 2}} {
		_, v := meanVar(mustW(t, b, tc.s, tc.u))
		if r := v / (tc.u - tc.s); math.Abs(r-1) > 0.05 {
			t.Errorf("W(%g, %g): variance/(t−s) = %.4f, want 1 ± 0.05", tc.s, tc.u, r)
		}
	}
	x, y := mustW(t, b, 0.2, 0.7), mustW(t, b, 0.7, 1.3)
	var sxy, sxx, syy float64
	for i := range x {
		sxy, sxx, syy = sxy+x[i]*y[i], sxx+x[i]*x[i], syy+y[i]*y[i]
	}
	if rho := sxy / math.Sqrt(sxx*syy); math.Abs(rho) > 5/math.Sqrt(n) {
		t.Errorf("disjoint increments: correlation %.4f, want 0 within %.3f", rho, 5/math.Sqrt(n))
	}
	whole, a, c := mustW(t, b, 0.1, 1.9), mustW(t, b, 0.1, 0.55), mustW(t, b, 0.55, 1.9)
	for i := range whole {
		if d := math.Abs(whole[i] - a[i] - c[i]); d > 1e-14 {
			t.Fatalf("W(0.1, 1.9)[%d] − W(0.1, 0.55) − W(0.55, 1.9) = %.3g", i, d)
		}
	}
	times := []float64{0, 0.05, 0.25, 0.333, 0.5, 0.61, 0.9, 1}
	read := func(cache int, order []int) [][]float64 {
		p := mustBrownian[float64](t, 0, 1, []int{2, 3}, BrownianOptions{Seed: 5, NoArea: true, CacheSize: cache})
		out := make([][]float64, len(times)-1)
		for _, k := range order {
			out[k] = mustW(t, p, times[k], times[k+1])
		}
		return out
	}
	if d := cmp.Diff(read(0, []int{0, 1, 2, 3, 4, 5, 6}), read(2, []int{6, 2, 4, 0, 5, 1, 3})); d != "" {
		t.Errorf("increments depend on the order of the queries (-in order +shuffled, cache 2):\n%s", d)
	}
	p := mustBrownian[float64](t, 0, 1, []int{4}, BrownianOptions{Seed: 5, NoArea: true})
	if err := p.IncrementArea(tensor.New[float64](4), tensor.New[float64](4), 0, 0.5); err == nil || !strings.Contains(err.Error(), "NoArea") {
		t.Errorf("IncrementArea: error %v, want one naming NoArea", err)
	}
	tp := autograd.NewTape(engine64())
	if _, _, err := Solve[float64](tp, gbmDiag.sde(), tp.Const(tensor.Full(1.0, 4)), []float64{0, 1}, p, Options{Method: SRI2, Step: 0.25}); err == nil || !strings.Contains(err.Error(), "NoArea") {
		t.Errorf("sri2 on a path without areas: error %v, want one naming NoArea", err)
	}
}

// TestBrownianShortIntervalVariance: over short intervals deep in the tree
// (h = 1e-8 … 1e-12 of the span, tree depth 27–40 and beyond), W(s, s+h)
// over 20000 independent motions has variance h and the space-time Lévy
// area H(s, s+h) variance h/12 (±5%, five standard errors of a sample
// variance), uncorrelated (|ρ| ≤ 5/√N), both where the interval lies in
// one half of the root (s = 0.9) and where it straddles the root's
// midpoint (s = 0.5 − h/3, put together from both sides); the tree without
// areas has the same variance of W. The tree used to hold W and ∫W from
// t0 at each midpoint and took a node's area from a difference of those
// integrals over h, which float64 cancellation spoilt at depth ≳ 30: the
// variance of W over h came out 1.29 times too large at 1e-9, 2.9 at 1e-10
// and 25 at 1e-11, and with the finer Tol used here (so that times 1e-12
// apart are read 1e-15 from where they are, not up to 2⁻⁴⁰ ≈ 9e-13 as by
// default) the errors reached ×1e4 at 1e-8. Then, on intervals 2⁻⁴⁰ long
// at nodes of the tree (so that the lengths are exact), the increments and
// the integrals ∫W of two halves add up to the whole's to a relative 1e-9
// of their scale (√h and h√h).
func TestBrownianShortIntervalVariance(t *testing.T) {
	const n = 20000
	hs := []float64{1e-8, 1e-9, 1e-10, 1e-11, 1e-12}
	b := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 48, Tol: 1e-15})
	plain := mustBrownian[float64](t, 0, 1, []int{n}, BrownianOptions{Seed: 48, Tol: 1e-15, NoArea: true})
	ratios, corrs := map[string]float64{}, map[string]float64{}
	wantRatios, wantCorrs := map[string]float64{}, map[string]float64{}
	for _, h := range hs {
		for _, at := range []struct {
			name string
			s    float64
		}{{"s=0.9", 0.9}, {"s=0.5-h/3", 0.5 - h/3}} {
			s, key := at.s, fmt.Sprintf("%s h=%g", at.name, h)
			w, a := mustArea(t, b, s, s+h)
			_, vw := meanVar(w)
			_, va := meanVar(a)
			_, vp := meanVar(mustW(t, plain, s, s+h))
			ratios["Var W/h "+key] = vw / h
			ratios["Var H/(h/12) "+key] = va / (h / 12)
			ratios["NoArea Var W/h "+key] = vp / h
			var c float64
			for i := range w {
				c += w[i] * a[i]
			}
			corrs["corr(W, H) "+key] = c / n / math.Sqrt(vw*va)
		}
	}
	for k := range ratios {
		wantRatios[k] = 1
	}
	for k := range corrs {
		wantCorrs[k] = 0
	}
	if d := cmp.Diff(wantRatios, ratios, cmpopts.EquateApprox(0.05, 0)); d != "" {
		t.Errorf("variances over short intervals, as fractions of h and h/12 (-want +got, ±5%%):\n%s", d)
	}
	if d := cmp.Diff(wantCorrs, corrs, cmpopts.EquateApprox(0, 5/math.Sqrt(n))); d != "" {
		t.Errorf("correlations of W and H over short intervals (-want +got, ±%.3f):\n%s", 5/math.Sqrt(n), d)
	}
	if t.Failed() {
		t.Logf("ratios %v", ratios)
	}

	h := 0x1p-40
	for _, s := range []float64{math.Round(0.9/h) * h, 0.5 - 3*h} {
		m, u := s+0x1p-42*3, s+h
		w, a := mustArea(t, b, s, u)
		wl, al := mustArea(t, b, s, m)
		wr, ar := mustArea(t, b, m, u)
		worstW, worstI := 0.0, 0.0
		for i := range w {
			worstW = math.Max(worstW, math.Abs(w[i]-wl[i]-wr[i])/math.Sqrt(h))
			whole := h * (a[i] + w[i]/2)
			parts := (m-s)*(al[i]+wl[i]/2) + (u-m)*wl[i] + (u-m)*(ar[i]+wr[i]/2)
			worstI = math.Max(worstI, math.Abs(whole-parts)/(h*math.Sqrt(h)))
		}
		if worstW > 1e-9 || worstI > 1e-9 {
			t.Errorf("[%.17g, +2⁻⁴⁰] split at 3·2⁻⁴²: W adds up to %.2g of √h, ∫W to %.2g of h√h; want 1e-9", s, worstW, worstI)
		}
	}
}
