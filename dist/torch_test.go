package dist_test

import (
	"encoding/json"
	"math"
	"os"
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
	Categorical struct {
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
