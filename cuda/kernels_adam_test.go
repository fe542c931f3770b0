package cuda

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// adamScaleRef is s(v) and s′(v) as odeblock's scaleDerivInto forms them
// (√ correctly rounded; softplus and σ here from the float64 functions,
// rounded to T).
func adamScaleRef[T tensor.Float](v, eps T, sp bool) (s, ds T) {
	if sp {
		r := T(math.Sqrt(float64(T(tensor.SoftplusOf(float64(v))))))
		ds = T(tensor.SigmoidOf(float64(v)))
		if r > 0 {
			ds *= 0.5 / r
		} else {
			ds = 0
		}
		return r + eps, ds
	}
	s = T(math.Sqrt(float64(v + eps)))
	return s, 1 / (2 * s)
}

// adamOut is one output of the reference with the size of its terms, for
// a tolerance where s differs by its ulps.
type adamOut[T tensor.Float] struct {
	v, mag T
	useS   bool // depends on s or s′
}

// adamRef is odeblock's loops (adamRHS, adamRHSBwdLoop, adamWork.band)
// in T, each operation rounded (the conversions forbid fusing): per
// element the outputs of the three kernels, and the sums of r1's and r2's
// gradients over blocks of 64 summed in T, the blocks added in float64 in
// order, with Σ|block sums| for their tolerance.
type adamRef[T tensor.Float] struct {
	fwd, bwd, band         [][]adamOut[T] // [output][i]
	bwdSums, bandSums, abs [2]float64
	bandAbs                [2]float64
}

func newAdamRef[T tensor.Float](p AdamParams[T], g, m, v, ch, cm, cv, ah, am, av []T) *adamRef[T] {
	n := len(g)
	ta1, ta2 := T(p.A1), T(p.A2)
	r := &adamRef[T]{fwd: make([][]adamOut[T], 3), bwd: make([][]adamOut[T], 3), band: make([][]adamOut[T], 5)}
	abs := func(x T) T { return T(math.Abs(float64(x))) }
	var b1, b2, c1, c2 T
	for i := range n {
		gi, mi, vi := g[i], m[i], v[i]
		s, ds := adamScaleRef(vi, p.Eps, p.Scale == AdamScaleSoftplus)
		inv := 1 / s
		sq := T(gi * gi)
		r.fwd[0] = append(r.fwd[0], adamOut[T]{-mi / s, abs(mi / s), true})
		r.fwd[1] = append(r.fwd[1], adamOut[T]{ta1 * (-gi - mi), 0, false})
		r.fwd[2] = append(r.fwd[2], adamOut[T]{ta2 * (sq - vi), 0, false})
		chi, cmi, cvi := ch[i], cm[i], cv[i]
		p1, p2 := T(-ta1*cmi), T(T(T(2*ta2)*gi)*cvi)
		r.bwd[0] = append(r.bwd[0], adamOut[T]{p1 + p2, 0, false})
		p1, p2 = T(-chi*inv), T(ta1*cmi)
		r.bwd[1] = append(r.bwd[1], adamOut[T]{p1 - p2, abs(p1) + abs(p2), true})
		p1, p2 = T(T(T(T(chi*mi)*ds)*inv)*inv), T(ta2*cvi)
		r.bwd[2] = append(r.bwd[2], adamOut[T]{p1 - p2, abs(p1) + abs(p2), true})
		ahi, ami, avi := ah[i], am[i], av[i]
		r.band[0] = append(r.band[0], adamOut[T]{-mi * inv, abs(mi * inv), true})
		r.band[1] = r.fwd[1]
		r.band[2] = r.fwd[2]
		p1, p2 = T(ahi*inv), T(ta1*ami)
		r.band[3] = append(r.band[3], adamOut[T]{p1 + p2, abs(p1) + abs(p2), true})
		p1, p2 = T(T(T(T(-ahi*mi)*ds)*inv)*inv), T(ta2*avi)
		r.band[4] = append(r.band[4], adamOut[T]{p1 + p2, abs(p1) + abs(p2), true})
		b1 += T(cmi * (-gi - mi))
		b2 += T(cvi * (sq - vi))
		c1 += T(ami * (gi + mi))
		c2 += T(avi * (sq - vi))
		if i%64 == 63 || i == n-1 {
			for j, b := range []T{b1, b2} {
				r.bwdSums[j] += float64(b)
				r.abs[j] += math.Abs(float64(b))
			}
			for j, b := range []T{c1, c2} {
				r.bandSums[j] += float64(b)
				r.bandAbs[j] += math.Abs(float64(b))
			}
			b1, b2, c1, c2 = 0, 0, 0, 0
		}
	}
	return r
}

