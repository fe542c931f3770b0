package mlpfamily

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// The random configurations, pinned: a change to the sampler (or to the
// PCG generator) shows here instead of silently renaming the family.
var wantRandom = []string{
	"r1_node_w78_l3_softplus_b149_backprop",
	"r2_hbnode_w51_l1_tanh_b940_backprop",
	"r3_hbnode_w127_l3_tanh_b422_adjoint",
	"r4_hbnode_w203_l1_tanh_b1149_checkpoint",
	"r5_adamnode_w118_l3_tanh_b1290_adjoint",
	"r6_node_w252_l1_tanh_b402_checkpoint",
	"r7_node_w69_l2_tanh_b411_backprop",
	"r8_node_w159_l2_relu_b1177_backprop",
}

func TestConfigs(t *testing.T) {
	cs := Configs()
	seen := map[string]bool{}
	var random []string
	for i, c := range cs {
		if seen[c.Name] {
			t.Errorf("configuration %d: name %q repeated", i, c.Name)
		}
		seen[c.Name] = true
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if c.Axis == "random" {
			random = append(random, c.Name)
			if c.Width < 32 || c.Width > 256 || c.Batch < 128 || c.Batch > 2048 || c.Layers < 1 || c.Layers > 3 {
				t.Errorf("%s: outside the sampled space", c.Name)
			}
		}
		if got, err := Lookup(c.Name); err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("Lookup(%q) = %+v, %v", c.Name, got, err)
		}
	}
	if cs[0].Name != "adamnode_w64_l2_tanh_b512_adjoint" || cs[0].Axis != "base" {
		t.Errorf("first configuration %q (%s), want the base", cs[0].Name, cs[0].Axis)
	}
	for _, m := range Modes {
		if !seen["adamnode_w64_l2_tanh_b512_"+m] {
			t.Errorf("the base in %s mode is missing", m)
		}
	}
	if !slices.Equal(random, wantRandom) {
		t.Errorf("random configurations\n%q\nwant\n%q", random, wantRandom)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown name: no error")
	}
}

// small returns c with its batch cut to 16: every configuration's code
// path in a fraction of its time.
func small(c Config) Config {
	c.Batch = min(c.Batch, 16)
	return c
}

// oneWorker runs the problems built during the test on the default
// backend with one worker, so that their numbers do not depend on the
// machine's core count. (It was once a workaround for a split GEMM that
// panicked on a transposed A in the OpenBLAS build; with two workers these
// tests now pass there too.)
func oneWorker(t *testing.T) {
	t.Helper()
	for _, b := range tensor.Backends(1) {
		if b.Name() == tensor.Default().Name() {
			old := engineBackend
			engineBackend = func() tensor.Backend { return b }
			t.Cleanup(func() { engineBackend = old })
			return
		}
	}
	t.Fatalf("no backend named %s", tensor.Default().Name())
}

// finite reports whether every element of t is finite.
func finite(t *tensor.Tensor[float32]) bool {
	for _, v := range t.Data() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

func allFinite(t *testing.T, p *Problem) {
	t.Helper()
	for _, q := range p.Params {
		if !finite(q.Value) || !finite(q.Grad) {
			t.Errorf("%s: parameter %s or its gradient not finite", p.Config.Name, q.Name)
		}
	}
}

// TestEveryConfigRuns builds every configuration (batch cut by small) and
// runs two training iterations: finite losses and parameters, evaluations
// counted, every parameter moved by the Adam step.
func TestEveryConfigRuns(t *testing.T) {
	oneWorker(t)
	for _, c := range Configs() {
		p, err := New(small(c))
		if err != nil {
			t.Fatal(err)
		}
		before := make([][]float32, len(p.Params))
		for i, q := range p.Params {
			before[i] = slices.Clone(q.Value.Data())
		}
		for it := range 2 {
			st, err := p.Step()
			if err != nil {
				t.Fatalf("%s: iteration %d: %v", c.Name, it, err)
			}
			if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) || st.FwdNFE < 8 || st.BwdNFE <= 0 {
				t.Errorf("%s: iteration %d: %+v", c.Name, it, st)
			}
		}
		allFinite(t, p)
		for i, q := range p.Params {
			if slices.Equal(before[i], q.Value.Data()) {
				t.Errorf("%s: parameter %s did not change", c.Name, q.Name)
			}
		}
	}
}

