package odeblock_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// hiddenIntegrals is a CNF's dynamics without its Integrals method: a
// user's own flow that does not know about IntegralParts.
type hiddenIntegrals struct{ odeblock.Dynamics[float64] }

// TestDriftColumnsSaid: a user's own flow whose log-density column drifts
// most in the adjoint's backward reconstruction (no IntegralParts) has the
// stretch re-solved — at a cost — and the block names the column first
// (DriftColumns) and says so once in the log, not at every pass; with
// the CNF's own Integrals that column is left out of the check.
func TestDriftColumnsSaid(t *testing.T) {
	ref := loadCNF(t)
	ps := map[string]*autograd.Param[float64]{}
	for _, n := range cnfParamNames {
		ps[n] = autograd.NewParam(n, ref.Params[n].tensor())
	}
	x := ref.X.tensor()
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	c := &odeblock.CNF[float64]{F: cnfField(ps)}
	pass := func(b *odeblock.Block[float64]) {
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		l, _, err := cnfLoss(tp, c, b, x)
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Backward(l); err != nil {
			t.Fatal(err)
		}
	}
	own := &odeblock.Block[float64]{Dynamics: hiddenIntegrals{c}, Times: []float64{0, 1.5}, Solver: odeblock.Options{RTol: 1e-4, ATol: 1e-4}}
	pass(own)
	pass(own)
	if own.Stats().Recovered == 0 {
		t.Fatalf("the flow without IntegralParts re-solved nothing (backward NFE %d): the test no longer shows a drift", own.Stats().Backward.NFE)
	}
	if cols := own.DriftColumns(); len(cols) == 0 || cols[0] != 2 {
		t.Errorf("DriftColumns %v, want the log-density's column 2 first", cols)
	}
	if n := strings.Count(logged.String(), "odeblock: the adjoint re-solved"); n != 1 {
		t.Errorf("said %d times in two passes, want once:\n%s", n, logged.String())
	}
	if !strings.Contains(logged.String(), "columns=\"[2 ") || !strings.Contains(logged.String(), "IntegralParts") {
		t.Errorf("the log does not name the column and IntegralParts:\n%s", logged.String())
	}
	logged.Reset()
	known := &odeblock.Block[float64]{Dynamics: c, Times: []float64{0, 1.5}, Solver: odeblock.Options{RTol: 1e-4, ATol: 1e-4}}
	pass(known)
	if cols := known.DriftColumns(); slices.Contains(cols, 2) {
		t.Errorf("with Integrals: columns %v drifted, want the log-density's column 2 left out", cols)
	}
	t.Logf("backward NFE without Integrals %d (%d re-solved), with %d", own.Stats().Backward.NFE, own.Stats().Recovered, known.Stats().Backward.NFE)
}
