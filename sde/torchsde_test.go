package sde

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// The comparison with torchsde: Go writes the problem (the weights of
// neural, y0, the output times, the step) and the Brownian increments and
// Lévy areas of every step to testdata/torchsde_increments.json
// (go test ./sde -run TestTorchsdePaths -torchsde.write); the script
// testdata/torchsde_paths.py solves the same problems with torchsde on
// those increments and writes testdata/torchsde_paths.json, which this test
// compares with Solve's paths. Python is needed only to remake the golden
// file.
var writeTorchsde = flag.Bool("torchsde.write", false, "write testdata/torchsde_increments.json for testdata/torchsde_paths.py")

const (
	torchsdeIncrements = "testdata/torchsde_increments.json"
	torchsdePaths      = "testdata/torchsde_paths.json"
)

// torchsdeProblem is one noise layout of the comparison.
type torchsdeProblem struct {
	Noise  string               `json:"noise"`
	Shape  []int                `json:"shape"`  // of one increment
	Params map[string]tensorDoc `json:"params"` // neural's weights and y0
	Steps  []stepDoc            `json:"steps"`
}

type tensorDoc struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// stepDoc is the step [T0, T0 + dt]: W its increment, H its space-time Lévy
// area, both in the path's shape, flattened.
type stepDoc struct {
	T0 float64   `json:"t0"`
	W  []float64 `json:"W"`
	H  []float64 `json:"H"`
}

type torchsdeIncrementsDoc struct {
	Ts       []float64         `json:"ts"`
	Dt       float64           `json:"dt"`
	Problems []torchsdeProblem `json:"problems"`
}

// torchsdePathsDoc is what torchsde_paths.py writes: for each noise layout
// and method, y at every output time (flattened [len(ts)][B·d]).
type torchsdePathsDoc struct {
	Torchsde string                                  `json:"torchsde"`
	Torch    string                                  `json:"torch"`
	Paths    map[string]map[string][][]float64       `json:"paths"`
	Grads    map[string]map[string]torchsdeGradients `json:"grads"`
}

// torchsdeGradients is the loss L = Σ over the output times of Σ y²/2 and
// its gradients by parameter name (and "y0").
type torchsdeGradients struct {
	Loss  float64              `json:"loss"`
	Grads map[string][]float64 `json:"grads"`
}

// replay is a Path that gives the increments (and areas) of a fixed grid of
// steps of size dt from 0, and refuses any other interval.
type replay struct {
	shape []int
	dt    float64
	steps []stepDoc
}

func (r *replay) Shape() []int { return r.shape }

func (r *replay) step(s, t float64) (stepDoc, error) {
	k := int(math.Round(s / r.dt))
	if k < 0 || k >= len(r.steps) || math.Abs(s-float64(k)*r.dt) > 1e-12 || math.Abs(t-s-r.dt) > 1e-12 {
		return stepDoc{}, fmt.Errorf("replay: [%g, %g] is not a step of the grid of %d steps of %g", s, t, len(r.steps), r.dt)
	}
	return r.steps[k], nil
}

func (r *replay) Increment(dst *tensor.Tensor[float64], s, t float64) error {
	st, err := r.step(s, t)
	if err != nil {
		return err
	}
	copy(dst.Data(), st.W)
	return nil
}

func (r *replay) IncrementArea(dW, dH *tensor.Tensor[float64], s, t float64) error {
	st, err := r.step(s, t)
	if err != nil {
		return err
	}
	copy(dW.Data(), st.W)
	copy(dH.Data(), st.H)
	return nil
}

var torchsdeNoises = map[string]Noise{"diagonal": Diagonal, "scalar": Scalar, "general": General, "additive": General}

// additiveNeural is neural's drift with additive general noise, torchsde's
// noise_type "additive": g(t) = (1 + t/2) C, C a fixed [3, 2, 2].
type additiveNeural struct {
	*neural
	c *autograd.Param[float64]
}

func newAdditiveNeural() *additiveNeural {
	r := rand.New(rand.NewPCG(36, 1))
	return &additiveNeural{neural: newNeural(General, 3), c: autograd.NewParam("C", tensor.RandN[float64](r, 0, 0.5, 3, 2, 2))}
}

func (m *additiveNeural) Diffusion(tp *autograd.Tape[float64], t float64, _ autograd.Var[float64]) autograd.Var[float64] {
	return autograd.Scale(tp.Param(m.c), 1+t/2)
}

func (m *additiveNeural) Params() []*autograd.Param[float64] {
	return []*autograd.Param[float64]{m.w, m.b, m.c}
}

func (m *additiveNeural) all() []*autograd.Param[float64] { return append(m.Params(), m.y0p) }

// torchsdeSDE returns the SDE of a noise layout of the comparison, its
// parameters and y0.
func torchsdeSDE(noise string) (SDE[float64], []*autograd.Param[float64], *autograd.Param[float64]) {
	if noise == "additive" {
		m := newAdditiveNeural()
		return m, m.all(), m.y0p
	}
	m := newNeural(torchsdeNoises[noise], 3)
	return m, m.all(), m.y0p
}

