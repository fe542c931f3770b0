package odeblock_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestBlockTimesErrors: a block whose Times is not two or more finite,
// strictly monotone times — one time, an empty non-nil slice, NaN, a
// repeated time — returns an error naming Block.Times from Forward,
// Trajectory, ForwardEvent and a sharded Forward, in every gradient mode,
// before the dynamics are evaluated. One output time and an empty Times
// panicked ("index out of range [1]", "makeslice: len out of range").
func TestBlockTimesErrors(t *testing.T) {
	evals := 0
	field := odeblock.FieldFunc(nil, func(tp *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] {
		evals++
		return autograd.Neg(h)
	})
	height := func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
		return autograd.Sum(z)
	}
	for _, ts := range [][]float64{{0.5}, {}, {0, math.NaN()}, {math.Inf(-1), 1}, {0, 1, 1}, {0, 1, 0.5}} {
		for _, mode := range modes {
			for _, call := range []string{"Forward", "Trajectory", "ForwardEvent", "sharded Forward"} {
				name := fmt.Sprintf("%v/%v/%s", ts, mode, call)
				b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: ts, Mode: mode}
				if call == "sharded Forward" {
					b.Shards = 2
				}
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				z0 := tp.Const(tensor.FromSlice([]float64{1, 2, 3, 4}, 2, 2))
				var err error
				func() {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					switch call {
					case "Trajectory":
						_, err = b.Trajectory(tp, z0)
					case "ForwardEvent":
						_, _, err = b.ForwardEvent(tp, z0, height, 0)
					default:
						_, err = b.Forward(tp, z0)
					}
				}()
				if err == nil || !strings.Contains(err.Error(), "Block.Times") || strings.HasPrefix(err.Error(), "panic") {
					t.Errorf("%s: got %v, want an error naming Block.Times", name, err)
				}
			}
		}
	}
	if evals != 0 {
		t.Errorf("the dynamics were evaluated %d times before the times were checked", evals)
	}
	// The messages name the offending times.
	for msg, times := range map[string][]float64{
		"Times[2] = 0.5 after Times[1] = 1": {0, 1, 0.5},
		"Times[1] = NaN":                    {0, math.NaN()},
		"got 1: [0.5]":                      {0.5},
	} {
		b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: times}
		tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
		if _, err := b.Forward(tp, tp.Const(tensor.FromSlice([]float64{1, 2}, 1, 2))); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Times %v: got %v, want %q in the error", times, err, msg)
		}
	}
}

// TestForwardEventOneElementShapes: an event function may return its one
// element in any shape ([1], [1, 1], [1, 1, 1]); the event time and its
// gradients are those of the [1] version, in every gradient mode, and
// match central differences. An event function of two elements is an
// error naming its shape. ([1, 1] panicked in every mode: "cotangent of
// shape [1] does not match output shape [1 1]".)
func TestForwardEventOneElementShapes(t *testing.T) {
	z0, gamma, field := thrownBall()
	heightIn := func(shape ...int) odeblock.EventFunc[float64] {
		return func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] {
			return autograd.Reshape(autograd.Narrow(autograd.Reshape(z, 2), 0, 0, 1), shape...)
		}
	}
	h0, v0, g := 2.0, 1.5, 9.81
	exact := (v0 + math.Sqrt(v0*v0+2*g*h0)) / g
	for _, mode := range modes {
		for _, shape := range [][]int{{1}, {1, 1}, {1, 1, 1}} {
			t.Run(fmt.Sprintf("%v/%v", mode, shape), func(t *testing.T) {
				b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 10}, Mode: mode,
					Solver: odeblock.Options{RTol: 1e-10, ATol: 1e-10}}
				loss := func(tp *autograd.Tape[float64]) (autograd.Var[float64], error) {
					te, ze, err := b.ForwardEvent(tp, tp.Param(z0), heightIn(shape...), -1)
					if err != nil {
						return autograd.Var[float64]{}, err
					}
					v := autograd.Narrow(autograd.Reshape(ze, 2), 0, 1, 1)
					return autograd.Add(te, autograd.Scale(v, 0.1)), nil
				}
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				te, _, err := b.ForwardEvent(tp, tp.Param(z0), heightIn(shape...), -1)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(float64(te.Item())-exact) > 1e-8 {
					t.Errorf("event time %v, exact %v", te.Item(), exact)
				}
				opt := autograd.GradCheckOptions{Step: 1e-5, AbsTol: 1e-6, RelTol: 1e-5}
				if rep, err := autograd.CheckGradients(loss, []*autograd.Param[float64]{z0, gamma}, opt); err != nil {
					t.Fatalf("%v\n%v", err, rep)
				}
			})
		}
	}
	b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 10}}
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	two := func(tp *autograd.Tape[float64], _ float64, z autograd.Var[float64]) autograd.Var[float64] { return z }
	if _, _, err := b.ForwardEvent(tp, tp.Param(z0), two, -1); err == nil || !strings.Contains(err.Error(), "[1 2]") {
		t.Errorf("an event function of shape [1 2]: got %v, want an error naming the shape", err)
	}
}
