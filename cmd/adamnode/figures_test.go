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
	"strings"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// silverboxCSV is the real recording, beside the repository.
const silverboxCSV = "../../../shared/data/silverbox/sb.csv"

func needSilverbox(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(silverboxCSV); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Silverbox recording is missing: %v", err)
		}
		t.Skip("no Silverbox recording beside the repository")
	}
}

// TestSilverbox runs Figure 3 small and checks its outputs and the paper's
// qualitative claim: HBNODE's and NODE's ‖h‖ grow far past AdamNODE's.
func TestSilverbox(t *testing.T) {
	needSilverbox(t)
	dir := t.TempDir()
	var out bytes.Buffer
	err := runSilverbox(context.Background(), []string{"--data", silverboxCSV, "--out", dir, "--inits", "3", "--steps", "40"}, &out)
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
	if lines[0] != "model,init,t,h_norm,state_norm" || len(lines) != 1+6*3*40 {
		t.Errorf("norms.csv: header %q, %d lines", lines[0], len(lines))
	}
	// hbnode / adamnode ratio at t = 39, by ‖h‖: the paper's ordering.
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
	if r := ratio("hbnode"); r < 5 {
		t.Errorf("hbnode/adamnode at t=39 is 1e%.1f, want at least 1e5", r)
	}
	if r := ratio("node"); r < 3 {
		t.Errorf("node/adamnode at t=39 is 1e%.1f, want at least 1e3", r)
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
	m := newSilverboxModel("node", rand.New(rand.NewPCG(1, 1)), 2, 1, func(float64) float64 { return 0 })
	lin := m.dyn.(*odeblock.NODE[float64]).F.(*inputField).lin
	lin.Weight.Value.Fill(0)
	lin.Weight.Value.Set(40, 0, 0) // h0' = 40·h0: e^{40t} overflows before t = 20
	hn, zn, err := solveNorms(m, 20, 1e-7)
	if err == nil {
		t.Fatal("no error from a blow-up")
	}
	if len(hn) != 20 || len(zn) != 20 || !math.IsInf(hn[19], 1) || math.IsInf(hn[1], 0) || hn[1] < 1e10 {
		t.Errorf("norms %v", hn)
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
