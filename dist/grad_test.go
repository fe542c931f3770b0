package dist_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/dist"
	"github.com/adamnode/adamnode/tensor"
)

type f64 = autograd.Var[float64]

func param(name string, data []float64, shape ...int) *autograd.Param[float64] {
	return autograd.NewParam(name, tensor.FromSlice(data, shape...))
}

// normalParams returns μ, σ (positive) and x, of shape [2, 3].
func normalParams() (loc, scale, x *autograd.Param[float64]) {
	return param("loc", []float64{0.3, -1.2, 0.8, 2.0, -0.4, 0}, 2, 3),
		param("scale", []float64{0.7, 1.3, 0.25, 2.1, 0.9, 1.6}, 2, 3),
		param("x", []float64{1.1, -0.5, 0.6, -1.0, 0.2, 3.0}, 2, 3)
}

// extremeLogits holds ordinary and extreme logits, shape [2, 4].
var extremeLogits = []float64{0.3, -1.7, 2.2, 0.9, 50, -50, 500, -500}

// catLogits is [3, 4] logits, the last two rows extreme.
var catLogits = []float64{0.5, -1.0, 2.0, 0.1, 50, -50, 0, 1, 500, -500, 499, 0}

func TestGradients(t *testing.T) {
	loc, scale, x := normalParams()
	loc2 := param("loc_q", []float64{-0.2, 0.5, 1.0, 1.5, 0.1, -2.0}, 2, 3)
	scale2 := param("scale_q", []float64{1.1, 0.4, 0.8, 1.2, 2.5, 0.6}, 2, 3)
	logits := param("logits", append([]float64(nil), extremeLogits...), 2, 4)
	xb := tensor.FromSlice([]float64{1, 0, 1, 0, 0, 1, 1, 0}, 2, 4)
	probs := param("probs", []float64{0.1, 0.5, 0.93, 0.27}, 4)
	cat := param("cat_logits", append([]float64(nil), catLogits...), 3, 4)
	logits2 := param("logits_q", []float64{-0.4, 1.1, 0.2, -2.5, -30, 20, -400, 3}, 2, 4)
	cat2 := param("cat_logits_q", []float64{1, 0.2, -0.7, 0.4, 0, 40, -30, 2, -300, 0, 300, 1}, 3, 4)
	labels := []int{2, 1, 0}
	normal := func(tp *autograd.Tape[float64]) dist.Normal[float64] {
		return dist.Normal[float64]{Loc: tp.Param(loc), Scale: tp.Param(scale)}
	}
	cases := []struct {
		name   string
		f      func(tp *autograd.Tape[float64]) f64
		params []*autograd.Param[float64]
	}{
		{"Normal.LogProb", func(tp *autograd.Tape[float64]) f64 { return normal(tp).LogProb(tp.Param(x)) }, []*autograd.Param[float64]{loc, scale, x}},
		{"Normal.Entropy", func(tp *autograd.Tape[float64]) f64 { return normal(tp).Entropy() }, []*autograd.Param[float64]{scale}},
		{"Normal.Variance", func(tp *autograd.Tape[float64]) f64 { return normal(tp).Variance() }, []*autograd.Param[float64]{scale}},
		{"KLNormal", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLNormal(normal(tp), dist.Normal[float64]{Loc: tp.Param(loc2), Scale: tp.Param(scale2)})
		}, []*autograd.Param[float64]{loc, scale, loc2, scale2}},
		{"Bernoulli.LogProb", func(tp *autograd.Tape[float64]) f64 {
			return dist.Bernoulli[float64]{Logits: tp.Param(logits)}.LogProb(tp.Const(xb))
		}, []*autograd.Param[float64]{logits}},
		{"Bernoulli.Entropy", func(tp *autograd.Tape[float64]) f64 {
			return dist.Bernoulli[float64]{Logits: tp.Param(logits)}.Entropy()
		}, []*autograd.Param[float64]{logits}},
		{"BernoulliProbs.LogProb", func(tp *autograd.Tape[float64]) f64 {
			return dist.BernoulliProbs(tp.Param(probs)).LogProb(tp.Const(tensor.FromSlice([]float64{1, 0, 0, 1}, 4)))
		}, []*autograd.Param[float64]{probs}},
		{"Categorical.LogProb", func(tp *autograd.Tape[float64]) f64 {
			return dist.Categorical[float64]{Logits: tp.Param(cat)}.LogProb(labels)
		}, []*autograd.Param[float64]{cat}},
		{"KLBernoulli", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLBernoulli(dist.Bernoulli[float64]{Logits: tp.Param(logits)}, dist.Bernoulli[float64]{Logits: tp.Param(logits2)})
		}, []*autograd.Param[float64]{logits, logits2}},
		{"KLCategorical", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLCategorical(dist.Categorical[float64]{Logits: tp.Param(cat)}, dist.Categorical[float64]{Logits: tp.Param(cat2)})
		}, []*autograd.Param[float64]{cat, cat2}},
		{"Categorical.LogProbs", func(tp *autograd.Tape[float64]) f64 {
			return dist.Categorical[float64]{Logits: tp.Param(cat)}.LogProbs()
		}, []*autograd.Param[float64]{cat}},
		{"Categorical.Entropy", func(tp *autograd.Tape[float64]) f64 {
			return dist.Categorical[float64]{Logits: tp.Param(cat)}.Entropy()
		}, []*autograd.Param[float64]{cat}},
	}
	// LogProbs's outputs reach −1000 (the row [500, −500, 499, 0]), so the
	// central differences of its projected output carry a rounding error
	// near 1e-16·1000/1e-6 = 1e-7.
	absTol := map[string]float64{"Categorical.LogProbs": 1e-6}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := autograd.CheckGradients(c.f, c.params, autograd.GradCheckOptions{Seed: 3, AbsTol: absTol[c.name]})
			if err != nil {
				t.Fatalf("%v\n%v", err, rep)
			}
			if rep.Checked == 0 {
				t.Fatal("nothing checked")
			}
		})
	}
}

