package models_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// expectedCount is the parameter count of cfg worked out from the layer
// sizes, independently of the constructor.
func expectedCount(cfg models.Config) (init, field, scalars, head int) {
	conv := func(in, out, k int) int { return out*in*k*k + out }
	c, n := cfg.C, cfg.NHid
	if cfg.Kind.SecondOrder() {
		init = conv(cfg.InC, n, 1) + conv(n, n, 3) + conv(n, 2*c-cfg.InC, 1)
	}
	fin := c
	if cfg.Kind == models.SONODE {
		fin = 2 * c
	}
	field = conv(fin+1, n, 1) + conv(n+1, n, 3) + conv(n+1, c, 1)
	switch cfg.Kind {
	case models.HBNODE:
		scalars = 1
	case models.GHBNODE, models.AdamNODE:
		scalars = 2
	}
	head = cfg.Classes*c*cfg.H*cfg.W + cfg.Classes
	return
}

// TestPaperModels builds the six models for MNIST and CIFAR-10 shapes,
// checks their output shapes, parameter names and counts, and logs the
// counts (the paper gives none; it says only that they were made close).
func TestPaperModels(t *testing.T) {
	// Counts of the MNIST models worked out by hand from the layer sizes
	// (NODE: f = 276 + 77,096 + 94, head = 7,850).
	mnist := map[models.Kind]int{
		models.NODE: 85316, models.ANODE: 85462, models.SONODE: 86179,
		models.HBNODE: 85930, models.GHBNODE: 85235, models.AdamNODE: 85931,
	}
	for _, d := range []models.Dataset{models.MNIST, models.CIFAR10} {
		for _, k := range models.Kinds() {
			t.Run(fmt.Sprintf("%v/%v", d, k), func(t *testing.T) {
				cfg := models.Paper(k, d)
				// One Euler step: the shapes do not depend on the solver.
				cfg.Solver = odeblock.Options{Method: "euler", Step: 1}
				m, err := models.New[float32](rand.New(rand.NewPCG(1, 2)), cfg)
				if err != nil {
					t.Fatal(err)
				}
				tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
				tp.SetNoGrad(true)
				x := tensor.RandU[float32](rand.New(rand.NewPCG(3, 4)), 0, 1, 2, cfg.InC, cfg.H, cfg.W)
				y, err := m.Forward(tp, tp.Const(x))
				if err != nil {
					t.Fatal(err)
				}
				if got := y.Shape(); !slices.Equal(got, []int{2, 10}) {
					t.Fatalf("logits shape %v, want [2 10]", got)
				}
				if st := m.Stats(); st.Forward.NFE != 1 {
					t.Errorf("forward NFE %d, want 1 (one Euler step)", st.Forward.NFE)
				}
				in, f, s, h := expectedCount(cfg)
				want := models.ParamCounts{Init: in, Field: f, Scalars: s, Head: h, Total: in + f + s + h}
				if got := m.Counts(); got != want {
					t.Errorf("counts %+v, want %+v", got, want)
				}
				if m.NumParams() != want.Total {
					t.Errorf("NumParams %d, want %d", m.NumParams(), want.Total)
				}
				if d == models.MNIST && want.Total != mnist[k] {
					t.Errorf("MNIST %v has %d parameters, want %d", k, want.Total, mnist[k])
				}
				t.Logf("%-8v %-7v c=%-2d nhid=%-3d params %7d (init %6d, f %6d, scalars %d, head %6d)",
					k.Title(), d, cfg.C, cfg.NHid, want.Total, in, f, s, h)
				checkNames(t, m)
			})
		}
	}
}

// checkNames checks that parameter names are unique module paths.
func checkNames(t *testing.T, m *models.Classifier[float32]) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range m.Params() {
		if seen[p.Name] {
			t.Errorf("duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
	}
	want := []string{"f.conv1.weight", "f.conv2.weight", "f.conv3.bias", "head.weight", "head.bias"}
	switch m.Config().Kind {
	case models.SONODE:
		want = append(want, "init.conv1.weight", "init.conv3.bias")
	case models.HBNODE:
		want = append(want, "init.conv2.weight", "ode.gamma")
	case models.GHBNODE:
		want = append(want, "init.conv2.weight", "ode.gamma", "ode.xi")
	case models.AdamNODE:
		want = append(want, "init.conv2.weight", "ode.r1", "ode.r2")
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("no parameter %q in %v", n, slices.Sorted(maps.Keys(seen)))
		}
	}
	if !m.Config().Kind.SecondOrder() {
		for n := range seen {
			if strings.HasPrefix(n, "init.") {
				t.Errorf("%v has an initial-state net parameter %q", m.Config().Kind, n)
			}
		}
	}
}

