package integrate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/tensor"
)

// TestRowsNorm: with ErrorRows the norm is the largest over the rows of
// the RMS of each row's elements, row r being the r-th run of ErrorRowLen
// elements of every segment; checked against the RMS formed element by
// element, for each row the largest in turn, with a NaN, and with terms
// whose squares overflow.
func TestRowsNorm(t *testing.T) {
	const rows, w, segs = 3, 2, 2
	n := rows * w * segs
	naive := func(x []float64) float64 {
		var m float64
		for r := range rows {
			var sum float64
			for p := range segs {
				for j := range w {
					v := x[(p*rows+r)*w+j] / 1e150 // scaled: the test's own sums must not overflow
					sum += v * v
				}
			}
			q := 1e150 * math.Sqrt(sum/float64(segs*w))
			if math.IsNaN(q) {
				return q
			}
			m = math.Max(m, q)
		}
		return m
	}
	base := func(seed float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Sin(seed + 1.3*float64(i))
		}
		return x
	}
	cases := map[string][]float64{"plain": base(0.4)}
	for r := range rows {
		x := base(0.9)
		x[(segs-1)*rows*w+r*w+1] = 7 // row r the largest, in its last segment
		cases["row "+string(rune('0'+r))+" largest"] = x
	}
	nan := base(0.2)
	nan[rows*w+1] = math.NaN()
	cases["NaN"] = nan
	huge := base(0.7)
	huge[w] = 3e200
	huge[rows*w+w] = -2e200
	cases["overflowing squares"] = huge
	for name, x := range cases {
		s := &Solver[float64]{n: n, opt: Options{ErrorNorm: ErrorNorm{ErrorRows: rows, ErrorRowLen: w}}}
		got := s.mixed(func(lo, hi int) float64 {
			return rms(hi-lo, func(i int) float64 { return x[lo+i] })
		})
		want := naive(x)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-14, 0), cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("%s: norm (-element by element +mixed):\n%s", name, diff)
		}
	}
}

// TestErrorRowsOptions: ErrorRows needs a positive ErrorRowLen, no
// ErrorLen or ErrorParts, and a state its rows tile; each error names
// what was wrong.
func TestErrorRowsOptions(t *testing.T) {
	f := func(_ float64, y, dy []float64) error { copy(dy, y); return nil }
	for _, c := range []struct {
		opt  Options
		n    int
		want string // "" for no error
	}{
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3}}, 12, ""},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3}}, 6, ""},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 1, ErrorRowLen: 1}}, 1, ""},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: -1, ErrorRowLen: 3}}, 6, "ErrorRows -1 and ErrorRowLen 3"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2}}, 6, "ErrorRows 2 and ErrorRowLen 0"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: -1}}, 6, "ErrorRows 2 and ErrorRowLen -1"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3, ErrorLen: 4}}, 6, "ErrorRows 2 with ErrorLen 4"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3, ErrorParts: []int{3}}}, 6, "ErrorParts [3]"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3}}, 9, "do not tile a state of 9 elements (not a multiple of 6)"},
		{Options{ErrorNorm: ErrorNorm{ErrorRows: 2, ErrorRowLen: 3}}, 4, "do not tile a state of 4 elements"},
		{Options{ErrorNorm: ErrorNorm{ErrorRowLen: 3}}, 4, ""}, // no rows: ErrorRowLen unread
	} {
		s, err := NewSolver[float64](c.opt)
		if err == nil {
			y := make([]float64, c.n)
			for i := range y {
				y[i] = 1
			}
			_, err = s.Solve(f, y, []float64{0, 0.1}, [][]float64{make([]float64, c.n), make([]float64, c.n)})
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v on %d elements: %v", c.opt, c.n, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v on %d elements: error %v, want one saying %q", c.opt, c.n, err, c.want)
		}
	}
}

// decayBatch is y' = −k·y for a batch of rows, each row two segments
// (as a family's parts) of w elements, row r's rate k[r] in both.
func decayBatch(k []float64, w int) func(float64, []float64, []float64) error {
	rows := len(k)
	return func(_ float64, y, dy []float64) error {
		for i := range y {
			r := (i / w) % rows
			dy[i] = -k[r] * y[i]
		}
		return nil
	}
}

