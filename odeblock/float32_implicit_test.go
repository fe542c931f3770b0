package odeblock_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// implicitRun returns the loss and every parameter gradient of family fam
// solved by opt in mode, in T, from parameters drawn in float64 with a
// fixed seed (so that float32 and float64 runs start from the same values,
// rounded).
func implicitRun[T tensor.Float](t *testing.T, fam odeblock.Family, opt odeblock.Options, mode odeblock.GradMode) []float64 {
	t.Helper()
	const rows, width = 3, 4
	rng := rand.New(rand.NewPCG(7, 11))
	draw := func(sd float64, shape ...int) *tensor.Tensor[T] {
		x := tensor.New[T](shape...)
		for i := range x.Data() {
			x.Data()[i] = T(rng.NormFloat64() * sd)
		}
		return x
	}
	in := width
	if fam.Name == "anode" {
		in = width + 2
	}
	fin := in
	if fam.Name == "sonode" {
		fin = 2 * in
	}
	w := autograd.NewParam("w", draw(0.5, fin, in))
	b := autograd.NewParam("b", draw(0.1, in))
	f := odeblock.FieldFunc([]*autograd.Param[T]{w, b}, func(tp *autograd.Tape[T], _ float64, h autograd.Var[T]) autograd.Var[T] {
		return autograd.Tanh(autograd.Add(autograd.MatMul(h, tp.Param(w)), tp.Param(b)))
	})
	dyn, own := odeblock.NewFamily[T](fam, f, odeblock.PaperScalars())
	x := autograd.NewParam("x", draw(1, rows, width))
	m0 := autograd.NewParam("m0", draw(0.5, rows, in))
	params := append([]*autograd.Param[T]{x, m0, w, b}, own...)
	blk := &odeblock.Block[T]{Dynamics: dyn, Times: []float64{0, 0.7}, Mode: mode, Solver: opt}
	tp := autograd.NewTape(tensor.EngineFor[T](tensor.Gonum(1)))
	h0 := tp.Param(x)
	if fam.Name == "anode" {
		h0 = odeblock.AugmentChannels(tp, h0, 2)
	}
	z, err := blk.Trajectory(tp, odeblock.InitialState(fam, h0, tp.Param(m0)))
	if err != nil {
		t.Fatalf("%T forward: %v", T(0), err)
	}
	loss := autograd.Mean(autograd.Square(z))
	if err := tp.Backward(loss); err != nil {
		t.Fatalf("%T backward: %v", T(0), err)
	}
	got := []float64{float64(loss.Value().ReadData()[0])}
	for _, p := range params {
		if p.Grad != nil {
			for _, v := range p.Grad.ReadData() {
				got = append(got, float64(v))
			}
		}
	}
	return got
}

// TestImplicitFloat32Gradients trains nothing: it checks that every family
// solved in float32 by the Rosenbrock and BDF methods, in the Adjoint and
// Backprop modes, gives the loss and gradients of the same solve in
// float64 to float32's accuracy (the methods' Jacobians by finite
// differences failed in float32 before).
func TestImplicitFloat32Gradients(t *testing.T) {
	for _, fam := range odeblock.Families() {
		for _, method := range []string{"bdf", "rosenbrock23"} {
			for _, mode := range []odeblock.GradMode{odeblock.Adjoint{}, odeblock.Backprop{}} {
				opt := odeblock.Options{Method: method, RTol: 1e-5, ATol: 1e-6}
				t.Run(fam.Name+"/"+method+"/"+fmt.Sprint(mode), func(t *testing.T) {
					want := implicitRun[float64](t, fam, opt, mode)
					got := implicitRun[float32](t, fam, opt, mode)
					if d := cmp.Diff(want, got, cmpopts.EquateApprox(2e-3, 1e-4)); d != "" {
						t.Errorf("float32 loss and gradients against float64's (-want +got):\n%s", d)
					}
				})
			}
		}
	}
}
