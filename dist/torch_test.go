package dist_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/dist"
	"github.com/adamnode/adamnode/tensor"
)

// jt is a tensor in testdata/dist_torch.json: shape and row-major data.
type jt struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (j jt) tensor() *tensor.Tensor[float64] {
	return tensor.FromSlice(append([]float64(nil), j.Data...), j.Shape...)
}

// torchRef is testdata/dist_torch.json, written by gen_dist.py.
type torchRef struct {
	Normal struct {
		Loc, Scale, X jt
		WLP           jt `json:"w_lp"`
		WEnt          jt `json:"w_ent"`
		LogProb       jt `json:"log_prob"`
		Entropy       jt
		GradLoc       jt `json:"grad_loc"`
		GradScale     jt `json:"grad_scale"`
	}
	KLNormal struct {
		LocP       jt `json:"loc_p"`
		ScaleP     jt `json:"scale_p"`
		LocQ       jt `json:"loc_q"`
		ScaleQ     jt `json:"scale_q"`
		W, KL      jt
		GradLocP   jt `json:"grad_loc_p"`
		GradScaleP jt `json:"grad_scale_p"`
		GradLocQ   jt `json:"grad_loc_q"`
		GradScaleQ jt `json:"grad_scale_q"`
	} `json:"kl_normal"`
	Bernoulli struct {
		Logits, X  jt
		WLP        jt `json:"w_lp"`
		WEnt       jt `json:"w_ent"`
		LogProb    jt `json:"log_prob"`
		Entropy    jt
		Probs      jt
		GradLogits jt `json:"grad_logits"`
	}
	KLBernoulli   klRef `json:"kl_bernoulli"`
	KLCategorical klRef `json:"kl_categorical"`
	Categorical   struct {
		Logits     jt
		Labels     []int
		WLP        jt `json:"w_lp"`
		WEnt       jt `json:"w_ent"`
		LogProb    jt `json:"log_prob"`
		Entropy    jt
		Probs      jt
		GradLogits jt `json:"grad_logits"`
	}
}

// klRef is a KL divergence between two distributions given by logits.
type klRef struct {
	LogitsP     jt `json:"logits_p"`
	LogitsQ     jt `json:"logits_q"`
	W, KL       jt
	GradLogitsP jt `json:"grad_logits_p"`
	GradLogitsQ jt `json:"grad_logits_q"`
}