// TestSecondOrder checks second derivatives (Backward through Grad with
// CreateGraph) of the KLs, the Categorical entropy and log-probability and
// the Bernoulli log-probability and entropy against central differences.
func TestSecondOrder(t *testing.T) {
	loc, scale, _ := normalParams()
	loc2 := param("loc_q", []float64{-0.2, 0.5, 1.0, 1.5, 0.1, -2.0}, 2, 3)
	scale2 := param("scale_q", []float64{1.1, 0.4, 0.8, 1.2, 2.5, 0.6}, 2, 3)
	cat := param("cat_logits", []float64{0.5, -1.0, 2.0, 0.1, 3, -2, 0, 1}, 2, 4)
	logits := param("logits", []float64{0.3, -1.7, 2.2, 0.9, 4, -3}, 6)
	xb := tensor.FromSlice([]float64{1, 0, 1, 0, 0, 1}, 6)
	logitsQ := param("logits_q", []float64{-0.4, 1.1, 0.2, -2.5, 1, 0.5}, 6)
	catQ := param("cat_logits_q", []float64{1, 0.2, -0.7, 0.4, 0, 2, -3, 0.5}, 2, 4)
	cases := []struct {
		name   string
		f      func(tp *autograd.Tape[float64]) f64
		params []*autograd.Param[float64]
	}{
		{"KLNormal", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLNormal(dist.Normal[float64]{Loc: tp.Param(loc), Scale: tp.Param(scale)},
				dist.Normal[float64]{Loc: tp.Param(loc2), Scale: tp.Param(scale2)})
		}, []*autograd.Param[float64]{loc, scale, loc2, scale2}},
		{"Categorical.Entropy", func(tp *autograd.Tape[float64]) f64 {
			return dist.Categorical[float64]{Logits: tp.Param(cat)}.Entropy()
		}, []*autograd.Param[float64]{cat}},
		{"Categorical.LogProb", func(tp *autograd.Tape[float64]) f64 {
			return dist.Categorical[float64]{Logits: tp.Param(cat)}.LogProb([]int{3, 0})
		}, []*autograd.Param[float64]{cat}},
		{"KLBernoulli", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLBernoulli(dist.Bernoulli[float64]{Logits: tp.Param(logits)}, dist.Bernoulli[float64]{Logits: tp.Param(logitsQ)})
		}, []*autograd.Param[float64]{logits, logitsQ}},
		{"KLCategorical", func(tp *autograd.Tape[float64]) f64 {
			return dist.KLCategorical(dist.Categorical[float64]{Logits: tp.Param(cat)}, dist.Categorical[float64]{Logits: tp.Param(catQ)})
		}, []*autograd.Param[float64]{cat, catQ}},
		{"Bernoulli", func(tp *autograd.Tape[float64]) f64 {
			b := dist.Bernoulli[float64]{Logits: tp.Param(logits)}
			return autograd.Add(b.LogProb(tp.Const(xb)), b.Entropy())
		}, []*autograd.Param[float64]{logits}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reps, err := autograd.CheckHigherOrder(c.f, c.params, 2, autograd.GradCheckOptions{Seed: 5})
			if err != nil {
				t.Fatalf("%v\n%v", err, reps)
			}
		})
	}
}