// TestFamilyScalars checks the initial raw scalars of the paper's table.
func TestFamilyScalars(t *testing.T) {
	want := map[models.Kind]map[string]float32{
		models.HBNODE:   {"ode.gamma": -3},
		models.GHBNODE:  {"ode.gamma": -3, "ode.xi": 2},
		models.AdamNODE: {"ode.r1": -5, "ode.r2": 5},
	}
	for k, w := range want {
		m, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), models.Paper(k, models.MNIST))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Params() {
			if v, ok := w[p.Name]; ok {
				if got := p.Value.Data()[0]; got != v {
					t.Errorf("%v %s = %v, want %v", k, p.Name, got, v)
				}
				delete(w, p.Name)
			}
		}
		if len(w) > 0 {
			t.Errorf("%v: missing scalars %v", k, w)
		}
	}
	a, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), models.Paper(models.AdamNODE, models.MNIST))
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Dynamics().(*odeblock.AdamNODE[float32]); d.S != odeblock.ScaleSoftplus {
		t.Errorf("AdamNODE scale %v, want ScaleSoftplus", d.S)
	}
	g, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), models.Paper(models.GHBNODE, models.MNIST))
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Dynamics().(*odeblock.GHBNODE[float32]); d.Phi != odeblock.PhiTanh {
		t.Errorf("GHBNODE φ %v, want tanh", d.Phi)
	}
}

// TestInitialState checks the layout of the initial state: the image in
// the first channels of h, zero padding for ANODE, v0 = m0² for AdamNODE.
func TestInitialState(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := tensor.RandU[float64](rng, 0.1, 1, 2, 1, 4, 4)
	for _, k := range models.Kinds() {
		cfg := tinyConfig(k)
		m, err := models.New[float64](rand.New(rand.NewPCG(1, 2)), cfg)
		if err != nil {
			t.Fatal(err)
		}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		tp.SetNoGrad(true)
		z := m.InitialState(tp, tp.Const(x)).Value()
		p := k.Parts()
		if want := []int{p * 2, cfg.C, 4, 4}; !slices.Equal(z.Shape(), want) {
			t.Fatalf("%v: initial state shape %v, want %v", k, z.Shape(), want)
		}
		zd, plane := z.Data(), 16
		for b := range 2 {
			for i := range plane {
				// h[b, 0] is the image.
				if got, want := zd[b*cfg.C*plane+i], x.Data()[b*plane+i]; got != want {
					t.Fatalf("%v: h[%d, 0] element %d = %v, want the pixel %v", k, b, i, got, want)
				}
			}
		}
		part := 2 * cfg.C * plane // one part of the batch of 2
		switch k {
		case models.ANODE:
			for b := range 2 {
				for i := plane; i < cfg.C*plane; i++ {
					if v := zd[b*cfg.C*plane+i]; v != 0 {
						t.Fatalf("ANODE augmented channel element %d = %v, want 0", i, v)
					}
				}
			}
		case models.AdamNODE:
			for i := range part {
				if m0, v0 := zd[part+i], zd[2*part+i]; v0 != m0*m0 {
					t.Fatalf("AdamNODE v0[%d] = %v, want m0² = %v", i, v0, m0*m0)
				}
			}
		}
	}
}

// tinyConfig is a small model of family k for gradient checks: 1×4×4
// images, 3 classes, c = 2 (3 for ANODE), nhid = 3, and fixed rk4 steps
// of 1/4.
func tinyConfig(k models.Kind) models.Config {
	cfg := models.Paper(k, models.MNIST)
	cfg.H, cfg.W, cfg.Classes = 4, 4, 3
	cfg.C, cfg.NHid = 2, 3
	if k == models.ANODE {
		cfg.C = 3
	}
	cfg.Solver = odeblock.Options{Method: "rk4", Step: 0.25}
	cfg.R1, cfg.R2 = -1, 1 // away from the flat ends of σ, so the check sees r1 and r2
	return cfg
}

