package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// silverboxCSV is the repository's copy of the recording (gzip).
const silverboxCSV = "../../data/silverboxdata/sb.csv.gz"

// TestSilverbox runs Figure 3 small, from the built-in recording and from
// the file, in both settings, and checks its outputs and the paper's
// qualitative claim: HBNODE's and NODE's ‖h‖ grow far past AdamNODE's.
func TestSilverbox(t *testing.T) {
	for _, c := range []struct {
		args               []string
		steps              int
		minHBNODE, minNODE float64 // log10 of the ratios to AdamNODE at the last t
	}{
		// The paper's full setting: its magnitudes (1e18 and 1e12 in the
		// paper, 1e18.3 and 1e11.8 with seed 1).
		{[]string{"--inits", "10"}, 64, 15, 9},
		{[]string{"--inits", "3", "--data", silverboxCSV, "--mean", "geometric"}, 40, 0.5, 0.5},
		{[]string{"--inits", "3", "--setting", "zero-velocity", "--dim", "2"}, 40, 5, 3},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) { testSilverbox(t, c.args, c.steps, c.minHBNODE, c.minNODE) })
	}
}

func testSilverbox(t *testing.T, args []string, steps int, minHBNODE, minNODE float64) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := runSilverbox(context.Background(), append([]string{"--out", dir, "--steps", fmt.Sprint(steps)}, args...), &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"norms.csv", "table.md", "h_norm.png", "state_norm.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "norms.csv"))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	inits := 3
	if args[1] == "10" {
		inits = 10
	}
	if lines[0] != "model,init,t,h_norm,state_norm" || len(lines) != 1+6*inits*steps {
		t.Errorf("norms.csv: header %q, %d lines", lines[0], len(lines))
	}
	// hbnode / adamnode and node / adamnode ratios at the last t, by ‖h‖:
	// the paper's ordering.
	ratio := func(name string) float64 {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "| "+name+" / adamnode | 1e") {
				var v float64
				if _, err := fmtSscanf(strings.TrimPrefix(l, "| "+name+" / adamnode | 1e"), &v); err == nil {
					return v
				}
			}
		}
		t.Fatalf("no %s ratio in:\n%s", name, out.String())
		return 0
	}
	if r := ratio("hbnode"); r < minHBNODE {
		t.Errorf("hbnode/adamnode at t=%d is 1e%.1f, want at least 1e%g", steps-1, r, minHBNODE)
	}
	if r := ratio("node"); r < minNODE {
		t.Errorf("node/adamnode at t=%d is 1e%.1f, want at least 1e%g", steps-1, r, minNODE)
	}
}

func TestSilverboxBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--inits", "0"}, "--inits"},
		{[]string{"--data", filepath.Join(t.TempDir(), "none.csv")}, "--data"},
		{[]string{"--tol", "2"}, "--tol"},
		{[]string{"--setting", "paper"}, "--setting"},
		{[]string{"--mean", "median"}, "--mean"},
		{[]string{"--dim", "3"}, "--dim"},
		{[]string{"--setting", "zero-velocity", "--dim", "0"}, "--dim"},
		{[]string{"--nope"}, "nope"},
	} {
		err := runSilverbox(context.Background(), c.args, &bytes.Buffer{})
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want a usage error naming %q", c.args, err, c.want)
		}
	}
}

// TestSolveNormsBlowUp: a model whose state overflows reports the error
// and +Inf norms from then on, keeping the norms before.
func TestSolveNormsBlowUp(t *testing.T) {
	m := newSilverboxModel(odeblock.Families()[0], rand.New(rand.NewPCG(1, 1)), 2, 1, func(float64) float64 { return 0 })
	lin := m.dyn.(*odeblock.NODE[float64]).F.(*inputField).lin
	lin.Weight.Value.Fill(0)
	lin.Weight.Value.Set(40, 0, 0) // h0' = 40·h0: e^{40t} overflows before t = 20
	hn, zn, err := solveNorms(m.system(), 20, 1e-7)
	if err == nil {
		t.Fatal("no error from a blow-up")
	}
	if len(hn) != 20 || len(zn) != 20 || !math.IsInf(hn[19], 1) || math.IsInf(hn[1], 0) || hn[1] < 1e10 {
		t.Errorf("norms %v", hn)
	}
}