// adamClose reports whether got is the reference's output: the same
// value, or where s is CUDA's softplus's (not correctly rounded), within
// 8 ulps of T of the size of the output's terms.
func adamClose[T tensor.Float](got T, o adamOut[T], sp bool) bool {
	if same(got, o.v) {
		return true
	}
	if !sp || !o.useS || isNaN(got) || isNaN(o.v) {
		return false
	}
	return math.Abs(float64(got)-float64(o.v)) <= 8*ulp(o.mag)+8*ulp(o.v)
}

// TestAdamKernels: AdamRHS, AdamRHSBackward and AdamBand against
// odeblock's CPU loops (adamRef) on random and edge values (NaN, ±Inf, ±0
// in every input, v negative) of every length: with AdamScaleSqrt every
// elementwise output to the bit; with AdamScaleSoftplus those free of s
// to the bit, the others within 8 ulps of their terms; the gradients of r1
// and r2 within the float64 rounding of the blocks' sums (their 64-element
// sums in T as the CPU's) and one rounding to T, the same bits on a second
// run; misuse is an error.
func TestAdamKernels(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testAdamKernels[float32](t, k) }, func(t *testing.T) { testAdamKernels[float64](t, k) })
}

func testAdamKernels[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range lengths {
		in := make([][]T, 9) // g, m, v, ch, cm, cv, ah, am, av
		for j := range in {
			in[j] = values[T](r, n)
			r.Shuffle(n, func(a, b int) { in[j][a], in[j][b] = in[j][b], in[j][a] })
		}
		for i := range in[2] { // v mostly positive, as m² is
			if i%16 != 0 {
				in[2][i] = T(math.Abs(float64(in[2][i])))
			}
		}
		bufs := make([]Buffer[T], 9)
		for j := range in {
			bufs[j] = toDevice(t, k, in[j])
		}
		g, m, v, ch, cm, cv, ah, am, av := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7], bufs[8]
		out := func(c int) []Buffer[T] {
			o := make([]Buffer[T], c)
			for j := range o {
				o[j] = toDevice(t, k, make([]T, n))
			}
			return o
		}
		for _, scale := range []AdamScale{AdamScaleSqrt, AdamScaleSoftplus} {
			p := AdamParams[T]{A1: tensor.SigmoidOf(-5), A2: tensor.SigmoidOf(5), Eps: 1e-8, Scale: scale}
			if n == 257 {
				p.A1, p.A2 = tensor.SigmoidOf(0.3), tensor.SigmoidOf(-2)
			}
			sp := scale == AdamScaleSoftplus
			ref := newAdamRef(p, in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8])
			check := func(what string, got []Buffer[T], want [][]adamOut[T]) {
				t.Helper()
				for j := range want {
					for i, v := range fromDevice(t, k, got[j]) {
						if !adamClose(v, want[j][i], sp) {
							t.Fatalf("n=%d %v: %s output %d [%d] = %v, want %v (inputs %v)", n, scale, what, j, i, v, want[j][i].v,
								[]T{in[0][i], in[1][i], in[2][i], in[3][i], in[4][i], in[5][i], in[6][i], in[7][i], in[8][i]})
						}
					}
				}
			}
			checkSums := func(what string, gr Buffer[T], c [2]float64, sums, abs [2]float64) {
				t.Helper()
				got := fromDevice(t, k, gr)
				for j := range 2 {
					want := c[j] * sums[j]
					nb := float64((n + 63) / 64)
					if !same(got[j], T(want)) && !(math.Abs(float64(got[j])-want) <= ulp(T(want))+math.Abs(c[j])*nb*0x1p-52*abs[j]) {
						t.Fatalf("n=%d %v: %s gr[%d] = %v, want %v", n, scale, what, j, got[j], want)
					}
				}
			}
			fo := out(3)
			if err := AdamRHS(k, p, fo[0], fo[1], fo[2], g, m, v); err != nil {
				t.Fatal(err)
			}
			check("AdamRHS", fo, ref.fwd)
			bo, gr := out(3), toDevice(t, k, []T{7, 7})
			c := [2]float64{p.A1 * (1 - p.A1), p.A2 * (1 - p.A2)}
			for range 2 { // twice: the same bits
				if err := AdamRHSBackward(k, p, bo[0], bo[1], bo[2], gr, g, m, v, ch, cm, cv); err != nil {
					t.Fatal(err)
				}
				check("AdamRHSBackward", bo, ref.bwd)
				checkSums("AdamRHSBackward", gr, c, ref.bwdSums, ref.abs)
			}
			first := fromDevice(t, k, gr)
			if err := AdamRHSBackward(k, p, bo[0], bo[1], bo[2], gr, g, m, v, ch, cm, cv); err != nil {
				t.Fatal(err)
			}
			if again := fromDevice(t, k, gr); !same(again[0], first[0]) || !same(again[1], first[1]) {
				t.Fatalf("n=%d: the sums %v, then %v", n, first, again)
			}
			do := out(5)
			c = [2]float64{p.A1 * (1 - p.A1), -p.A2 * (1 - p.A2)}
			for _, gr := range []Buffer[T]{gr, {}} {
				if err := AdamBand(k, p, do[0], do[1], do[2], do[3], do[4], gr, g, m, v, ah, am, av); err != nil {
					t.Fatal(err)
				}
				check("AdamBand", do, ref.band)
				if gr.Len() > 0 {
					checkSums("AdamBand", gr, c, ref.bandSums, ref.bandAbs)
				}
			}
		}
	}
	b2, b3 := toDevice(t, k, make([]T, 2)), toDevice(t, k, make([]T, 3))
	p := AdamParams[T]{A1: 0.5, A2: 0.5, Eps: 1e-8}
	for name, err := range map[string]error{
		"AdamRHS":         AdamRHS(k, p, b2, b2, b2, b2, b3, b2),
		"AdamRHSBackward": AdamRHSBackward(k, p, b3, b3, b3, b3, b3, b3, b3, b3, b3, b3),
		"AdamBand":        AdamBand(k, p, b2, b2, b2, b2, b2, b3, b2, b2, b2, b2, b2, b2),
		"AdamScale":       AdamRHS(k, AdamParams[T]{Scale: 5}, b2, b2, b2, b2, b2, b2),
	} {
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(name, "Scale")) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestAdamCotangent: c = a1·am − 2a2·g ⊙ av is odeblock's loop to the bit
// on random and edge values, in place over am too.
func TestAdamCotangent(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testAdamCotangent[float32](t, k) }, func(t *testing.T) { testAdamCotangent[float64](t, k) })
}