// TestBaseLearns: a few Adam steps on the base problem lower its loss.
func TestBaseLearns(t *testing.T) {
	c := Base()
	c.Batch = 64
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Step()
	if err != nil {
		t.Fatal(err)
	}
	var last IterStats
	for range 4 {
		if last, err = p.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if !(last.Loss < first.Loss) {
		t.Errorf("loss %g after 5 steps, %g at the start", last.Loss, first.Loss)
	}
}

// TestModesAgree: the three gradient modes give the same forward solve and
// nearly the same gradients (adjoint: to about its tolerance; backprop and
// checkpoint: the exact gradient of the discrete solve).
func TestModesAgree(t *testing.T) {
	oneWorker(t)
	var losses []float64
	var grads [][]float64
	for _, m := range Modes {
		c := small(Base())
		c.Mode = m
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Step()
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, st.Loss)
		var g []float64
		for _, q := range p.Params {
			for _, v := range q.Grad.Data() {
				g = append(g, float64(v))
			}
		}
		grads = append(grads, g)
	}
	for i := 1; i < len(Modes); i++ {
		if d := math.Abs(losses[i] - losses[0]); d > 1e-6*math.Abs(losses[0]) {
			t.Errorf("%s loss %g, adjoint %g", Modes[i], losses[i], losses[0])
		}
		var diff, norm float64
		for j, v := range grads[0] {
			diff += (grads[i][j] - v) * (grads[i][j] - v)
			norm += v * v
		}
		if r := math.Sqrt(diff / norm); !(r < 1e-3) {
			t.Errorf("%s gradient differs from adjoint's by %.3g (relative)", Modes[i], r)
		}
	}
}

// TestSaveLoad writes weights files and reads them back: the same
// configuration, weights and data, bit for bit, and reference values that
// the loaded problem reproduces.
func TestSaveLoad(t *testing.T) {
	oneWorker(t)
	for _, name := range []string{"adamnode_w64_l2_tanh_b512_adjoint", "hbnode_w64_l2_tanh_b512_backprop", "node_w64_l2_tanh_b512_adjoint"} {
		c, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c = small(c)
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".safetensors")
		if err := p.Save(path); err != nil {
			t.Fatal(err)
		}
		q, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(q.Config, p.Config) {
			t.Errorf("%s: config %+v, saved %+v", name, q.Config, p.Config)
		}
		same := func(what string, a, b *tensor.Tensor[float32]) {
			if !slices.Equal(a.Shape(), b.Shape()) || !slices.Equal(a.Data(), b.Data()) {
				t.Errorf("%s: %s differs after the round trip", name, what)
			}
		}
		for i := range p.Params {
			if p.Params[i].Name != q.Params[i].Name {
				t.Errorf("%s: parameter %d named %q, saved %q", name, i, q.Params[i].Name, p.Params[i].Name)
			}
			same(p.Params[i].Name, p.Params[i].Value, q.Params[i].Value)
		}
		same("h0", p.H0, q.H0)
		same("m0", p.M0, q.M0)
		same("target", p.Target, q.Target)

		s, err := layers.ReadSafetensorsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := s.Tensor(keyRHS0)
		if !ok {
			t.Fatalf("%s: no %s", name, keyRHS0)
		}
		rhs, err := layers.TensorFromRaw[float32](raw)
		if err != nil {
			t.Fatal(err)
		}
		same("F(0, z0)", rhs, q.RHS(0))
		if got := rhs.Dim(0); got != c.Parts()*c.Batch {
			t.Errorf("%s: F(0, z0) has %d rows, want %d", name, got, c.Parts()*c.Batch)
		}
		if s.Metadata["check.fwd_nfe"] == "" || s.Metadata["check.loss"] == "" {
			t.Errorf("%s: metadata %v", name, s.Metadata)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Family = "sonode" },
		func(c *Config) { c.Act = "gelu" },
		func(c *Config) { c.Mode = "exact" },
		func(c *Config) { c.Width = 0 },
		func(c *Config) { c.RTol = 0 },
		func(c *Config) { c.Name = "" },
		func(c *Config) { c.DType = "float16" },
		func(c *Config) { c.DType = "float64" }, // New builds float32 only
	} {
		c := Base()
		mod(&c)
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
}

