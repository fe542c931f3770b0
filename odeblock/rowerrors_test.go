package odeblock_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// rowsProblem is an AdamNODE (or NODE) over a tanh MLP field on [B, d]
// with a batch of random initial states, for Block.RowErrors' tests.
type rowsProblem[T tensor.Float] struct {
	fam    odeblock.Family
	dyn    odeblock.Dynamics[T]
	h0, m0 *tensor.Tensor[T]
	d      int
	shards int // Block.Shards of the batch's solve, on an engine of two workers
}

func newRowsProblem[T tensor.Float](fam odeblock.Family, batch, d int, seed uint64, quiet bool) *rowsProblem[T] {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := layers.NewSequential[T](layers.TimeConcat[T]{}, layers.NewLinear[T](rng, d+1, 32), layers.Tanh[T]{}, layers.NewLinear[T](rng, 32, d))
	dyn, _ := odeblock.NewFamily[T](fam, f, odeblock.PaperScalars())
	p := &rowsProblem[T]{fam: fam, dyn: dyn, h0: tensor.New[T](batch, d), m0: tensor.New[T](batch, d), d: d}
	for r := range batch {
		scale := math.Exp(3 * rng.NormFloat64()) // rows of very different sizes
		if quiet && r > 0 {
			scale = 0 // still rows about the field's bias alone
		}
		for j := range d {
			p.h0.Data()[r*d+j] = T(scale * rng.NormFloat64())
			p.m0.Data()[r*d+j] = T(min(scale, 1) * rng.NormFloat64())
		}
	}
	return p
}

// solve returns h(1) of the rows lo..hi−1 solved as one batch.
func (p *rowsProblem[T]) solve(t *testing.T, lo, hi int, rowErrors bool, opt odeblock.Options) []T {
	t.Helper()
	b := &odeblock.Block[T]{Dynamics: p.dyn, Solver: opt, RowErrors: rowErrors, Shards: p.shards}
	tp := autograd.NewTape(tensor.EngineFor[T](tensor.Gonum(max(p.shards, 1))))
	tp.SetNoGrad(true)
	h0 := tp.Const(p.h0.Slice(lo, hi))
	z, err := b.Forward(tp, odeblock.InitialState(p.fam, h0, tp.Const(p.m0.Slice(lo, hi))))
	if err != nil {
		t.Fatal(err)
	}
	return append([]T(nil), odeblock.Part(z, 0, p.fam.Parts).Value().ReadData()...)
}

// aloneGap returns the largest |batched − alone| over the first rows of
// the batch's outputs, in units of the tolerance at the answer alone
// (ATol + RTol·|alone|).
func aloneGap[T tensor.Float](t *testing.T, p *rowsProblem[T], rows int, rowErrors bool, opt odeblock.Options) float64 {
	batched := p.solve(t, 0, p.h0.Dim(0), rowErrors, opt)
	worst := 0.0
	for r := range rows {
		alone := p.solve(t, r, r+1, rowErrors, opt)
		for j, a := range alone {
			gap := math.Abs(float64(batched[r*p.d+j]) - float64(a))
			worst = math.Max(worst, gap/(opt.ATol+opt.RTol*math.Abs(float64(a))))
		}
	}
	return worst
}

// TestRowErrorsAlone: with Block.RowErrors a row's answer in a batch of
// 64 agrees with its answer alone within rowsBound times the tolerance, in
// float64 and float32, for AdamNODE (three parts, a row strided across
// them) and NODE, among 63 random rows and among 63 still ones; with the
// whole state's norm the AdamNODE's row among still ones moves more than
// that (its error diluted among theirs: 17 tolerances when written).
func TestRowErrorsAlone(t *testing.T) {
	const rowsBound = 2
	opt := odeblock.Options{RTol: 1e-5, ATol: 1e-5}
	for _, famName := range []string{"adamnode", "node"} {
		fam, err := odeblock.FamilyNamed(famName)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			dt    string
			quiet bool
		}{{"float64", false}, {"float32", false}, {"float64", true}, {"float32", true}} {
			dt, quiet := c.dt, c.quiet
			checked := 8
			if quiet {
				checked = 1
			}
			name := fmt.Sprintf("%s/%s/quiet %v", fam.Name, dt, quiet)
			gap := func(rowErrors bool) float64 {
				if dt == "float32" {
					return aloneGap(t, newRowsProblem[float32](fam, 64, 4, 3, quiet), checked, rowErrors, opt)
				}
				return aloneGap(t, newRowsProblem[float64](fam, 64, 4, 3, quiet), checked, rowErrors, opt)
			}
			rows, whole := gap(true), gap(false)
			t.Logf("%s: largest |batched − alone| / tolerance: %.3g with RowErrors, %.3g with the whole state's norm", name, rows, whole)
			if rows > rowsBound {
				t.Errorf("%s: with RowErrors a row moves %.3g tolerances from its answer alone, want ≤ %d", name, rows, rowsBound)
			}
			if wholeFails := famName == "adamnode" && quiet; wholeFails && whole <= rowsBound {
				t.Errorf("%s: with the whole state's norm a row moves %.3g tolerances, want > %d (else this test shows nothing)", name, whole, rowsBound)
			}
		}
	}
}