func testAdamCotangent[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(25, 26))
	p := AdamParams[T]{A1: tensor.SigmoidOf(-5), A2: tensor.SigmoidOf(5), Eps: 1e-8}
	ta1, ta2 := T(p.A1), T(2*p.A2)
	for _, n := range lengths {
		g, am, av := values[T](r, n), values[T](r, n), values[T](r, n)
		r.Shuffle(n, func(i, j int) { am[i], am[j] = am[j], am[i] })
		gb, amb, avb := toDevice(t, k, g), toDevice(t, k, am), toDevice(t, k, av)
		c := toDevice(t, k, make([]T, n))
		if err := AdamCotangent(k, p, c, gb, amb, avb); err != nil {
			t.Fatal(err)
		}
		got := fromDevice(t, k, c)
		if err := AdamCotangent(k, p, amb, gb, amb, avb); err != nil {
			t.Fatal(err)
		}
		inPlace := fromDevice(t, k, amb)
		for i := range n {
			want := T(ta1*am[i]) - T(T(ta2*g[i])*av[i])
			if !same(got[i], want) || !same(inPlace[i], want) {
				t.Fatalf("n=%d: c[%d] = %v (in place %v), want %v", n, i, got[i], inPlace[i], want)
			}
		}
	}
	if err := AdamCotangent(k, p, toDevice(t, k, make([]T, 2)), toDevice(t, k, make([]T, 3)), toDevice(t, k, make([]T, 2)), toDevice(t, k, make([]T, 2))); err == nil {
		t.Error("AdamCotangent with lengths 2 and 3: no error")
	}
}