// rhsByHand computes F(t, z0) of p in float64 from its parameters with
// plain loops: the equations of the package doc (and of odeblock's
// families, and of bench/torch_mlp.py), written out independently of
// autograd and odeblock. It returns the parts of F stacked, [P·B·D].
func rhsByHand[T tensor.Float](p *ProblemOf[T], t float64) []float64 {
	c := p.Config
	byName := map[string][]float64{}
	for _, q := range p.Params {
		byName[q.Name] = widen(q.Value.Data())
	}
	act := map[string]func(float64) float64{
		"tanh":     math.Tanh,
		"softplus": func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) },
		"relu":     func(x float64) float64 { return math.Max(x, 0) },
	}[c.Act]
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// f(h, t) for one row h of D values.
	f := func(h []float64) []float64 {
		x := append(append([]float64(nil), h...), t)
		for l := 0; l <= c.Layers; l++ {
			k := 2*l + 1
			w, b := byName[fmt.Sprintf("f.%d.weight", k)], byName[fmt.Sprintf("f.%d.bias", k)]
			out := len(b)
			y := make([]float64, out)
			for o := range out {
				s := b[o]
				for i, xi := range x {
					s += w[o*len(x)+i] * xi
				}
				if l < c.Layers {
					s = act(s)
				}
				y[o] = s
			}
			x = y
		}
		return x
	}
	B, D := c.Batch, c.D
	out := make([]float64, c.Parts()*B*D)
	row := func(t *tensor.Tensor[T], r int) []float64 { return widen(t.Data()[r*D : (r+1)*D]) }
	for r := range B {
		h, m := row(p.H0, r), row(p.M0, r)
		g := f(h)
		for j := range D {
			switch c.Family {
			case "node":
				out[r*D+j] = g[j]
			case "hbnode":
				gamma := sigmoid(byName["gamma"][0])
				out[r*D+j] = -m[j]
				out[(B+r)*D+j] = g[j] - gamma*m[j]
			case "adamnode":
				a1, a2 := sigmoid(byName["r1"][0]), sigmoid(byName["r2"][0])
				v := m[j] * m[j] // v0 = m0²
				s := math.Sqrt(math.Max(v, 0)+math.Log1p(math.Exp(-math.Abs(v)))) + c.Eps
				out[r*D+j] = -m[j] / s
				out[(B+r)*D+j] = a1 * (-g[j] - m[j])
				out[(2*B+r)*D+j] = a2 * (g[j]*g[j] - v)
			}
		}
	}
	return out
}