// TestRowErrorsSharded: the shards of a sharded solve (Block.Shards)
// control their rows' errors too: an AdamNODE row among still ones gets
// its answer alone, where with the whole state's norm it moves.
func TestRowErrorsSharded(t *testing.T) {
	opt := odeblock.Options{RTol: 1e-5, ATol: 1e-5}
	fam, err := odeblock.FamilyNamed("adamnode")
	if err != nil {
		t.Fatal(err)
	}
	p := newRowsProblem[float64](fam, 64, 4, 3, true)
	alone := p.solve(t, 0, 1, true, opt)
	p.shards = 2
	for _, rowErrors := range []bool{true, false} {
		batched := p.solve(t, 0, 64, rowErrors, opt)[:p.d]
		same := slices.Equal(batched, alone)
		if same != rowErrors {
			t.Errorf("RowErrors %v, two shards: row 0 batched %v, alone %v: equal %v, want %v", rowErrors, batched, alone, same, rowErrors)
		}
	}
}

// TestRowErrorsParts: a state the dynamics' parts do not divide is an
// error naming its shape.
func TestRowErrorsParts(t *testing.T) {
	fam, err := odeblock.FamilyNamed("adamnode")
	if err != nil {
		t.Fatal(err)
	}
	p := newRowsProblem[float64](fam, 4, 3, 1, false)
	b := &odeblock.Block[float64]{Dynamics: p.dyn, RowErrors: true}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
	_, err = b.Forward(tp, tp.Const(tensor.New[float64](10, 3)))
	if err == nil || !strings.Contains(err.Error(), "RowErrors: a state of shape [10 3]") {
		t.Errorf("Forward of a [10 3] AdamNODE state with RowErrors: error %v, want one naming the shape", err)
	}
}

// TestRowErrorsWithGradients: a forward solve with RowErrors is
// differentiated in every gradient mode (the adjoint's backward solve
// keeps its own error norm), and its gradients agree with those of the
// forward solved without it to the tolerances.
func TestRowErrorsWithGradients(t *testing.T) {
	fam, err := odeblock.FamilyNamed("adamnode")
	if err != nil {
		t.Fatal(err)
	}
	p := newRowsProblem[float64](fam, 4, 3, 2, false)
	params := p.dyn.Params()
	for _, name := range odeblock.GradModeNames() {
		mode, err := odeblock.ParseGradMode(name)
		if err != nil {
			t.Fatal(err)
		}
		grads := func(rowErrors bool) []float64 {
			autograd.ZeroGrads(params)
			b := &odeblock.Block[float64]{Dynamics: p.dyn, Mode: mode, RowErrors: rowErrors, Solver: odeblock.Options{RTol: 1e-8, ATol: 1e-8}}
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Gonum(1)))
			z, err := b.Forward(tp, odeblock.InitialState(p.fam, tp.Const(p.h0), tp.Const(p.m0)))
			if err != nil {
				t.Fatalf("%s: Forward: %v", name, err)
			}
			if err := tp.Backward(autograd.Sum(autograd.Square(odeblock.Part(z, 0, 3)))); err != nil {
				t.Fatalf("%s, RowErrors %v: Backward: %v", name, rowErrors, err)
			}
			var g []float64
			for _, prm := range params {
				g = append(g, prm.Grad.ReadData()...)
			}
			return g
		}
		with, without := grads(true), grads(false)
		for i := range with {
			if math.Abs(with[i]-without[i]) > 1e-5*(1+math.Abs(without[i])) {
				t.Errorf("%s: gradient %d: %g with RowErrors, %g without", name, i, with[i], without[i])
				break
			}
		}
	}
}