// TestGradients checks each family end to end (initial state, ODE block,
// head, cross-entropy) against central differences in float64, through the
// same code that trains in float32.
//
// f has ReLUs, so an adaptive solve at a tight tolerance keeps rejecting
// steps at the kinks and its result is too noisy for finite differences.
// The checks therefore use fixed rk4 steps: in backprop mode the gradient
// is exactly that of the discrete solve (tight tolerance); in the adjoint
// mode the paper trains with, the backward solve discretises the adjoint
// equations on its own, so it agrees with the derivative of the forward
// solve to the discretisation error (loose tolerance, with 64 steps).
func TestGradients(t *testing.T) {
	x := tensor.RandU[float64](rand.New(rand.NewPCG(9, 9)), 0, 1, 2, 1, 4, 4)
	labels := []int{2, 0}
	for _, k := range models.Kinds() {
		for _, mode := range []odeblock.GradMode{odeblock.Backprop{}, odeblock.Adjoint{}} {
			t.Run(fmt.Sprintf("%v/%v", k, mode), func(t *testing.T) {
				cfg := tinyConfig(k)
				cfg.Mode = mode
				opt := autograd.GradCheckOptions{Step: 1e-6, AbsTol: 1e-9, RelTol: 1e-6, MaxElems: 4, Seed: 1}
				if mode == (odeblock.Adjoint{}) {
					cfg.Solver.Step = 1.0 / 64
					opt.AbsTol, opt.RelTol = 1e-6, 1e-3
				}
				m, err := models.New[float64](rand.New(rand.NewPCG(11, uint64(k))), cfg)
				if err != nil {
					t.Fatal(err)
				}
				loss := func(tp *autograd.Tape[float64]) autograd.Var[float64] {
					y, err := m.Forward(tp, tp.Const(x))
					if err != nil {
						t.Fatal(err)
					}
					return autograd.SoftmaxCrossEntropy(y, labels)
				}
				rep, err := autograd.CheckGradients(loss, m.Params(), opt)
				if err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
				if rep.Checked == 0 {
					t.Fatal("checked nothing")
				}
				t.Log(rep)
			})
		}
	}
}

// TestConfigErrors checks that configurations that cannot make a model
// are errors naming the problem, never panics.
func TestConfigErrors(t *testing.T) {
	base := models.Paper(models.HBNODE, models.MNIST)
	cases := map[string]func(c *models.Config){
		"hidden width":   func(c *models.Config) { c.NHid = 0 },
		"2c > in":        func(c *models.Config) { c.InC, c.C = 4, 2 },
		"end time":       func(c *models.Config) { c.T1 = math.NaN() },
		"input shape":    func(c *models.Config) { c.H = 0 },
		"unknown method": func(c *models.Config) { c.Solver.Method = "nope" },
		"unknown":        func(c *models.Config) { c.Kind = 42 },
	}
	for want, mutate := range cases {
		cfg := base
		mutate(&cfg)
		_, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one mentioning %q", want, err, want)
		}
	}
	node := models.Paper(models.NODE, models.CIFAR10)
	node.C = 2
	if _, err := models.New[float32](rand.New(rand.NewPCG(1, 1)), node); err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("NODE with 2 channels for RGB: error %v", err)
	}
	if _, err := models.New[float32](nil, base); err == nil {
		t.Error("nil generator: no error")
	}
}

// TestParseKind checks the names round trip and unknown names are errors
// listing the known ones.
func TestParseKind(t *testing.T) {
	for _, k := range models.Kinds() {
		got, err := models.ParseKind(strings.ToUpper(k.String()))
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := models.ParseKind("resnet"); err == nil || !strings.Contains(err.Error(), "adamnode") {
		t.Errorf("ParseKind(resnet): %v", err)
	}
	if got := models.AdamNODE.Title(); got != "AdamNODE" {
		t.Errorf("Title %q", got)
	}
}

// TestSeedFixesModel checks that the generator alone fixes the parameters.
func TestSeedFixesModel(t *testing.T) {
	cfg := models.Paper(models.AdamNODE, models.MNIST)
	a, _ := models.New[float32](rand.New(rand.NewPCG(5, 6)), cfg)
	b, _ := models.New[float32](rand.New(rand.NewPCG(5, 6)), cfg)
	for i, p := range a.Params() {
		if !slices.Equal(p.Value.Data(), b.Params()[i].Value.Data()) {
			t.Fatalf("%s differs between two models from the same seed", p.Name)
		}
	}
}

// TestCheckpointNames checks that a model saves under its module paths and
// that a model of another seed loads the file back exactly.
func TestCheckpointNames(t *testing.T) {
	cfg := models.Paper(models.GHBNODE, models.MNIST)
	a, _ := models.New[float32](rand.New(rand.NewPCG(1, 2)), cfg)
	b, _ := models.New[float32](rand.New(rand.NewPCG(3, 4)), cfg)
	path := filepath.Join(t.TempDir(), "ghbnode.safetensors")
	if err := layers.SaveParams(path, a.Params(), map[string]string{"model": "ghbnode"}); err != nil {
		t.Fatal(err)
	}
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Tensor("f.conv2.weight"); !ok {
		t.Errorf("no f.conv2.weight in the file")
	}
	if _, err := layers.LoadParams(path, b.Params()); err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params() {
		if !slices.Equal(p.Value.Data(), b.Params()[i].Value.Data()) {
			t.Fatalf("%s differs after loading", p.Name)
		}
	}
}
