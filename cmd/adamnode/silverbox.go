package main

import (
	"context"
	"errors"
	"flag"
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
	"github.com/adamnode/adamnode/data/silverboxdata"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// silverboxFamilies are the six models of Figure 3, in the paper's order.
var silverboxFamilies = odeblock.Families()

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

func (f *inputField) ForwardT(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) autograd.Var[float64] {
	return f.lin.Forward(tp, autograd.ConcatTime(h, f.input(t)))
}

func (f *inputField) Params() []*autograd.Param[float64] { return f.lin.Params() }

// newSilverboxModel builds the family fam of the zero-velocity setting
// with a fresh PyTorch-style initialisation from rng. h has dim entries and starts at (y0, 0, …, 0);
// every other part starts at zero (AdamNODE: v0 = m0² = 0). ANODE is
// augmented with as many zero dimensions as h has. The scalars are the
// paper's, odeblock.PaperScalars: γ_raw = −3, ξ_raw = 2, r1 = −5, r2 = 5,
// s(v) = √softplus(v) + ε.
func newSilverboxModel(fam odeblock.Family, rng *rand.Rand, dim int, y0 float64, input func(float64) float64) silverboxModel {
	width := dim
	if fam.Augment {
		width = 2 * dim
	}
	f := &inputField{lin: layers.NewLinear[float64](rng, fam.FieldIn*width+1, width), input: input}
	dyn, _ := odeblock.NewFamily[float64](fam, f, odeblock.PaperScalars())
	z0 := tensor.New[float64](fam.Parts, width)
	z0.Set(y0, 0, 0)
	return silverboxModel{dyn, z0, fam.Parts}
}

// silverboxSystem is one untrained model of Figure 3 as a plain right-hand
// side: z' = rhs(t, z), z(0) = z0, with h the first hLen entries of z.
type silverboxSystem struct {
	rhs  odeblock.Func[float64]
	z0   []float64
	hLen int
}

// system turns a model of the zero-velocity setting into a right-hand side
// evaluated through a no-grad tape.
func (m silverboxModel) system() silverboxSystem {
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
	return silverboxSystem{rhs: f, z0: m.z0.Data(), hLen: m.z0.Len() / m.parts}
}

// authorsLinear is f = W·[x, V1(t)] + b with PyTorch's default
// initialisation of nn.Linear(in+1, out).
type authorsLinear struct {
	w, b  []float64 // [out, in+1] and [out]
	in    int
	input func(t float64) float64
}

func newAuthorsLinear(rng *rand.Rand, in, out int, input func(float64) float64) authorsLinear {
	lin := layers.NewLinear[float64](rng, in+1, out)
	return authorsLinear{w: lin.Weight.Value.Data(), b: lin.Bias.Value.Data(), in: in, input: input}
}

// apply sets out = W·[x, V1(t)] + b.
func (l authorsLinear) apply(t float64, x, out []float64) {
	u := l.input(t)
	for o := range out {
		row := l.w[o*(l.in+1) : (o+1)*(l.in+1)]
		s := l.b[o] + row[l.in]*u
		for i, xi := range x {
			s += row[i] * xi
		}
		out[o] = s
	}
}

// newAuthorsSystem builds the named family in the setting of the authors'
// code (see runSilverbox's doc): h one-dimensional starting at y0, the
// initial velocity m0 = nn.Linear(1, 1, bias=False) of the constant 1 (so
// m0 ~ U(−1, 1)), ξ·h added to the velocity equations.
func newAuthorsSystem(name string, rng *rand.Rand, y0 float64, input func(float64) float64) silverboxSystem {
	const eps = 1e-8
	paper := odeblock.PaperScalars() // γ_raw and r1, r2; ξ is the authors' own
	initialVelocity := func() float64 {
		w := tensor.New[float64](1, 1)
		layers.KaimingUniform(rng, w, math.Sqrt(5), 1)
		return w.Data()[0]
	}
	var g [2]float64 // f's output
	switch name {
	case "node":
		f := newAuthorsLinear(rng, 1, 1, input)
		return silverboxSystem{func(t float64, z, dz []float64) error {
			f.apply(t, z, dz)
			return nil
		}, []float64{y0}, 1}
	case "anode":
		f := newAuthorsLinear(rng, 2, 2, input)
		return silverboxSystem{func(t float64, z, dz []float64) error {
			f.apply(t, z, dz)
			return nil
		}, []float64{y0, 0}, 1}
	case "sonode":
		f := newAuthorsLinear(rng, 2, 1, input)
		m0 := initialVelocity()
		return silverboxSystem{func(t float64, z, dz []float64) error {
			dz[0] = z[1]
			f.apply(t, z, dz[1:])
			return nil
		}, []float64{y0, m0}, 1}
	case "hbnode", "ghbnode":
		f := newAuthorsLinear(rng, 1, 1, input)
		m0 := initialVelocity()
		gamma := tensor.SigmoidOf(paper.GammaRaw)
		xi, clip := tensor.SoftplusOf(-100), math.Inf(1)
		if name == "ghbnode" {
			xi, clip = tensor.SoftplusOf(0), 5
		}
		return silverboxSystem{func(t float64, z, dz []float64) error {
			h, m := z[0], z[1]
			f.apply(t, z[:1], g[:1])
			dz[0] = min(max(-m, -clip), clip)
			dz[1] = g[0] - gamma*m + xi*h
			return nil
		}, []float64{y0, m0}, 1}
	default: // adamnode
		f := newAuthorsLinear(rng, 1, 1, input)
		m0 := initialVelocity()
		a1, a2, xi := tensor.SigmoidOf(paper.R1), tensor.SigmoidOf(paper.R2), tensor.SoftplusOf(-100)
		return silverboxSystem{func(t float64, z, dz []float64) error {
			h, m, v := z[0], z[1], z[2]
			f.apply(t, z[:1], g[:1])
			dz[0] = -m / (math.Sqrt(tensor.SoftplusOf(v)) + eps)
			dz[1] = a1*(-g[0]-m) + xi*h
			dz[2] = a2*(g[0]*g[0]-v) + xi*h
			return nil
		}, []float64{y0, m0, m0 * m0}, 1}
	}
}

// solveNorms solves the system over t = 0, 1, …, steps−1 and returns ‖h(t)‖
// and ‖z(t)‖ (the whole state) at each. When the solve fails (a blow-up) the
// norms from then on are +Inf and the error is returned with them.
func solveNorms(m silverboxSystem, steps int, tol float64) (hn, zn []float64, err error) {
	s, err := odeblock.NewSolver[float64](odeblock.Options{RTol: tol, ATol: tol, StepControl: odeblock.StepControl{MaxSteps: 100000}})
	if err != nil {
		return nil, nil, err
	}
	y := append([]float64(nil), m.z0...)
	out := [][]float64{make([]float64, len(y)), make([]float64, len(y))}
	norms := func(z []float64) (float64, float64) {
		return tensor.FromSlice(z[:m.hLen]).Norm2(), tensor.FromSlice(z).Norm2()
	}
	a, b := norms(y)
	hn, zn = append(hn, a), append(zn, b)
	// One interval at a time: the input is piecewise linear with knots at
	// the integers, and a blow-up keeps the norms before it.
	for k := 0; k+1 < steps; k++ {
		if _, err = s.Solve(m.rhs, y, []float64{float64(k), float64(k + 1)}, out); err != nil {
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

// Silverbox settings (--setting).
const (
	settingAuthors      = "authors"
	settingZeroVelocity = "zero-velocity"
)

// runSilverbox is Figure 3: untrained models of each family driven by the
// Silverbox input V1, their state norms over t = 0, 1, …, 63.
//
// The default setting is the authors' code's: h is one-dimensional and
// starts at V2[0]; f = nn.Linear([state part, V1(t)]) with PyTorch's
// initialisation; NODE has state h, ANODE (h, 0), SONODE (h, h') with
// f([h, h', V1]) = h”; the initial velocity of SONODE, HBNODE, GHBNODE and
// AdamNODE is a bias-free nn.Linear(1, 1) of the constant 1 (AdamNODE:
// v0 = m0²); HBNODE γ_raw = −3, ξ_raw = −100; GHBNODE γ_raw = −3, ξ_raw = 0,
// h' = hardtanh(−m) at ±5; AdamNODE r1 = −5, r2 = 5, ξ_raw = −100 on m' and
// v', s(v) = √softplus(v) + 1e-8; dopri5 at 1e-7; the arithmetic mean over
// the initialisations of each norm. --setting zero-velocity is this
// project's earlier reading of the paper's text: h of dimension --dim, all
// velocities zero, ξ_raw = 2.
func runSilverbox(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseSilverboxFlags(args, out)
	if err != nil {
		return err
	}
	sb, source, err := loadSilverbox(o.path)
	if err != nil {
		return err
	}
	if sb.Len() < o.steps {
		return usagef("silverbox: %s has %d samples, fewer than --steps %d", source, sb.Len(), o.steps)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	n, err := o.norms(ctx, sb)
	if err != nil {
		return err
	}
	if err := saveText(filepath.Join(o.dir, "norms.csv"), n.csv); err != nil {
		return err
	}
	if err := o.plot(n); err != nil {
		return err
	}
	md := o.table(source, n)
	if err := saveText(filepath.Join(o.dir, "table.md"), md); err != nil {
		return err
	}
	fmt.Fprint(out, md)
	fmt.Fprintf(out, "wrote %s\n", o.dir)
	return nil
}

// silverboxOptions are runSilverbox's flags.
type silverboxOptions struct {
	path, dir, setting, meanKind string
	inits, steps, dim            int
	tol                          float64
	seed                         uint64
}

// parseSilverboxFlags parses and checks runSilverbox's flags.
func parseSilverboxFlags(args []string, out io.Writer) (silverboxOptions, error) {
	var o silverboxOptions
	fset := newFlags("silverbox")
	fset.StringVar(&o.path, "data", "", "the Silverbox recording (CSV with V1, V2, plain or gzip); default: the copy built into adamnode")
	fset.StringVar(&o.dir, "out", "out/silverbox", "directory for the CSV, the Markdown table and the PNGs")
	fset.StringVar(&o.setting, "setting", settingAuthors, "authors (the authors' code: 1-D h, random initial velocity) or zero-velocity (h of dimension --dim, velocities zero)")
	fset.StringVar(&o.meanKind, "mean", "arithmetic", "mean of the norms over the initialisations: arithmetic (the authors') or geometric")
	fset.IntVar(&o.inits, "inits", 10, "random initialisations per model")
	fset.IntVar(&o.steps, "steps", 64, "time points t = 0, 1, …, steps−1")
	fset.IntVar(&o.dim, "dim", 4, "dimension of h (--setting zero-velocity only)")
	fset.Float64Var(&o.tol, "tol", 1e-7, "solver tolerance (rtol = atol, dopri5)")
	fset.Uint64Var(&o.seed, "seed", 1, "seed of the first initialisation")
	if err := parseFlags(fset, args, out); err != nil {
		return o, err
	}
	dimSet := false
	fset.Visit(func(f *flag.Flag) { dimSet = dimSet || f.Name == "dim" })
	switch {
	case o.setting != settingAuthors && o.setting != settingZeroVelocity:
		return o, usagef("silverbox: --setting must be %s or %s, got %q", settingAuthors, settingZeroVelocity, o.setting)
	case o.meanKind != "arithmetic" && o.meanKind != "geometric":
		return o, usagef("silverbox: --mean must be arithmetic or geometric, got %q", o.meanKind)
	case o.inits < 1:
		return o, usagef("silverbox: --inits must be at least 1, got %d", o.inits)
	case o.steps < 2:
		return o, usagef("silverbox: --steps must be at least 2, got %d", o.steps)
	case o.dim < 1:
		return o, usagef("silverbox: --dim must be at least 1, got %d", o.dim)
	case dimSet && o.setting == settingAuthors:
		return o, usagef("silverbox: --dim applies to --setting %s only (the authors' h is one-dimensional)", settingZeroVelocity)
	case !(o.tol > 0 && o.tol < 1):
		return o, usagef("silverbox: --tol must be in (0, 1), got %g", o.tol)
	}
	return o, nil
}

// silverboxNorms are the solves' results: every norm as CSV, and per model
// and time the mean over the initialisations of ‖h‖ and of ‖z‖, as log10.
type silverboxNorms struct {
	csv        string
	logH, logZ map[string][]float64
	notes      []string // the solves that failed
}

// norms solves every family from o.inits initialisations driven by sb.
func (o silverboxOptions) norms(ctx context.Context, sb *data.Silverbox) (silverboxNorms, error) {
	var csv strings.Builder
	csv.WriteString("model,init,t,h_norm,state_norm\n")
	n := silverboxNorms{logH: map[string][]float64{}, logZ: map[string][]float64{}}
	for _, fam := range silverboxFamilies {
		name := fam.Name
		hs, zs := make([][]float64, o.inits), make([][]float64, o.inits)
		for i := 0; i < o.inits; i++ {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			rng := rand.New(rand.NewPCG(o.seed+uint64(i), 0x5b))
			var sys silverboxSystem
			if o.setting == settingAuthors {
				sys = newAuthorsSystem(name, rng, sb.Output(0), sb.Input)
			} else {
				sys = newSilverboxModel(fam, rng, o.dim, sb.Output(0), sb.Input).system()
			}
			hn, zn, err := solveNorms(sys, o.steps, o.tol)
			if err != nil {
				n.notes = append(n.notes, fmt.Sprintf("%s init %d: %v", name, i, err))
			}
			for t := range hn {
				fmt.Fprintf(&csv, "%s,%d,%d,%.6g,%.6g\n", name, i, t, hn[t], zn[t])
			}
			hs[i], zs[i] = hn, zn
		}
		n.logH[name], n.logZ[name] = log10Mean(hs, o.meanKind), log10Mean(zs, o.meanKind)
	}
	n.csv = csv.String()
	return n, nil
}

// plot writes the figures of the state's and h's mean norms over time.
func (o silverboxOptions) plot(n silverboxNorms) error {
	ts := make([]float64, o.steps)
	for i := range ts {
		ts[i] = float64(i)
	}
	for _, fig := range []struct {
		file, label string
		logs        map[string][]float64
	}{
		{"state_norm.png", "‖state(t)‖, " + o.meanKind + " mean", n.logZ},
		{"h_norm.png", "‖h(t)‖, " + o.meanKind + " mean", n.logH},
	} {
		var ss []series
		for _, fam := range silverboxFamilies {
			ys := make([]float64, len(ts))
			for t, l := range fig.logs[fam.Name] {
				ys[t] = math.Pow(10, l)
			}
			ss = append(ss, series{name: fam.Name, xs: ts, ys: ys})
		}
		p, err := linePlot(fmt.Sprintf("Silverbox, untrained, %d inits (%s setting)", o.inits, o.setting), "t", fig.label, true, ss)
		if err != nil {
			return err
		}
		if err := savePNG(p, 7.5, 4.5, filepath.Join(o.dir, fig.file)); err != nil {
			return err
		}
	}
	return nil
}

// table returns the Markdown table of the norms at the last time and their
// ratios against the paper's claims, with the failed solves.
func (o silverboxOptions) table(source string, n silverboxNorms) string {
	last := o.steps - 1
	logH, logZ := n.logH, n.logZ
	var md strings.Builder
	if o.setting == settingAuthors {
		fmt.Fprintf(&md, "Untrained models on the Silverbox recording (%s, mean removed, ×100) in the authors' setting: h one-dimensional from V2[0], f = Linear([state part, V1(t)]), initial velocity U(−1, 1), %d initialisations, dopri5 at %g. The %s mean over the initialisations of each norm at t = %d.\n\n", source, o.inits, o.tol, o.meanKind, last)
	} else {
		fmt.Fprintf(&md, "Untrained models on the Silverbox recording (%s, mean removed, ×100), zero-velocity setting: f = Linear([h, V1(t)]), dim h = %d, velocities zero, %d initialisations, dopri5 at %g. The %s mean over the initialisations of each norm at t = %d.\n\n", source, o.dim, o.inits, o.tol, o.meanKind, last)
	}
	fmt.Fprintf(&md, "| model | log10 ‖h(%d)‖ | log10 ‖state(%d)‖ |\n|---|---|---|\n", last, last)
	for _, fam := range silverboxFamilies {
		fmt.Fprintf(&md, "| %s | %.2f | %.2f |\n", fam.Name, logH[fam.Name][last], logZ[fam.Name][last])
	}
	fmt.Fprintf(&md, "\nRatios at t = %d against the paper's claims (at t = 64):\n\n", last)
	fmt.Fprintf(&md, "| ratio | by ‖h‖ | by the whole state | the paper |\n|---|---|---|---|\n")
	for _, c := range []struct{ other, paper string }{{"hbnode", "~1e18"}, {"node", "~1e12"}, {"ghbnode", "similar (~1e0)"}} {
		fmt.Fprintf(&md, "| %s / adamnode | 1e%.1f | 1e%.1f | %s |\n", c.other, logH[c.other][last]-logH["adamnode"][last], logZ[c.other][last]-logZ["adamnode"][last], c.paper)
	}
	if len(n.notes) > 0 {
		fmt.Fprintf(&md, "\nSolves that failed (norms +Inf from then on):\n\n")
		for _, note := range n.notes {
			fmt.Fprintf(&md, "- %s\n", note)
		}
	}
	return md.String()
}

// loadSilverbox reads the recording at path with the reference
// preprocessing, or the built-in copy when path is empty, and returns the
// name to report it by.
func loadSilverbox(path string) (*data.Silverbox, string, error) {
	if path == "" {
		sb, err := silverboxdata.Load(data.SilverboxReference())
		return sb, "sb.csv", err
	}
	sb, err := data.LoadSilverbox(path, data.SilverboxReference())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", usagef("silverbox: --data %s: no such file", path)
	}
	return sb, filepath.Base(path), err
}

// log10Mean returns, at each time, log10 of the mean over the runs of
// norms[run][t]: the arithmetic mean, or the geometric one (the mean of the
// logarithms).
func log10Mean(norms [][]float64, kind string) []float64 {
	out := make([]float64, len(norms[0]))
	for t := range out {
		var s float64
		for _, n := range norms {
			if kind == "geometric" {
				s += math.Log10(n[t])
			} else {
				s += n[t]
			}
		}
		s /= float64(len(norms))
		if kind != "geometric" {
			s = math.Log10(s)
		}
		out[t] = s
	}
	return out
}