// TestErrorRowsAlone: a fast-decaying row batched with 63 still ones
// gets, with ErrorRows, within twice the error it gets alone (its steps
// controlled by its own error), where the whole state's norm lets it
// drift several times further (its error diluted among the still rows);
// the still rows stay exact either way.
func TestErrorRowsAlone(t *testing.T) {
	const w, t1 = 2, 3.0
	solve := func(k []float64, rowsNorm bool) ([]float64, Stats) {
		opt := Options{RTol: 1e-5, ATol: 1e-7}
		if rowsNorm {
			opt.ErrorRows, opt.ErrorRowLen = len(k), w
		}
		s, err := NewSolver[float64](opt)
		if err != nil {
			t.Fatal(err)
		}
		n := 2 * len(k) * w
		y0 := make([]float64, n)
		for i := range y0 {
			y0[i] = 1
		}
		out := make([]float64, n)
		st, err := s.Solve(decayBatch(k, w), y0, []float64{0, t1}, [][]float64{make([]float64, n), out})
		if err != nil {
			t.Fatal(err)
		}
		return out, st
	}
	errOf := func(k float64, y float64) float64 { return math.Abs(y - math.Exp(-k*t1)) }
	const fast = 4.0
	alone, _ := solve([]float64{fast}, true)
	aloneErr := errOf(fast, alone[0])
	batch := make([]float64, 64)
	batch[17] = fast
	for _, c := range []struct {
		rowsNorm bool
		within   bool // the fast row's error within 2× alone's
	}{{true, true}, {false, false}} {
		y, st := solve(batch, c.rowsNorm)
		worst := 0.0
		for i, v := range y {
			r := (i / w) % len(batch)
			if r != 17 && v != 1 {
				t.Errorf("rows norm %v: still row %d moved to %g", c.rowsNorm, r, v)
			}
			if r == 17 {
				worst = math.Max(worst, errOf(fast, v))
			}
		}
		t.Logf("rows norm %v: fast row's error %.3g, alone %.3g, %d steps", c.rowsNorm, worst, aloneErr, st.Accepted)
		if got := worst <= 2*aloneErr; got != c.within {
			t.Errorf("rows norm %v: fast row's error %.3g, alone %.3g (%d steps): within 2× is %v, want %v", c.rowsNorm, worst, aloneErr, st.Accepted, got, c.within)
		}
	}
}

// TestRowsErrorRatio: errorRatio's one-pass norm of ErrorRows agrees with
// the row-by-row norm (mixed over errorRatioRange) on random stages, with
// rows that do not divide the error's blocks; it gives way to the
// row-by-row norm where squares overflow or underflow in T or the
// tolerances underflow T, and is NaN when an error term is.
func TestRowsErrorRatio(t *testing.T) {
	t.Run("float64", testRowsErrorRatio[float64])
	t.Run("float32", testRowsErrorRatio[float32])
}

func testRowsErrorRatio[T tensor.Float](t *testing.T) {
	const rows, w, segs, h = 5, 7, 9, 0.3
	n := rows * w * segs // 315: the rows cross the 256-element blocks
	tol := 1e-12
	if _, ok := any(T(0)).(float32); ok {
		tol = 1e-5
	}
	setup := func(atol, rtol float64, seed uint64) *Solver[T] {
		s, err := NewSolver[T](Options{RTol: rtol, ATol: atol, ErrorNorm: ErrorNorm{ErrorRows: rows, ErrorRowLen: w}})
		if err != nil {
			t.Fatal(err)
		}
		f := func(_ float64, y, dy []T) error { copy(dy, y); return nil }
		y0 := make([]T, n)
		if _, err := s.Solve(f, y0, []float64{0, 0.01}, [][]T{make([]T, n), make([]T, n)}); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		for _, buf := range append([][]T{s.y, s.y1}, s.k...) {
			for i := range buf[:n] {
				buf[i] = T(rng.NormFloat64() * math.Exp(2*rng.NormFloat64()))
			}
		}
		return s
	}
	rowByRow := func(s *Solver[T]) float64 {
		return s.mixed(func(lo, hi int) float64 { return s.errorRatioRange(h, lo, hi) })
	}
	f32 := false
	if _, ok := any(T(0)).(float32); ok {
		f32 = true
	}
	tiny, huge := 1e-300, 1e300 // the squares of err/tolerance overflow, underflow
	if f32 {
		tiny, huge = 1e-40, 1e30
	}
	for _, c := range []struct {
		name       string
		atol, rtol float64
		onePass    bool // the one-pass norm answers
	}{
		{"plain", 1e-6, 1e-5, true},
		{"loose", 1, 1, true},
		{"squares overflow", tiny, tiny, false},
		{"squares underflow", huge, huge, false},
		{"rtol 1e-320", 1, 1e-320, !f32}, // 0 in float32
		{"atol 1e-50", 1e-50, 1, !f32},
	} {
		for seed := range uint64(3) {
			s := setup(c.atol, c.rtol, seed)
			want := rowByRow(s)
			r, ok := s.rowsErrorRatio(h)
			if ok != c.onePass {
				t.Errorf("%s, seed %d: one-pass norm answered %v, want %v", c.name, seed, ok, c.onePass)
			}
			got := s.errorRatio(s.bufs(), h)
			if !cmp.Equal(want, got, cmpopts.EquateApprox(tol, 0)) {
				t.Errorf("%s, seed %d: errorRatio %g, row by row %g (one pass %g, %v)", c.name, seed, got, want, r, ok)
			}
			if ok && got != r {
				t.Errorf("%s, seed %d: errorRatio %g, not the one-pass norm %g", c.name, seed, got, r)
			}
		}
	}
	s := setup(1e-6, 1e-5, 7)
	if allocs := testing.AllocsPerRun(10, func() { s.rowsErrorRatio(h) }); allocs != 0 {
		t.Errorf("the one-pass norm allocates %g times a call, want 0 (its sums are kept)", allocs)
	}
	s.k[0][200] = T(math.NaN())
	if r, ok := s.rowsErrorRatio(h); !ok || !math.IsNaN(r) {
		t.Errorf("a NaN error term: one-pass norm %g, %v; want NaN, true", r, ok)
	}
}