// TestSampleGradient checks the reparameterisation: with x = μ + σ·ε,
// ∂Σx/∂μ = 1 and ∂Σx/∂σ = ε, the ε that SampleN drew (recovered from the
// sample as (x − μ)/σ).
func TestSampleGradient(t *testing.T) {
	tp := newTape()
	mu := tp.Input(tensor.FromSlice([]float64{0.5, -1, 2}, 3))
	sigma := tp.Input(tensor.FromSlice([]float64{0.2, 1.5, 3}, 3))
	d := dist.Normal[float64]{Loc: mu, Scale: sigma}
	x := d.Sample(tp, rand.New(rand.NewPCG(1, 2)))
	if got := x.Shape(); len(got) != 1 || got[0] != 3 {
		t.Fatalf("sample of shape %v, want [3]", got)
	}
	// The same draw, from the same seed.
	eps := tensor.RandN[float64](rand.New(rand.NewPCG(1, 2)), 0, 1, 3).Data()
	if err := tp.Backward(autograd.Sum(x)); err != nil {
		t.Fatal(err)
	}
	md, sd := mu.Value().Data(), sigma.Value().Data()
	for i, v := range x.Value().Data() {
		if want := md[i] + sd[i]*eps[i]; math.Abs(v-want) > 1e-15 {
			t.Errorf("x[%d] = %v, want μ + σε = %v", i, v, want)
		}
		if g := mu.Grad().Data()[i]; g != 1 {
			t.Errorf("∂x/∂μ[%d] = %v, want 1", i, g)
		}
		if g := sigma.Grad().Data()[i]; g != eps[i] {
			t.Errorf("∂x/∂σ[%d] = %v, want ε = %v", i, g, eps[i])
		}
	}
}