// TestAuthorsSystems checks each family's right-hand side in the authors'
// setting at a point against its formula, with the weights it drew.
func TestAuthorsSystems(t *testing.T) {
	const u = 0.5 // V1(t)
	input := func(float64) float64 { return u }
	sp := func(x float64) float64 { return math.Log1p(math.Exp(x)) }
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, fam := range silverboxFamilies {
		name := fam.Name
		rng := rand.New(rand.NewPCG(3, 4))
		sys := newAuthorsSystem(name, rng, 0.7, input)
		// Draw the same weights again: f's Linear, then the initial velocity.
		rng = rand.New(rand.NewPCG(3, 4))
		in := map[string]int{"node": 1, "anode": 2, "sonode": 2}[name]
		if in == 0 {
			in = 1
		}
		out := map[string]int{"anode": 2}[name]
		if out == 0 {
			out = 1
		}
		f := newAuthorsLinear(rng, in, out, input)
		var m0 float64
		if name != "node" && name != "anode" {
			m0 = 2*rng.Float64() - 1 // U(−1, 1): PyTorch's init of Linear(1, 1)
		}
		lin := func(o int, x ...float64) float64 {
			s := f.b[o] + f.w[o*(in+1)+in]*u
			for i, xi := range x {
				s += f.w[o*(in+1)+i] * xi
			}
			return s
		}
		z := []float64{0.3, -0.2, 0.4}[:len(sys.z0)]
		dz := make([]float64, len(z))
		if err := sys.rhs(1, z, dz); err != nil {
			t.Fatal(err)
		}
		var want, z0 []float64
		switch name {
		case "node":
			want, z0 = []float64{lin(0, z[0])}, []float64{0.7}
		case "anode":
			want, z0 = []float64{lin(0, z[0], z[1]), lin(1, z[0], z[1])}, []float64{0.7, 0}
		case "sonode":
			want, z0 = []float64{z[1], lin(0, z[0], z[1])}, []float64{0.7, m0}
		case "hbnode":
			want, z0 = []float64{-z[1], lin(0, z[0]) - sig(-3)*z[1] + sp(-100)*z[0]}, []float64{0.7, m0}
		case "ghbnode":
			want, z0 = []float64{-z[1], lin(0, z[0]) - sig(-3)*z[1] + math.Ln2*z[0]}, []float64{0.7, m0}
		case "adamnode":
			g := lin(0, z[0])
			want = []float64{-z[1] / (math.Sqrt(sp(z[2])) + 1e-8), sig(-5)*(-g-z[1]) + sp(-100)*z[0], sig(5)*(g*g-z[2]) + sp(-100)*z[0]}
			z0 = []float64{0.7, m0, m0 * m0}
		}
		for i := range want {
			if math.Abs(dz[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Errorf("%s: z' = %v, want %v", name, dz, want)
				break
			}
		}
		if !slices.EqualFunc(sys.z0, z0, func(a, b float64) bool { return math.Abs(a-b) < 1e-15 }) || sys.hLen != 1 {
			t.Errorf("%s: z0 = %v (h of %d), want %v (h of 1)", name, sys.z0, sys.hLen, z0)
		}
	}
	// GHBNODE's h' is clipped at ±5.
	sys := newAuthorsSystem("ghbnode", rand.New(rand.NewPCG(1, 1)), 0, input)
	dz := make([]float64, 2)
	for _, c := range []struct{ m, want float64 }{{-7, 5}, {7, -5}, {2, -2}} {
		_ = sys.rhs(0, []float64{0, c.m}, dz)
		if dz[0] != c.want {
			t.Errorf("ghbnode h' at m = %v is %v, want %v", c.m, dz[0], c.want)
		}
	}
}

// TestTrajectories runs Figure 1 and checks that gradient flow reaches the
// minimum of both functions, that every method has a row, and the PNGs.
func TestTrajectories(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := runTrajectories(context.Background(), []string{"--out", dir, "--samples", "50", "--tol", "1e-6"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"rosenbrock.png", "beale.png", "table.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		for _, fn := range []string{"rosenbrock", "beale"} {
			for _, m := range []string{"ODE", "HBODE", "AdamODE"} {
				if strings.HasPrefix(l, "| "+fn+" | "+m+" |") {
					rows++
					if m == "ODE" {
						var d float64
						cells := strings.Split(l, "|")
						if _, err := fmtSscanf(strings.TrimSpace(cells[4]), &d); err != nil || d > 1e-2 {
							t.Errorf("gradient flow on %s ends %v from the minimum (%v)", fn, d, err)
						}
					}
				}
			}
		}
	}
	if rows != 6 {
		t.Errorf("%d table rows, want 6:\n%s", rows, out.String())
	}
	if err := runTrajectories(context.Background(), []string{"--samples", "1"}, &bytes.Buffer{}); err == nil {
		t.Error("--samples 1 accepted")
	}
}

// TestFlowsDescend checks the three right-hand sides at a point against
// their formulas.
func TestFlowsDescend(t *testing.T) {
	p := flowParams{gamma: 0.5, a1: 2, a2: 3, eps: 1e-8}
	grad := func(x, y float64) (float64, float64) { return 2 * x, 4 * y }
	fl := flows(p, grad, [2]float64{1, 1})
	dy := make([]float64, 6)
	_ = fl[0].f(0, []float64{1, 2}, dy[:2])
	if dy[0] != -2 || dy[1] != -8 {
		t.Errorf("ODE: %v", dy[:2])
	}
	_ = fl[1].f(0, []float64{1, 2, 3, 4}, dy[:4])
	if dy[0] != -3 || dy[1] != -4 || dy[2] != 2-1.5 || dy[3] != 8-2 {
		t.Errorf("HBODE: %v", dy[:4])
	}
	_ = fl[2].f(0, []float64{1, 2, 3, 4, 4, 16}, dy)
	want := []float64{-3 / math.Sqrt(4+1e-8), -4 / math.Sqrt(16+1e-8), 2 * (2 - 3), 2 * (8 - 4), 3 * (4 - 4), 3 * (64 - 16)}
	for i := range want {
		if math.Abs(dy[i]-want[i]) > 1e-12 {
			t.Errorf("AdamODE: %v, want %v", dy, want)
			break
		}
	}
}

func fmtSscanf(s string, v *float64) (int, error) { return fmt.Sscanf(s, "%g", v) }