// widen returns x in float64.
func widen[T tensor.Float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestRHSEquations: the right-hand side the weights file's reference values
// come from (Problem.RHS, through odeblock's families and layers) equals the
// documented equations computed by hand, for every family and activation,
// at t = 0 and t = 0.5, to float32 accuracy (1e-5 of each part's largest
// value, the bound bench/torch_mlp.py checks its own against).
func TestRHSEquations(t *testing.T) {
	oneWorker(t)
	for _, fam := range Families {
		for _, act := range Activations {
			c := Base()
			c.Family, c.Act, c.Batch, c.Width = fam, act, 7, 24
			c.Name = c.defaultName()
			p, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range []float64{0, 0.5} {
				want := rhsByHand(p, tt)
				got := p.RHS(tt).Data()
				if len(got) != len(want) {
					t.Fatalf("%s: F has %d values, want %d", c.Name, len(got), len(want))
				}
				n := len(want) / c.Parts()
				for k := range c.Parts() {
					var scale, diff float64
					for i := k * n; i < (k+1)*n; i++ {
						scale = math.Max(scale, math.Abs(want[i]))
						diff = math.Max(diff, math.Abs(float64(got[i])-want[i]))
					}
					if !(diff <= 1e-5*scale) {
						t.Errorf("%s: t = %g: part %d of F differs from the equations by %.3g (largest value %.3g)", c.Name, tt, k, diff, scale)
					}
				}
			}
		}
	}
}

// TestShardSolve: with ShardSolve = 2 on a two-worker engine, one training
// step of each family in each mode, from the same weights, has the loss of
// one solve of the batch to the solver's tolerance and nearly its
// gradients (each shard takes its own steps).
func TestShardSolve(t *testing.T) {
	old, oldSolve := engineBackend, ShardSolve
	t.Cleanup(func() { engineBackend, ShardSolve = old, oldSolve })
	for _, b := range tensor.Backends(2) {
		if b.Name() == tensor.Default().Name() {
			engineBackend = func() tensor.Backend { return b }
		}
	}
	n := 0
	for _, c := range Configs() {
		if c.Width != Base().Width || c.Batch != Base().Batch || c.Layers != Base().Layers || c.Act != Base().Act {
			continue // the families and modes of the base configuration
		}
		n++
		c.Batch = 64
		step := func(shards int) (IterStats, []float64) {
			ShardSolve = shards
			p, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			if p.Block.Shards != shards {
				t.Fatalf("%s: the block has Shards %d, want %d", c.Name, p.Block.Shards, shards)
			}
			st, err := p.Step()
			if err != nil {
				t.Fatalf("%s, %d shards: %v", c.Name, shards, err)
			}
			var g []float64
			for _, q := range p.Params {
				for _, v := range q.Grad.Data() {
					g = append(g, float64(v))
				}
			}
			return st, g
		}
		whole, gw := step(0)
		sharded, gs := step(2)
		if d := math.Abs(sharded.Loss - whole.Loss); !(d <= 1e-5*math.Abs(whole.Loss)) {
			t.Errorf("%s: loss %g sharded, %g whole", c.Name, sharded.Loss, whole.Loss)
		}
		var diff, norm float64
		for j, v := range gw {
			diff += (gs[j] - v) * (gs[j] - v)
			norm += v * v
		}
		if r := math.Sqrt(diff / norm); !(r < 1e-3) {
			t.Errorf("%s: gradients differ by %.3g (relative) sharded", c.Name, r)
		}
		if sharded.FwdNFE == 0 || sharded.BwdNFE == 0 {
			t.Errorf("%s: sharded steps counted %+v", c.Name, sharded)
		}
	}
	if n != 7 {
		t.Errorf("%d configurations of the base's field, want 7 (3 modes of AdamNODE, 2 each of NODE and HBNODE)", n)
	}
}

// TestFamilyKnowledge: the families' parts and scalars come from odeblock,
// and a family odeblock does not know builds no problem.
func TestFamilyKnowledge(t *testing.T) {
	for fam, want := range map[string]int{"node": 1, "hbnode": 2, "adamnode": 3, "nonesuch": 1} {
		if got := (Config{Family: fam}).Parts(); got != want {
			t.Errorf("%s: Parts = %d, want %d", fam, got, want)
		}
	}
	b, paper := Base(), odeblock.PaperScalars()
	if b.GammaRaw != paper.GammaRaw || b.R1 != paper.R1 || b.R2 != paper.R2 {
		t.Errorf("Base's scalars γ_raw %g, r1 %g, r2 %g; the paper's %+v", b.GammaRaw, b.R1, b.R2, paper)
	}
	c := Base()
	c.Family, c.Batch = "nonesuch", 2
	p := &Problem{Config: c, Field: newField[float32](c, rand.New(rand.NewPCG(0, 0)))}
	if err := p.build(); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("build of family nonesuch: %v", err)
	}
}
