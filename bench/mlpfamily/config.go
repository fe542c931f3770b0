// Package mlpfamily is a benchmark family of MLP neural ODEs, measured side
// by side with a PyTorch 1.13 + torchdiffeq peer (bench/torch_mlp.py).
//
// Every configuration is a small regression problem: the state h [B, D]
// (D = 16) evolves under one of three families whose field f(h, t) is an
// MLP on [h, t] — Linear(D+1 → W), activation, (Linear(W → W), activation)
// × (L−1), Linear(W → D) — from t = 0 to t = 1 with dopri5 at
// rtol = atol = 1e-6; the loss is the mean squared error of h(1) against a
// fixed random target. One training iteration is the forward solve, the
// backward pass (adjoint, backprop through the solver, or checkpointed
// recomputation) and an Adam step (torch's defaults, lr 1e-3).
//
// Every configuration runs in float32 (the default) or float64: the dtype
// axis, Config.DType, crosses the whole family rather than being one more
// variation of the base. A configuration's name does not say its dtype; its
// JSON, the weights file and mlpbench's result lines do. NewOf[T] builds a
// problem in T (New: float32); the float64 problem draws the same numbers
// from the same seed, unrounded, so the two dtypes train the same problem.
// mlpbench -dtype float64 and bench/compare_mlp.sh -d float64 run the
// family in float64 on both sides, and BenchmarkMLPFamilyDType times the
// base configuration in both dtypes in one run.
//
// The base configuration is an AdamNODE with two tanh hidden layers of
// width 64 and batch 512, adjoint gradients. The variations change one axis
// at a time (width, layers, activation, batch, family), each in the adjoint
// and the backprop modes, the base also in checkpoint mode; eight more
// configurations are drawn with a fixed seed from the whole product space,
// so that the family is not hand-picked. Configs lists them.
//
// The weights are PyTorch's default Linear initialisation drawn from a
// seeded generator; Problem.Save writes them with the initial state, the
// target, the configuration and reference values of the right-hand side
// and the initial loss to a safetensors file, which the PyTorch side loads;
// its tensors are stored in the run's dtype (F32 or F64), so a float64
// run's PyTorch twin starts from the very same float64 numbers.
package mlpfamily

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// The families, activations, gradient modes and element types a Config
// may name.
var (
	Families    = []string{"node", "hbnode", "adamnode"}
	Activations = []string{"tanh", "softplus", "relu"}
	Modes       = []string{"adjoint", "backprop", "checkpoint"}
	DTypes      = []string{"float32", "float64"}
)

// Config is one member of the family. Its JSON form is written into the
// weights file (metadata key "config") and read by the PyTorch side.
type Config struct {
	Name string `json:"name"`
	// Axis says how the configuration was chosen: "base", the axis varied
	// from the base ("width", "layers", "act", "batch", "family", "mode"),
	// or "random".
	Axis string `json:"axis"`

	Family string `json:"family"` // node, hbnode or adamnode
	Width  int    `json:"width"`  // width of the hidden layers of f
	Layers int    `json:"layers"` // number of hidden layers of f
	Act    string `json:"act"`    // tanh, softplus or relu
	Batch  int    `json:"batch"`
	Mode   string `json:"mode"` // adjoint, backprop or checkpoint
	D      int    `json:"d"`    // dimension of h
	// DType is the element type the problem is built and trained in:
	// "float32" (Base's; also what an empty DType, as in files written
	// before the axis existed, means) or "float64".
	DType string `json:"dtype"`

	RTol float64 `json:"rtol"` // dopri5 tolerances (forward and adjoint)
	ATol float64 `json:"atol"`
	T1   float64 `json:"t1"` // the solve runs over [0, T1]
	LR   float64 `json:"lr"` // Adam's learning rate (betas 0.9, 0.999, eps 1e-8)

	// The families' raw scalars at initialisation, as models.Paper: HBNODE
	// γ = σ(GammaRaw); AdamNODE a1 = σ(R1), a2 = σ(R2) and
	// s(v) = √softplus(v) + Eps.
	GammaRaw float64 `json:"gamma_raw"`
	R1       float64 `json:"r1"`
	R2       float64 `json:"r2"`
	Eps      float64 `json:"eps"`

	// Seed of the generator drawing the weights, then h0, m0 and the
	// target. The same for every configuration: configurations that differ
	// only in mode or family share their numbers.
	Seed uint64 `json:"seed"`
}