// TestSampleMoments draws many samples with a fixed seed and checks that
// their mean and variance are near μ and σ², and that the gradient of their
// mean is 1 with respect to μ and mean(ε) ≈ 0 with respect to σ.
func TestSampleMoments(t *testing.T) {
	const n = 20000
	tp := newTape()
	mu := tp.Input(tensor.FromSlice([]float64{0.5, -3}, 2))
	sigma := tp.Input(tensor.FromSlice([]float64{2, 0.1}, 2))
	x := dist.Normal[float64]{Loc: mu, Scale: sigma}.SampleN(tp, rand.New(rand.NewPCG(7, 8)), n)
	if got := x.Shape(); len(got) != 2 || got[0] != n || got[1] != 2 {
		t.Fatalf("samples of shape %v, want [%d 2]", got, n)
	}
	mean := autograd.MeanAxis(x, 0, false)
	if err := tp.Backward(autograd.Sum(mean)); err != nil {
		t.Fatal(err)
	}
	xd := x.Value().Data()
	for j, m := range []float64{0.5, -3} {
		s := []float64{2, 0.1}[j]
		var sum, sq float64
		for i := 0; i < n; i++ {
			sum += xd[2*i+j]
		}
		avg := sum / n
		for i := 0; i < n; i++ {
			sq += (xd[2*i+j] - avg) * (xd[2*i+j] - avg)
		}
		v := sq / (n - 1)
		// Standard errors: σ/√n for the mean, σ²·√(2/n) for the variance.
		if math.Abs(avg-m) > 4*s/math.Sqrt(n) {
			t.Errorf("mean of component %d: %v, want %v", j, avg, m)
		}
		if math.Abs(v-s*s) > 4*s*s*math.Sqrt(2.0/n) {
			t.Errorf("variance of component %d: %v, want %v", j, v, s*s)
		}
		if g := mu.Grad().Data()[j]; math.Abs(g-1) > 1e-12 {
			t.Errorf("∂mean/∂μ[%d] = %v, want 1", j, g)
		}
		if g, want := sigma.Grad().Data()[j], (avg-m)/s; math.Abs(g-want) > 1e-9 {
			t.Errorf("∂mean/∂σ[%d] = %v, want mean(ε) = %v", j, g, want)
		}
	}
}

// TestFloat32 runs every method in float32 and compares with float64.
func TestFloat32(t *testing.T) {
	t32 := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	t64 := newTape()
	v32 := func(d []float64, shape ...int) autograd.Var[float32] {
		s := make([]float32, len(d))
		for i, v := range d {
			s[i] = float32(v)
		}
		return t32.Const(tensor.FromSlice(s, shape...))
	}
	v64 := func(d []float64, shape ...int) f64 {
		return t64.Const(tensor.FromSlice(append([]float64(nil), d...), shape...))
	}
	loc, scale, x := normalParams()
	ld, sd, xd := loc.Value.Data(), scale.Value.Data(), x.Value.Data()
	xb := []float64{1, 0, 1, 0, 0, 1, 1, 0}
	n32 := dist.Normal[float32]{Loc: v32(ld, 2, 3), Scale: v32(sd, 2, 3)}
	n64 := dist.Normal[float64]{Loc: v64(ld, 2, 3), Scale: v64(sd, 2, 3)}
	q32 := dist.Normal[float32]{Loc: v32(xd, 2, 3), Scale: v32(sd, 2, 3)}
	q64 := dist.Normal[float64]{Loc: v64(xd, 2, 3), Scale: v64(sd, 2, 3)}
	b32, b64 := dist.Bernoulli[float32]{Logits: v32(extremeLogits, 8)}, dist.Bernoulli[float64]{Logits: v64(extremeLogits, 8)}
	c32, c64 := dist.Categorical[float32]{Logits: v32(catLogits, 3, 4)}, dist.Categorical[float64]{Logits: v64(catLogits, 3, 4)}
	c32x, c64x := dist.Categorical[float32]{Logits: v32(ld, 3, 2)}, dist.Categorical[float64]{Logits: v64(ld, 3, 2)}
	pairs := []struct {
		name string
		a    autograd.Var[float32]
		b    f64
	}{
		{"Normal.LogProb", n32.LogProb(v32(xd, 2, 3)), n64.LogProb(v64(xd, 2, 3))},
		{"Normal.Entropy", n32.Entropy(), n64.Entropy()},
		{"KLNormal", dist.KLNormal(n32, q32), dist.KLNormal(n64, q64)},
		{"Bernoulli.LogProb", b32.LogProb(v32(xb, 8)), b64.LogProb(v64(xb, 8))},
		{"Bernoulli.Entropy", b32.Entropy(), b64.Entropy()},
		{"Categorical.LogProb", c32.LogProb([]int{1, 2, 3}), c64.LogProb([]int{1, 2, 3})},
		{"Categorical.Entropy", c32.Entropy(), c64.Entropy()},
		{"KLBernoulli", dist.KLBernoulli(b32, dist.Bernoulli[float32]{Logits: v32(xb, 8)}), dist.KLBernoulli(b64, dist.Bernoulli[float64]{Logits: v64(xb, 8)})},
		{"KLCategorical", dist.KLCategorical(dist.Categorical[float32]{Logits: v32(xd, 3, 2)}, c32x), dist.KLCategorical(dist.Categorical[float64]{Logits: v64(xd, 3, 2)}, c64x)},
	}
	for _, p := range pairs {
		a, b := p.a.Value().Data(), p.b.Value().Data()
		for i := range b {
			if v := float64(a[i]); math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v-b[i]) > 1e-5*math.Max(1, math.Abs(b[i])) {
				t.Errorf("%s[%d]: float32 %v, float64 %v", p.name, i, a[i], b[i])
			}
		}
	}
}