// TestRowsErrorRatio853: a tableau with a second error estimate (dop853)
// takes the row-by-row norm of its combined estimate, not the one-pass
// norm of E alone.
func TestRowsErrorRatio853(t *testing.T) {
	const rows, w, h = 3, 4, 0.2
	n := 2 * rows * w
	s, err := NewSolver[float64](Options{Method: "dop853", RTol: 1e-6, ATol: 1e-6, ErrorNorm: ErrorNorm{ErrorRows: rows, ErrorRowLen: w}})
	if err != nil {
		t.Fatal(err)
	}
	f := func(_ float64, y, dy []float64) error { copy(dy, y); return nil }
	if _, err := s.Solve(f, make([]float64, n), []float64{0, 0.01}, [][]float64{make([]float64, n), make([]float64, n)}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	for _, buf := range append([][]float64{s.y, s.y1}, s.k...) {
		for i := range buf[:n] {
			buf[i] = rng.NormFloat64()
		}
	}
	want := s.mixed(func(lo, hi int) float64 { return s.errorRatioRange(h, lo, hi) })
	onePass, _ := s.rowsErrorRatio(h)
	if got := s.errorRatio(s.bufs(), h); got != want || got == onePass {
		t.Errorf("dop853: errorRatio %g, want the row-by-row %g (the one-pass norm of E alone is %g)", got, want, onePass)
	}
}

// rowsErrorRatio is the one-pass ErrorRows norm of the step in the
// solver's buffers.
func (s *Solver[T]) rowsErrorRatio(h float64) (float64, bool) {
	return s.rowsErrNorm(h, s.tb.E, s.k, s.y, s.y1)
}

// errorRatioRange is the error ratio's RMS over [lo, hi) of the step in
// the solver's buffers.
func (s *Solver[T]) errorRatioRange(h float64, lo, hi int) float64 {
	if s.tb.E3 != nil {
		return s.errorRatio853(s.bufs(), h, lo, hi)
	}
	return s.scaledRange(h, s.tb.E, s.k, s.y, s.y1, lo, hi)
}

// TestErrorRatioScaledFallback: where the squares of err/tolerance
// overflow or underflow float32, errorRatio takes the scaled float64
// norm: the RMS of the scaled error computed in float64 here, finite and
// not zero.
func TestErrorRatioScaledFallback(t *testing.T) {
	const n, h = 300, 0.1
	for _, c := range []struct {
		name       string
		atol, rtol float64
	}{
		{"squares overflow", 1e-30, 1e-30},
		{"squares underflow", 1e30, 1e30},
	} {
		s, err := NewSolver[float32](Options{RTol: c.rtol, ATol: c.atol})
		if err != nil {
			t.Fatal(err)
		}
		s.ensure(n)
		rng := rand.New(rand.NewPCG(3, 1))
		for _, buf := range append([][]float32{s.y, s.y1}, s.k...) {
			for i := range buf {
				buf[i] = float32(rng.NormFloat64())
			}
		}
		var sum float64
		for i := range n {
			var e float64
			for j, k := range s.k {
				e += h * s.tb.E[j] * float64(k[i])
			}
			sc := c.atol + c.rtol*math.Max(math.Abs(float64(s.y[i])), math.Abs(float64(s.y1[i])))
			sum += (e / sc) * (e / sc)
		}
		want := math.Sqrt(sum / n)
		if got := s.errorRatio(s.bufs(), h); !cmp.Equal(got, want, cmpopts.EquateApprox(1e-5, 0)) {
			t.Errorf("%s: errorRatio %g, want %g", c.name, got, want)
		}
	}
}

// TestErrorRatioSumsInT: where no square overflows or underflows, a
// float32 step's error ratio is the root of the block's sum of squares
// formed in float32 (sumSquares of the scaled estimate), to the bit.
func TestErrorRatioSumsInT(t *testing.T) {
	const n, h = 200, 0.1
	s, err := NewSolver[float32](Options{RTol: 1e-3, ATol: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	s.ensure(n)
	rng := rand.New(rand.NewPCG(9, 2))
	for _, buf := range append([][]float32{s.y, s.y1}, s.k...) {
		for i := range buf {
			buf[i] = float32(rng.NormFloat64())
		}
	}
	e := make([]float32, n)
	estimate(e, h, s.tb.E, s.k, 0)
	scaleError(e, s.y, s.y1, float32(1e-4), float32(1e-3))
	want := math.Sqrt(float64(sumSquares(e)) / n)
	if got := s.errorRatio(s.bufs(), h); got != want {
		t.Errorf("errorRatio %v, want %v (the float32 sum of squares)", got, want)
	}
}

// TestErrorRatio853: dop853's error ratio is Hairer's
// |h|·err5²/√(err5² + 0.01·err3²), err5 and err3 the RMS norms of the two
// scaled estimates (Σ E·k and Σ E3·k), here formed in float64 from the
// stages.
func TestErrorRatio853(t *testing.T) {
	const n, h, atol, rtol = 7, 0.3, 1e-6, 1e-4
	for _, tc := range []struct {
		name  string
		parts []int // nil: the whole state, one part
	}{
		{"whole state", nil},
		// The mixed norm: the largest of the parts' ratios, a part past
		// the first element normalised by its own length.
		{"parts 2 and 5", []int{2, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSolver[float64](Options{Method: "dop853", RTol: rtol, ATol: atol, ErrorNorm: ErrorNorm{ErrorParts: tc.parts}})
			if err != nil {
				t.Fatal(err)
			}
			s.ensure(n)
			rng := rand.New(rand.NewPCG(4, 4))
			for _, buf := range append([][]float64{s.y, s.y1}, s.k...) {
				for i := range buf {
					buf[i] = rng.NormFloat64()
				}
			}
			if tc.parts != nil {
				// The first part's error small, so that the later part's
				// ratio is the largest.
				for _, k := range s.k {
					for i := range tc.parts[0] {
						k[i] *= 1e-3
					}
				}
			}
			// ratio is Hairer's |h|·err5²/√(err5² + 0.01·err3²) of the RMS
			// norms over elements [lo, hi).
			ratio := func(lo, hi int) float64 {
				var sq5, sq3 float64
				for i := lo; i < hi; i++ {
					var e5, e3 float64
					for j, k := range s.k {
						e5 += s.tb.E[j] * k[i]
						e3 += s.tb.E3[j] * k[i]
					}
					sc := atol + rtol*math.Max(math.Abs(s.y[i]), math.Abs(s.y1[i]))
					sq5 += (e5 / sc) * (e5 / sc)
					sq3 += (e3 / sc) * (e3 / sc)
				}
				m := float64(hi - lo)
				err5, err3 := math.Sqrt(sq5/m), math.Sqrt(sq3/m)
				return h * err5 * err5 / math.Sqrt(err5*err5+0.01*err3*err3)
			}
			want := ratio(0, n)
			if tc.parts != nil {
				want = 0
				lo := 0
				for _, l := range tc.parts {
					want = math.Max(want, ratio(lo, lo+l))
					lo += l
				}
			}
			if got := s.errorRatio(s.bufs(), h); !cmp.Equal(got, want, cmpopts.EquateApprox(1e-12, 0)) {
				t.Errorf("errorRatio %g, want %g", got, want)
			}
		})
	}
}

// TestErrorRatioRTolUnderflow: an RTol that is 0 in float32 takes the
// float64 norm (its terms scaled in float64 with the RTol given), not
// float32 sums with no relative tolerance.
func TestErrorRatioRTolUnderflow(t *testing.T) {
	const n, h, atol, rtol = 200, 0.1, 1e-4, 1e-50
	s, err := NewSolver[float32](Options{RTol: rtol, ATol: atol})
	if err != nil {
		t.Fatal(err)
	}
	s.ensure(n)
	rng := rand.New(rand.NewPCG(5, 3))
	for _, buf := range append([][]float32{s.y, s.y1}, s.k...) {
		for i := range buf {
			buf[i] = float32(rng.NormFloat64())
		}
	}
	e := make([]float32, n)
	estimate(e, h, s.tb.E, s.k, 0)
	var sum float64
	for i, v := range e {
		q := float64(v) / (atol + rtol*math.Max(math.Abs(float64(s.y[i])), math.Abs(float64(s.y1[i]))))
		sum += q * q
	}
	want := math.Sqrt(sum / n)
	if got := s.errorRatio(s.bufs(), h); !cmp.Equal(got, want, cmpopts.EquateApprox(1e-12, 0)) {
		t.Errorf("errorRatio %v, want %v (the float64 norm)", got, want)
	}
}