// torchsdeCase is one solve compared: the method and options here, and
// the key of torchsde's path in the golden file.
type torchsdeCase struct {
	key    string // torchsde's method, "milstein_grad_free" for its grad_free option
	method string
	free   bool
}

// torchsdeCases lists, per noise layout, the methods whose definitions are
// the same in both libraries. torchsde's srk is Rößler's SRI2, so it is
// compared with sri2, and for additive noise with sra1 (Rößler's SRA1, as
// torchsde's srk then); adamnode's srk (an order-1 SRI tableau of its own)
// has no counterpart there. Milstein and srk take no general noise in
// either library.
func torchsdeCases(noise string) []torchsdeCase {
	cs := []torchsdeCase{{"euler", EulerMaruyama, false}, {"heun", Heun, false}, {"reversible_heun", ReversibleHeun, false}}
	if noise == "additive" {
		return append(cs, torchsdeCase{"srk", SRA1, false})
	}
	if noise != "general" {
		cs = append(cs, torchsdeCase{"milstein", Milstein, false}, torchsdeCase{"milstein_grad_free", Milstein, true}, torchsdeCase{"srk", SRI2, false})
	}
	return cs
}

// TestTorchsdePaths: on the same drift and diffusion (neural: a tanh layer
// drift that reads time, a sigmoid diagonal/scalar or tanh-layer general
// diffusion, float64, batch 3 of 2 elements, general noise with 2 Brownian
// motions; and additive general noise (1 + t/2) C) and the same Brownian
// increments (8 steps of 1/8 to t = 1, outputs every 1/4), adamnode's
// euler, milstein (with the JVP, and derivative-free), sri2 (sra1 for
// additive noise), heun and reversible_heun give torchsde's euler,
// milstein (and grad_free), srk, heun and reversible_heun paths to a
// relative 1e-13 at every output time.
//
// One difference of definition does not show here: for scalar noise
// torchsde's Milstein term is the vector–Jacobian product (∂g/∂y)ᵀg where
// the Milstein correction (and adamnode) has the Jacobian–vector product
// (∂g/∂y)g; they agree for this diffusion, whose Jacobian is diagonal
// (g_i reads y_i only), and differ when g couples the elements.
func TestTorchsdePaths(t *testing.T) {
	if *writeTorchsde {
		writeTorchsdeIncrements(t)
	}
	var inc torchsdeIncrementsDoc
	readJSON(t, torchsdeIncrements, &inc)
	var gold torchsdePathsDoc
	readJSON(t, torchsdePaths, &gold)
	t.Logf("golden paths from torchsde %s, torch %s", gold.Torchsde, gold.Torch)
	for _, pr := range inc.Problems {
		noise := torchsdeNoises[pr.Noise]
		m, params, y0 := torchsdeSDE(pr.Noise)
		for _, p := range params {
			d, ok := pr.Params[p.Name]
			if !ok || len(d.Data) != p.Value.Len() {
				t.Fatalf("%s: parameter %s missing or of the wrong size in %s", pr.Noise, p.Name, torchsdeIncrements)
			}
			copy(p.Value.Data(), d.Data)
		}
		path := &replay{shape: pr.Shape, dt: inc.Dt, steps: pr.Steps}
		for _, c := range torchsdeCases(pr.Noise) {
			t.Run(pr.Noise+"/"+c.key, func(t *testing.T) {
				want, ok := gold.Paths[pr.Noise][c.key]
				if !ok {
					t.Fatalf("no torchsde path for %s/%s in %s", pr.Noise, c.key, torchsdePaths)
				}
				tp := autograd.NewTape(engine64())
				tp.SetNoGrad(true)
				defer tp.Release()
				ys, _, err := Solve[float64](tp, m, tp.Const(y0.Value), inc.Ts, path, Options{Method: c.method, Noise: noise, Step: inc.Dt, DerivativeFree: c.free})
				if err != nil {
					t.Fatal(err)
				}
				if len(ys) != len(want) {
					t.Fatalf("%d outputs, torchsde %d", len(ys), len(want))
				}
				worst := 0.0
				for k, y := range ys {
					got := y.Value().ReadData()
					if len(got) != len(want[k]) {
						t.Fatalf("output %d: %d elements, torchsde %d", k, len(got), len(want[k]))
					}
					for i, v := range got {
						e := math.Abs(v-want[k][i]) / math.Max(1, math.Abs(want[k][i]))
						worst = math.Max(worst, e)
						if !(e <= 1e-13) {
							t.Errorf("y(%g)[%d] = %.17g, torchsde %.17g", inc.Ts[k], i, v, want[k][i])
						}
					}
				}
				t.Logf("largest relative difference %.2g", worst)
			})
		}
	}
}

