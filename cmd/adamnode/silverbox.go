package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// silverboxFamilies are the six models of Figure 3, in the paper's order.
var silverboxFamilies = []string{"node", "anode", "sonode", "hbnode", "ghbnode", "adamnode"}

// silverboxModel is one untrained model: its dynamics, initial state and the
// number of parts of its state (h first).
type silverboxModel struct {
	dyn   odeblock.Dynamics[float64]
	z0    *tensor.Tensor[float64]
	parts int
}

// inputField is f([h, V1(t)]) = W·[h, V1(t)] + b: one Linear layer of the
// state and the measured input at t, linearly interpolated.
type inputField struct {
	lin   *layers.Linear[float64]
	input func(t float64) float64
}

func (f *inputField) Forward(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	return f.lin.Forward(tp, autograd.ConcatTime(h, f.input(t)))
}

func (f *inputField) Params() []*autograd.Param[float64] { return f.lin.Params() }

// newSilverboxModel builds the named family with a fresh PyTorch-style
// initialisation from rng. h has dim entries and starts at (y0, 0, …, 0);
// every other part starts at zero (AdamNODE: v0 = m0² = 0). The scalars are
// the paper's: γ_raw = −3, ξ_raw = 2, r1 = −5, r2 = 5, s(v) = √softplus(v) + ε.
func newSilverboxModel(name string, rng *rand.Rand, dim int, y0 float64, input func(float64) float64) silverboxModel {
	field := func(in, out int) *inputField {
		return &inputField{lin: layers.NewLinear[float64](rng, in+1, out), input: input}
	}
	state := func(parts, width int) *tensor.Tensor[float64] {
		z := tensor.New[float64](parts, width)
		z.Set(y0, 0, 0)
		return z
	}
	switch name {
	case "node":
		return silverboxModel{&odeblock.NODE[float64]{F: field(dim, dim)}, state(1, dim), 1}
	case "anode":
		// Augmented with as many zero dimensions as h has.
		return silverboxModel{&odeblock.NODE[float64]{F: field(2*dim, 2*dim)}, state(1, 2*dim), 1}
	case "sonode":
		return silverboxModel{&odeblock.SONODE[float64]{F: field(2*dim, dim)}, state(2, dim), 2}
	case "hbnode":
		return silverboxModel{odeblock.NewHBNODE[float64](field(dim, dim), -3), state(2, dim), 2}
	case "ghbnode":
		return silverboxModel{odeblock.NewGHBNODE[float64](field(dim, dim), -3, 2), state(2, dim), 2}
	default: // adamnode
		return silverboxModel{odeblock.NewAdamNODE[float64](field(dim, dim), -5, 5, odeblock.ScaleSoftplus), state(3, dim), 3}
	}
}

// solveNorms solves the model over t = 0, 1, …, T−1 and returns |h(t)| and
// |z(t)| (the whole state) at each. When the solve fails (a blow-up) the
// norms from then on are +Inf and the error is returned with them.
func solveNorms(m silverboxModel, steps int, tol float64) (hn, zn []float64, err error) {
	eng := tensor.EngineFor[float64](tensor.Default())
	tp := autograd.NewTape(eng)
	tp.SetNoGrad(true)
	shape := m.z0.Shape()
	f := func(t float64, y, dy []float64) error {
		tp.Reset()
		out := m.dyn.Eval(tp, t, tp.Const(tensor.FromSlice(y, shape...)))
		copy(dy, out.Value().Data())
		return nil
	}
	s, err := odeblock.NewSolver[float64](odeblock.Options{RTol: tol, ATol: tol, MaxSteps: 100000})
	if err != nil {
		return nil, nil, err
	}
	y := append([]float64(nil), m.z0.Data()...)
	out := [][]float64{make([]float64, len(y)), make([]float64, len(y))}
	norms := func(z []float64) (float64, float64) {
		h := tensor.FromSlice(z[:len(z)/m.parts])
		return h.Norm2(), tensor.FromSlice(z).Norm2()
	}
	a, b := norms(y)
	hn, zn = append(hn, a), append(zn, b)
	// One interval at a time: the input is piecewise linear with knots at
	// the integers, and a blow-up keeps the norms before it.
	for k := 0; k+1 < steps; k++ {
		if _, err = s.Solve(f, y, []float64{float64(k), float64(k + 1)}, out); err != nil {
			for len(hn) < steps {
				hn, zn = append(hn, math.Inf(1)), append(zn, math.Inf(1))
			}
			return hn, zn, err
		}
		copy(y, out[1])
		a, b := norms(y)
		hn, zn = append(hn, a), append(zn, b)
	}
	return hn, zn, nil
}