func TestCategoricalLabelsPanic(t *testing.T) {
	for _, labels := range [][]int{{0, 1}, {0, 1, 4}, {-1, 0, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("labels %v: no panic", labels)
				}
			}()
			tp := newTape()
			dist.Categorical[float64]{Logits: tp.Const(tensor.New[float64](3, 4))}.LogProb(labels)
		}()
	}
}

func TestNormalBroadcastShapePanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for Loc [2] and Scale [3]")
		}
	}()
	tp := newTape()
	dist.Normal[float64]{Loc: tp.Const(tensor.New[float64](2)), Scale: tp.Const(tensor.New[float64](3))}.Sample(tp, rand.New(rand.NewPCG(1, 1)))
}

// TestBernoulliSample checks that the frequency of ones is near σ(l), with
// a fixed seed, and that logits of ±500 give 1 and 0 always.
func TestBernoulliSample(t *testing.T) {
	const n = 20000
	tp := newTape()
	l := []float64{-1.5, 0, 0.8, 500, -500}
	logits := make([]float64, 0, n*len(l))
	for range n {
		logits = append(logits, l...)
	}
	x := dist.Bernoulli[float64]{Logits: tp.Const(tensor.FromSlice(logits, n, len(l)))}.Sample(tp, rand.New(rand.NewPCG(3, 4)))
	if x.RequiresGrad() {
		t.Error("a Bernoulli sample requires a gradient, want a constant")
	}
	xd := x.Value().Data()
	for j, lj := range l {
		var ones float64
		for i := range n {
			v := xd[i*len(l)+j]
			if v != 0 && v != 1 {
				t.Fatalf("sample %v, want 0 or 1", v)
			}
			ones += v
		}
		p := tensor.SigmoidOf(lj)
		if f := ones / n; math.Abs(f-p) > 4*math.Sqrt(p*(1-p)/n) {
			t.Errorf("logit %v: frequency of ones %v, want %v", lj, f, p)
		}
	}
}

// TestCategoricalSample checks the classes' frequencies against the
// probabilities, with a fixed seed, on logits of ±500 among others.
func TestCategoricalSample(t *testing.T) {
	const n = 20000
	tp := newTape()
	rows := [][]float64{{0.5, -1, 2, 0.1}, {500, -500, 499, 0}}
	var logits []float64
	for range n {
		for _, r := range rows {
			logits = append(logits, r...)
		}
	}
	c := dist.Categorical[float64]{Logits: tp.Const(tensor.FromSlice(logits, n*len(rows), 4))}
	got := c.Sample(rand.New(rand.NewPCG(5, 6)))
	if len(got) != n*len(rows) {
		t.Fatalf("%d samples, want %d", len(got), n*len(rows))
	}
	probs := c.Probs().Value().Data()
	for r := range rows {
		var counts [4]float64
		for i := range n {
			counts[got[i*len(rows)+r]]++
		}
		for k, cnt := range counts {
			p := probs[r*4+k]
			if f := cnt / n; math.Abs(f-p) > 4*math.Sqrt(p*(1-p)/n) {
				t.Errorf("row %v, class %d: frequency %v, want %v", rows[r], k, f, p)
			}
		}
	}
}