// Base returns the base configuration: AdamNODE, f with two tanh hidden
// layers of width 64 on [h, t], D = 16, batch 512, dopri5 at 1e-6 on
// [0, 1], adjoint gradients, Adam at lr 1e-3, float32.
func Base() Config {
	c := Config{
		Axis: "base", Family: "adamnode", Width: 64, Layers: 2, Act: "tanh", Batch: 512, Mode: "adjoint", D: 16, DType: "float32",
		RTol: 1e-6, ATol: 1e-6, T1: 1, LR: 1e-3,
		Eps:  1e-8,
		Seed: 1,
	}
	paper := odeblock.PaperScalars()
	c.GammaRaw, c.R1, c.R2 = paper.GammaRaw, paper.R1, paper.R2
	c.Name = c.defaultName()
	return c
}

// defaultName is the name a configuration is known by:
// FAMILY_wWIDTH_lLAYERS_ACT_bBATCH_MODE.
func (c Config) defaultName() string {
	return fmt.Sprintf("%s_w%d_l%d_%s_b%d_%s", c.Family, c.Width, c.Layers, c.Act, c.Batch, c.Mode)
}

// RandomSeed is the seed the random configurations are drawn with.
const RandomSeed = 20240611

// NumRandom is the number of random configurations.
const NumRandom = 8

// Configs returns the family in a fixed order: the base, the base in
// backprop and checkpoint modes, each one-axis variation in adjoint and
// backprop modes, then the NumRandom random configurations (named
// rN_..., N from 1).
func Configs() []Config {
	base := Base()
	var out []Config
	add := func(axis string, mod func(*Config), modes ...string) {
		for _, m := range modes {
			c := base
			c.Axis = axis
			mod(&c)
			c.Mode = m
			c.Name = c.defaultName()
			out = append(out, c)
		}
	}
	add("base", func(*Config) {}, "adjoint")
	add("mode", func(*Config) {}, "backprop", "checkpoint")
	both := []string{"adjoint", "backprop"}
	for _, w := range []int{32, 128, 256} {
		add("width", func(c *Config) { c.Width = w }, both...)
	}
	for _, l := range []int{1, 3} {
		add("layers", func(c *Config) { c.Layers = l }, both...)
	}
	for _, a := range []string{"softplus", "relu"} {
		add("act", func(c *Config) { c.Act = a }, both...)
	}
	for _, b := range []int{128, 2048} {
		add("batch", func(c *Config) { c.Batch = b }, both...)
	}
	for _, f := range []string{"node", "hbnode"} {
		add("family", func(c *Config) { c.Family = f }, both...)
	}
	return append(out, randomConfigs(base, NumRandom, RandomSeed)...)
}

// randomConfigs draws n configurations uniformly from the product space:
// width log-uniform on [32, 256], 1–3 hidden layers, the three activations,
// batch log-uniform on [128, 2048], the three families and the three modes.
// The draws use only the PCG generator's raw output (specified by its
// algorithm), so the list does not depend on math/rand's helpers.
func randomConfigs(base Config, n int, seed uint64) []Config {
	src := rand.NewPCG(seed, 0x6d6c7066616d696c) // "mlpfamil"
	u := func() float64 { return float64(src.Uint64()>>11) / (1 << 53) }
	pick := func(k int) int { return min(int(u()*float64(k)), k-1) }
	logUniform := func(lo, hi float64) int {
		return int(math.Round(math.Exp(math.Log(lo) + u()*(math.Log(hi)-math.Log(lo)))))
	}
	out := make([]Config, n)
	for i := range out {
		c := base
		c.Axis = "random"
		c.Width = logUniform(32, 256)
		c.Layers = 1 + pick(3)
		c.Act = Activations[pick(len(Activations))]
		c.Batch = logUniform(128, 2048)
		c.Family = Families[pick(len(Families))]
		c.Mode = Modes[pick(len(Modes))]
		c.Name = fmt.Sprintf("r%d_%s", i+1, c.defaultName())
		out[i] = c
	}
	return out
}