// writeTorchsdeIncrements writes the problems and the increments of a
// Brownian tree's grid of steps.
func writeTorchsdeIncrements(t *testing.T) {
	doc := torchsdeIncrementsDoc{Ts: []float64{0, 0.25, 0.5, 0.75, 1}, Dt: 1.0 / 8}
	for _, name := range []string{"diagonal", "scalar", "general", "additive"} {
		_, params, _ := torchsdeSDE(name)
		pr := torchsdeProblem{Noise: name, Shape: newNeural(torchsdeNoises[name], 3).pathShape(), Params: map[string]tensorDoc{}}
		for _, p := range params {
			pr.Params[p.Name] = tensorDoc{Shape: p.Value.Shape(), Data: p.Value.ReadData()}
		}
		b := mustBrownian[float64](t, 0, 1, pr.Shape, BrownianOptions{Seed: 36})
		for k := range 8 {
			w, h := mustArea(t, b, float64(k)*doc.Dt, float64(k+1)*doc.Dt)
			pr.Steps = append(pr.Steps, stepDoc{T0: float64(k) * doc.Dt, W: w, H: h})
		}
		doc.Problems = append(doc.Problems, pr)
	}
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(torchsdeIncrements), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torchsdeIncrements, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestTorchsdeGradients: on the problems and increments of
// TestTorchsdePaths, the loss L = Σ over the output times of Σ y²/2 and its
// gradients with respect to every parameter and y0 equal torchsde's
// (backpropagated through sdeint) to a relative 1e-12: Backprop for every
// method, Checkpoint with a budget of 3 states for the methods that carry
// nothing between steps, and the Reversible gradient against both
// torchsde's backpropagation and its algebraically reversible adjoint
// (sdeint_adjoint with adjoint_reversible_heun).
func TestTorchsdeGradients(t *testing.T) {
	var inc torchsdeIncrementsDoc
	readJSON(t, torchsdeIncrements, &inc)
	var gold torchsdePathsDoc
	readJSON(t, torchsdePaths, &gold)
	for _, pr := range inc.Problems {
		noise := torchsdeNoises[pr.Noise]
		m, params, y0 := torchsdeSDE(pr.Noise)
		for _, p := range params {
			copy(p.Value.Data(), pr.Params[p.Name].Data)
		}
		path := &replay{shape: pr.Shape, dt: inc.Dt, steps: pr.Steps}
		for _, c := range torchsdeCases(pr.Noise) {
			type mode struct {
				name string
				grad GradMode
				opt  Options
				key  string // torchsde's result compared with
			}
			modes := []mode{{"backprop", Backprop{}, Options{}, c.key}}
			if c.method == ReversibleHeun {
				modes = append(modes, mode{"reversible", Reversible{}, Options{}, c.key}, mode{"reversible/adjoint", Reversible{}, Options{}, c.key + "_adjoint"})
			} else {
				modes = append(modes, mode{"checkpoint", Recursive{Budget: 3}, Options{}, c.key})
			}
			for _, md := range modes {
				t.Run(pr.Noise+"/"+c.key+"/"+md.name, func(t *testing.T) {
					want, ok := gold.Grads[pr.Noise][md.key]
					if !ok {
						t.Fatalf("no torchsde gradients for %s/%s in %s", pr.Noise, md.key, torchsdePaths)
					}
					autograd.ZeroGrads(params)
					tp := autograd.NewTape(engine64())
					defer tp.Release()
					opt := md.opt
					opt.Method, opt.Noise, opt.Step, opt.DerivativeFree, opt.Mode = c.method, noise, inc.Dt, c.free, md.grad
					ys, _, err := Solve[float64](tp, m, tp.Param(y0), inc.Ts, path, opt)
					if err != nil {
						t.Fatal(err)
					}
					var l autograd.Var[float64]
					for k, y := range ys {
						term := autograd.Scale(autograd.Sum(autograd.Square(y)), 0.5)
						if k == 0 {
							l = term
						} else {
							l = autograd.Add(l, term)
						}
					}
					if err := tp.Backward(l); err != nil {
						t.Fatal(err)
					}
					if e := math.Abs(l.Item()-want.Loss) / math.Abs(want.Loss); !(e <= 1e-13) {
						t.Errorf("loss %.17g, torchsde %.17g", l.Item(), want.Loss)
					}
					worst := 0.0
					for _, p := range params {
						w := want.Grads[p.Name]
						if len(w) != p.Grad.Len() {
							t.Fatalf("%s: %d gradient elements, torchsde %d", p.Name, p.Grad.Len(), len(w))
						}
						scale := 0.0
						for _, v := range w {
							scale = math.Max(scale, math.Abs(v))
						}
						for i, v := range p.Grad.ReadData() {
							e := math.Abs(v-w[i]) / math.Max(scale, 1e-300)
							worst = math.Max(worst, e)
							if !(e <= 1e-12) {
								t.Errorf("∂L/∂%s[%d] = %.17g, torchsde %.17g", p.Name, i, v, w[i])
							}
						}
					}
					t.Logf("largest difference relative to the largest element %.2g", worst)
				})
			}
		}
	}
}
