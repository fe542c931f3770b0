package optim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// elementwiseEngine is a CPU engine with an Elementwise (the host
// reference, counting its calls): the device path on the host.
type elementwiseEngine[T tensor.Float] struct {
	tensor.Engine[T]
	el *countingElementwise[T]
}

func (e elementwiseEngine[T]) Elementwise() tensor.Elementwise[T] { return e.el }

type countingElementwise[T tensor.Float] struct {
	tensor.Elementwise[T]
	calls int
}

func (c *countingElementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	c.calls++
	c.Elementwise.LinComb(z, base, coef, xs)
}

// deviceOptimizers names the optimizers with a device path, each made over
// params.
func deviceOptimizers[T tensor.Float]() map[string]func([]*autograd.Param[T]) interface {
	optim.Optimizer[T]
	UseEngine(tensor.Engine[T])
} {
	type opt = interface {
		optim.Optimizer[T]
		UseEngine(tensor.Engine[T])
	}
	return map[string]func([]*autograd.Param[T]) opt{
		"sgd": func(p []*autograd.Param[T]) opt { return optim.NewSGD(p, optim.SGDConfig{LR: 0.1}) },
		"sgd momentum": func(p []*autograd.Param[T]) opt {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.1, Momentum: 0.9, Dampening: 0.2, WeightDecay: 0.01})
		},
		"sgd nesterov": func(p []*autograd.Param[T]) opt {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.1, Momentum: 0.8, Nesterov: true})
		},
		"adam": func(p []*autograd.Param[T]) opt { return optim.NewAdam(p, optim.AdamDefaults()) },
		"adam l2": func(p []*autograd.Param[T]) opt {
			c := optim.AdamDefaults()
			c.LR, c.WeightDecay = 0.01, 0.05
			return optim.NewAdam(p, c)
		},
		"adamw": func(p []*autograd.Param[T]) opt {
			c := optim.AdamWDefaults()
			c.LR, c.WeightDecay = 0.01, 0.1
			return optim.NewAdamW(p, c)
		},
	}
}

// TestDeviceStep: with UseEngine on an engine that has an Elementwise,
// SGD and Adam update through it, and five steps give the host's
// parameters and buffers within the rounding of T arithmetic.
func TestDeviceStep(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testDeviceStep[float64](t, 1e-12) })
	t.Run("float32", func(t *testing.T) { testDeviceStep[float32](t, 2e-5) })
}

func testDeviceStep[T tensor.Float](t *testing.T, tol float64) {
	cpu := tensor.EngineFor[T](tensor.Gonum(1))
	for name, mk := range deviceOptimizers[T]() {
		t.Run(name, func(t *testing.T) {
			run := func(e tensor.Engine[T]) map[string][]T {
				rng := rand.New(rand.NewPCG(3, 4))
				ps := []*autograd.Param[T]{
					autograd.NewParam("w", tensor.RandN[T](rng, 0, 1, 3, 4)),
					autograd.NewParam("b", tensor.RandN[T](rng, 0, 1, 4)),
					autograd.NewParam("frozen", tensor.RandN[T](rng, 0, 1, 2)),
				}
				o := mk(ps)
				o.UseEngine(e)
				for range 5 {
					for _, p := range ps[:2] {
						p.Grad = tensor.RandN[T](rng, 0, 1, p.Value.Shape()...)
					}
					o.Step()
				}
				out := map[string][]T{}
				for _, p := range ps {
					out[p.Name] = append([]T(nil), p.Value.ReadData()...)
				}
				bufs, _, err := o.StateDict()
				if err != nil {
					t.Fatal(err)
				}
				for k, b := range bufs {
					out[k] = append([]T(nil), b.ReadData()...)
				}
				return out
			}
			want := run(cpu)
			el := &countingElementwise[T]{Elementwise: tensor.HostElementwise[T]()}
			got := run(elementwiseEngine[T]{Engine: cpu, el: el})
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(tol, tol)); diff != "" {
				t.Errorf("after five steps (−host +device):\n%s", diff)
			}
			if el.calls == 0 {
				t.Error("the optimizer did not use the engine's Elementwise")
			}
		})
	}
}

// ExampleAdam_UseEngine shows an optimizer told the engine its tape
// computes with: on a GPU engine its updates run there; on the CPU engine
// here it computes on the host, as always.
func ExampleAdam_UseEngine() {
	e := tensor.EngineFor[float64](tensor.Gonum(1))
	w := autograd.NewParam("w", tensor.FromSlice([]float64{1, -2}))
	opt := optim.NewAdam([]*autograd.Param[float64]{w}, optim.AdamDefaults())
	opt.UseEngine(e)
	w.Grad = tensor.FromSlice([]float64{0.5, -1})
	opt.Step()
	fmt.Printf("%.4f\n", w.Value.ReadData())
	// Output: [0.9990 -1.9990]
}