func runSilverbox(ctx context.Context, args []string, out io.Writer) error {
	fset := newFlags("silverbox")
	path := fset.String("data", filepath.Join("..", "shared", "data", "silverbox", "sb.csv"), "the Silverbox recording (CSV with V1, V2)")
	dir := fset.String("out", "out/silverbox", "directory for the CSV, the Markdown table and the PNGs")
	inits := fset.Int("inits", 10, "random initialisations per model")
	steps := fset.Int("steps", 64, "time points t = 0, 1, …, steps−1")
	dim := fset.Int("dim", 4, "dimension of h")
	tol := fset.Float64("tol", 1e-7, "solver tolerance (rtol = atol, dopri5)")
	seed := fset.Uint64("seed", 1, "seed of the first initialisation")
	if err := parseFlags(fset, args, out); err != nil {
		return err
	}
	switch {
	case *inits < 1:
		return usagef("silverbox: --inits must be at least 1, got %d", *inits)
	case *steps < 2:
		return usagef("silverbox: --steps must be at least 2, got %d", *steps)
	case *dim < 1:
		return usagef("silverbox: --dim must be at least 1, got %d", *dim)
	case !(*tol > 0 && *tol < 1):
		return usagef("silverbox: --tol must be in (0, 1), got %g", *tol)
	}
	sb, err := data.LoadSilverbox(*path, data.SilverboxReference())
	if errors.Is(err, fs.ErrNotExist) {
		return usagef("silverbox: no recording at %s: pass --data PATH to the Silverbox CSV", *path)
	}
	if err != nil {
		return err
	}
	if sb.Len() < *steps {
		return usagef("silverbox: %s has %d samples, fewer than --steps %d", *path, sb.Len(), *steps)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}

	var csv strings.Builder
	csv.WriteString("model,init,t,h_norm,state_norm\n")
	// Geometric means over the initialisations, per model and time.
	logH := map[string][]float64{}
	logZ := map[string][]float64{}
	var notes []string
	for _, name := range silverboxFamilies {
		logH[name], logZ[name] = make([]float64, *steps), make([]float64, *steps)
		for i := 0; i < *inits; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			rng := rand.New(rand.NewPCG(*seed+uint64(i), 0x5b))
			m := newSilverboxModel(name, rng, *dim, sb.Output(0), sb.Input)
			hn, zn, err := solveNorms(m, *steps, *tol)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s init %d: %v", name, i, err))
			}
			for t := range hn {
				fmt.Fprintf(&csv, "%s,%d,%d,%.6g,%.6g\n", name, i, t, hn[t], zn[t])
				logH[name][t] += math.Log10(hn[t]) / float64(*inits)
				logZ[name][t] += math.Log10(zn[t]) / float64(*inits)
			}
		}
	}
	if err := saveText(filepath.Join(*dir, "norms.csv"), csv.String()); err != nil {
		return err
	}

	ts := make([]float64, *steps)
	for i := range ts {
		ts[i] = float64(i)
	}
	for _, fig := range []struct {
		file, label string
		logs        map[string][]float64
	}{
		{"h_norm.png", "|h(t)| (geometric mean)", logH},
		{"state_norm.png", "|(h, m, v)(t)| (geometric mean)", logZ},
	} {
		var ss []series
		for _, name := range silverboxFamilies {
			ys := make([]float64, len(ts))
			for t, l := range fig.logs[name] {
				ys[t] = math.Pow(10, l)
			}
			ss = append(ss, series{name: name, xs: ts, ys: ys})
		}
		p, err := linePlot(fmt.Sprintf("Silverbox, untrained, %d inits", *inits), "t", fig.label, true, ss)
		if err != nil {
			return err
		}
		if err := savePNG(p, 6, 4.5, filepath.Join(*dir, fig.file)); err != nil {
			return err
		}
	}

	last := *steps - 1
	var md strings.Builder
	fmt.Fprintf(&md, "Untrained models on the Silverbox recording (%s, mean removed, ×100), f = Linear([h, V1(t)]), dim h = %d, %d initialisations, dopri5 at %g. Geometric means over the initialisations of the norms at t = %d.\n\n", filepath.Base(*path), *dim, *inits, *tol, last)
	fmt.Fprintf(&md, "| model | log10 ‖h(%d)‖ | log10 ‖state(%d)‖ |\n|---|---|---|\n", last, last)
	for _, name := range silverboxFamilies {
		fmt.Fprintf(&md, "| %s | %.2f | %.2f |\n", name, logH[name][last], logZ[name][last])
	}
	fmt.Fprintf(&md, "\nRatios at t = %d (the paper quotes about 1e18 for HBNODE and 1e12 for NODE, GHBNODE similar to AdamNODE):\n\n", last)
	fmt.Fprintf(&md, "| ratio | by ‖h‖ | by the whole state |\n|---|---|---|\n")
	for _, other := range []string{"hbnode", "node", "ghbnode"} {
		fmt.Fprintf(&md, "| %s / adamnode | 1e%.1f | 1e%.1f |\n", other, logH[other][last]-logH["adamnode"][last], logZ[other][last]-logZ["adamnode"][last])
	}
	if len(notes) > 0 {
		fmt.Fprintf(&md, "\nSolves that failed (norms +Inf from then on):\n\n")
		for _, n := range notes {
			fmt.Fprintf(&md, "- %s\n", n)
		}
	}
	if err := saveText(filepath.Join(*dir, "table.md"), md.String()); err != nil {
		return err
	}
	fmt.Fprint(out, md.String())
	fmt.Fprintf(out, "wrote %s\n", *dir)
	return nil
}