// Lookup returns the configuration called name.
func Lookup(name string) (Config, error) {
	var names []string
	for _, c := range Configs() {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Config{}, fmt.Errorf("mlpfamily: no configuration %q (have %s)", name, strings.Join(names, ", "))
}

// WithDType returns c in the element type dtype ("float32" or "float64";
// Validate rejects any other), its name unchanged.
func (c Config) WithDType(dtype string) Config {
	c.DType = dtype
	return c
}

// Float64 reports whether c runs in float64.
func (c Config) Float64() bool { return c.ElemType() == "float64" }

// ElemType returns c's element type: DType, or float32 when DType is empty.
func (c Config) ElemType() string {
	if c.DType == "" {
		return "float32"
	}
	return c.DType
}

// DTypeOf returns the name Config.DType gives T: "float32" or "float64".
func DTypeOf[T tensor.Float]() string {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return "float64"
	}
	return "float32"
}

// family returns c's family as odeblock knows it.
func (c Config) family() (odeblock.Family, error) {
	return odeblock.FamilyNamed(c.Family)
}

// Parts returns the number of parts of the family's ODE state: 1 (h) for
// NODE, 2 (h, m) for HBNODE, 3 (h, m, v) for AdamNODE (odeblock.Family's
// Parts; 1 for an unknown family).
func (c Config) Parts() int {
	fam, err := c.family()
	if err != nil {
		return 1
	}
	return fam.Parts
}

// scalars returns the family scalars of c: its γ_raw, r1 and r2, with the
// paper's choices of function (s(v) = √softplus(v) + ε).
func (c Config) scalars() odeblock.Scalars {
	s := odeblock.PaperScalars()
	s.GammaRaw, s.R1, s.R2 = c.GammaRaw, c.R1, c.R2
	return s
}

// Validate reports the first field that cannot make a problem.
func (c Config) Validate() error {
	in := func(s string, set []string) bool {
		for _, x := range set {
			if s == x {
				return true
			}
		}
		return false
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("mlpfamily: configuration without a name")
	case !in(c.Family, Families):
		return fmt.Errorf("mlpfamily: %s: unknown family %q (want %s)", c.Name, c.Family, strings.Join(Families, ", "))
	case !in(c.Act, Activations):
		return fmt.Errorf("mlpfamily: %s: unknown activation %q (want %s)", c.Name, c.Act, strings.Join(Activations, ", "))
	case !in(c.Mode, Modes):
		return fmt.Errorf("mlpfamily: %s: unknown gradient mode %q (want %s)", c.Name, c.Mode, strings.Join(Modes, ", "))
	case !in(c.ElemType(), DTypes):
		return fmt.Errorf("mlpfamily: %s: unknown dtype %q (want %s)", c.Name, c.DType, strings.Join(DTypes, ", "))
	case c.Width <= 0 || c.Layers <= 0 || c.Batch <= 0 || c.D <= 0:
		return fmt.Errorf("mlpfamily: %s: sizes must be positive (width %d, layers %d, batch %d, d %d)", c.Name, c.Width, c.Layers, c.Batch, c.D)
	case !(c.RTol > 0) || !(c.ATol > 0) || !(c.T1 > 0) || !(c.LR >= 0):
		return fmt.Errorf("mlpfamily: %s: rtol %g, atol %g, t1 %g, lr %g out of range", c.Name, c.RTol, c.ATol, c.T1, c.LR)
	}
	return nil
}