func loadRef(t *testing.T) *torchRef {
	t.Helper()
	raw, err := os.ReadFile("testdata/dist_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

func newTape() *autograd.Tape[float64] {
	return autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
}

// approx compares to within 1e-12, relative or absolute; a NaN or an Inf
// where torch has a finite value fails.
var approx = cmpopts.EquateApprox(1e-12, 1e-12)

// check compares got (a tensor's data and shape) with torch's want.
func check(t *testing.T, name string, got *tensor.Tensor[float64], want jt) {
	t.Helper()
	if diff := cmp.Diff(want.Shape, got.Shape(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: shape (-torch +dist):\n%s", name, diff)
		return
	}
	for i, v := range got.Data() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s[%d] = %v, torch %v", name, i, v, want.Data[i])
		}
	}
	if diff := cmp.Diff(want.Data, got.Data(), approx); diff != "" {
		t.Errorf("%s (-torch +dist):\n%s", name, diff)
	}
}

// weighted returns Σ w ⊙ v.
func weighted(tp *autograd.Tape[float64], w jt, v autograd.Var[float64]) autograd.Var[float64] {
	return autograd.Sum(autograd.Mul(tp.Const(w.tensor()), v))
}

func TestNormalMatchesPyTorch(t *testing.T) {
	r := loadRef(t).Normal
	tp := newTape()
	loc, scale := tp.Input(r.Loc.tensor()), tp.Input(r.Scale.tensor())
	n := dist.Normal[float64]{Loc: loc, Scale: scale}
	lp, ent := n.LogProb(tp.Const(r.X.tensor())), n.Entropy()
	check(t, "log_prob", lp.Value(), r.LogProb)
	check(t, "entropy", ent.Value(), r.Entropy)
	if err := tp.Backward(autograd.Add(weighted(tp, r.WLP, lp), weighted(tp, r.WEnt, ent))); err != nil {
		t.Fatal(err)
	}
	check(t, "grad loc", loc.Grad(), r.GradLoc)
	check(t, "grad scale", scale.Grad(), r.GradScale)
}

func TestKLNormalMatchesPyTorch(t *testing.T) {
	r := loadRef(t).KLNormal
	tp := newTape()
	lp, sp := tp.Input(r.LocP.tensor()), tp.Input(r.ScaleP.tensor())
	lq, sq := tp.Input(r.LocQ.tensor()), tp.Input(r.ScaleQ.tensor())
	kl := dist.KLNormal(dist.Normal[float64]{Loc: lp, Scale: sp}, dist.Normal[float64]{Loc: lq, Scale: sq})
	check(t, "kl", kl.Value(), r.KL)
	if err := tp.Backward(weighted(tp, r.W, kl)); err != nil {
		t.Fatal(err)
	}
	check(t, "grad loc_p", lp.Grad(), r.GradLocP)
	check(t, "grad scale_p", sp.Grad(), r.GradScaleP)
	check(t, "grad loc_q", lq.Grad(), r.GradLocQ)
	check(t, "grad scale_q", sq.Grad(), r.GradScaleQ)
}

func TestBernoulliMatchesPyTorch(t *testing.T) {
	r := loadRef(t).Bernoulli
	tp := newTape()
	logits := tp.Input(r.Logits.tensor())
	b := dist.Bernoulli[float64]{Logits: logits}
	lp, ent := b.LogProb(tp.Const(r.X.tensor())), b.Entropy()
	check(t, "log_prob", lp.Value(), r.LogProb)
	check(t, "entropy", ent.Value(), r.Entropy)
	check(t, "probs", b.Probs().Value(), r.Probs)
	if err := tp.Backward(autograd.Add(weighted(tp, r.WLP, lp), weighted(tp, r.WEnt, ent))); err != nil {
		t.Fatal(err)
	}
	check(t, "grad logits", logits.Grad(), r.GradLogits)
}

func TestCategoricalMatchesPyTorch(t *testing.T) {
	r := loadRef(t).Categorical
	tp := newTape()
	logits := tp.Input(r.Logits.tensor())
	c := dist.Categorical[float64]{Logits: logits}
	lp, ent := c.LogProb(r.Labels), c.Entropy()
	check(t, "log_prob", lp.Value(), r.LogProb)
	check(t, "entropy", ent.Value(), r.Entropy)
	check(t, "probs", c.Probs().Value(), r.Probs)
	if err := tp.Backward(autograd.Add(weighted(tp, r.WLP, lp), weighted(tp, r.WEnt, ent))); err != nil {
		t.Fatal(err)
	}
	check(t, "grad logits", logits.Grad(), r.GradLogits)
}

func TestKLBernoulliMatchesPyTorch(t *testing.T) {
	r := loadRef(t).KLBernoulli
	tp := newTape()
	lp, lq := tp.Input(r.LogitsP.tensor()), tp.Input(r.LogitsQ.tensor())
	kl := dist.KLBernoulli(dist.Bernoulli[float64]{Logits: lp}, dist.Bernoulli[float64]{Logits: lq})
	check(t, "kl", kl.Value(), r.KL)
	if err := tp.Backward(weighted(tp, r.W, kl)); err != nil {
		t.Fatal(err)
	}
	check(t, "grad logits_p", lp.Grad(), r.GradLogitsP)
	check(t, "grad logits_q", lq.Grad(), r.GradLogitsQ)
}

func TestKLCategoricalMatchesPyTorch(t *testing.T) {
	r := loadRef(t).KLCategorical
	tp := newTape()
	lp, lq := tp.Input(r.LogitsP.tensor()), tp.Input(r.LogitsQ.tensor())
	kl := dist.KLCategorical(dist.Categorical[float64]{Logits: lp}, dist.Categorical[float64]{Logits: lq})
	check(t, "kl", kl.Value(), r.KL)
	if err := tp.Backward(weighted(tp, r.W, kl)); err != nil {
		t.Fatal(err)
	}
	check(t, "grad logits_p", lp.Grad(), r.GradLogitsP)
	check(t, "grad logits_q", lq.Grad(), r.GradLogitsQ)
}

// TestKLBeyondTorch checks the discrete KLs where torch returns +Inf (a
// probability of q rounded to 0 or 1) against their finite values,
// written out in float64 arithmetic.
func TestKLBeyondTorch(t *testing.T) {
	tp := newTape()
	// Bernoulli: lq = 50 (q = 1 in float64) and lq = 500, lq = −800 (q = 0).
	lp, lq := []float64{-50, -500, 3, 1}, []float64{50, 500, -800, 40}
	kl := dist.KLBernoulli(dist.Bernoulli[float64]{Logits: tp.Const(tensor.FromSlice(lp, 4))},
		dist.Bernoulli[float64]{Logits: tp.Const(tensor.FromSlice(lq, 4))})
	for i, v := range kl.Value().Data() {
		p := tensor.SigmoidOf(lp[i])
		want := p*(lp[i]-lq[i]) + tensor.SoftplusOf(lq[i]) - tensor.SoftplusOf(lp[i])
		if math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("KLBernoulli(%v ‖ %v) = %v, want %v", lp[i], lq[i], v, want)
		}
	}
	// Categorical: q's first class is 1000 below its row's maximum.
	zp, zq := []float64{500, -500, 499}, []float64{-500, 0, 500}
	klc := dist.KLCategorical(dist.Categorical[float64]{Logits: tp.Const(tensor.FromSlice(zp, 1, 3))},
		dist.Categorical[float64]{Logits: tp.Const(tensor.FromSlice(zq, 1, 3))})
	lse := func(z []float64) float64 {
		m := slices.Max(z)
		var s float64
		for _, v := range z {
			s += math.Exp(v - m)
		}
		return m + math.Log(s)
	}
	var want float64
	for k := range zp {
		a, b := zp[k]-lse(zp), zq[k]-lse(zq)
		want += math.Exp(a) * (a - b)
	}
	if v := klc.Value().Data()[0]; math.IsInf(v, 0) || math.Abs(v-want) > 1e-12*want {
		t.Errorf("KLCategorical = %v, want %v", v, want)
	}
}
