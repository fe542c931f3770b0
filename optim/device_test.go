package optim_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
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
	calls   int
	written map[*tensor.Tensor[T]]bool // the tensors the optimizers' methods wrote
}

func (c *countingElementwise[T]) wrote(z *tensor.Tensor[T]) {
	if c.written == nil {
		c.written = map[*tensor.Tensor[T]]bool{}
	}
	c.written[z] = true
}

func (c *countingElementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	c.calls++
	c.wrote(z)
	c.Elementwise.LinComb(z, base, coef, xs)
}

func (c *countingElementwise[T]) Map(op tensor.MapOp, z, x *tensor.Tensor[T], a, b T) {
	c.wrote(z)
	c.Elementwise.Map(op, z, x, a, b)
}

func (c *countingElementwise[T]) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[T]) {
	c.wrote(z)
	c.Elementwise.Binary(op, z, x, y)
}

func (c *countingElementwise[T]) Copy(z, x *tensor.Tensor[T]) {
	c.wrote(z)
	c.Elementwise.Copy(z, x)
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
		"rmsprop": func(p []*autograd.Param[T]) opt {
			return optim.NewRMSprop(p, optim.RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: 1e-8})
		},
		"rmsprop momentum": func(p []*autograd.Param[T]) opt {
			return optim.NewRMSprop(p, optim.RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: 1e-8, Momentum: 0.8})
		},
		"rmsprop centered": func(p []*autograd.Param[T]) opt {
			return optim.NewRMSprop(p, optim.RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: 1e-6, Centered: true})
		},
		"rmsprop weight decay": func(p []*autograd.Param[T]) opt {
			return optim.NewRMSprop(p, optim.RMSpropConfig{LR: 0.01, Alpha: 0.99, Eps: 1e-8, WeightDecay: 0.05})
		},
		"rmsprop all": func(p []*autograd.Param[T]) opt {
			return optim.NewRMSprop(p, optim.RMSpropConfig{LR: 0.02, Alpha: 0.95, Eps: 1e-6, Momentum: 0.9, Centered: true, WeightDecay: 0.01})
		},
	}
}

// TestDeviceStep: with UseEngine on an engine that has an Elementwise,
// SGD, Adam and RMSprop update through it, and five steps give the host's
// parameters and buffers within the rounding of T arithmetic. On the
// parking device (values, gradients and buffers left in its memory, NaN
// in host memory) the steps copy nothing to the host. After the first
// step, with parameters of two shapes, the steps write no new tensor: the
// scratch tensors are kept.
func TestDeviceStep(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testDeviceStep[float64](t, 1e-12) })
	t.Run("float32", func(t *testing.T) { testDeviceStep[float32](t, 2e-5) })
}

func testDeviceStep[T tensor.Float](t *testing.T, tol float64) {
	cpu := tensor.EngineFor[T](tensor.Gonum(1))
	for name, mk := range deviceOptimizers[T]() {
		t.Run(name, func(t *testing.T) {
			firstStep := 0 // the tensors el wrote in the first step
			run := func(e tensor.Engine[T], el *countingElementwise[T], park *enginetest.ParkingDevice[T]) map[string][]T {
				rng := rand.New(rand.NewPCG(3, 4))
				ps := []*autograd.Param[T]{
					autograd.NewParam("w", tensor.RandN[T](rng, 0, 1, 3, 4)),
					autograd.NewParam("b", tensor.RandN[T](rng, 0, 1, 4)),
					autograd.NewParam("frozen", tensor.RandN[T](rng, 0, 1, 2)),
				}
				o := mk(ps)
				o.UseEngine(e)
				if park != nil {
					for _, p := range ps {
						park.Park(p.Value)
					}
				}
				for step := range 5 {
					if step == 1 && el != nil {
						firstStep = len(el.written)
					}
					for _, p := range ps[:2] {
						p.Grad = tensor.RandN[T](rng, 0, 1, p.Value.Shape()...)
						if park != nil {
							park.Park(p.Grad)
						}
					}
					o.Step()
				}
				if park != nil {
					if syncs, elems := park.Syncs(); syncs != 0 {
						t.Errorf("five steps on the parking device copied %d storages (%d elements) to the host", syncs, elems)
					}
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
			want := run(cpu, nil, nil)
			el := &countingElementwise[T]{Elementwise: tensor.HostElementwise[T]()}
			got := run(elementwiseEngine[T]{Engine: cpu, el: el}, el, nil)
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(tol, tol)); diff != "" {
				t.Errorf("after five steps (−host +device):\n%s", diff)
			}
			if el.calls == 0 {
				t.Error("the optimizer did not use the engine's Elementwise")
			}
			if n := len(el.written); n != firstStep {
				t.Errorf("the first step wrote %d tensors, the five %d: the later steps made new ones", firstStep, n)
			}
			park := enginetest.NewParkingDevice(cpu)
			got = run(park, nil, park)
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(tol, tol)); diff != "" {
				t.Errorf("after five steps on the parking device (−host +device):\n%s", diff)
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

// TestClipGradNormOn: on an engine with an Elementwise the norm and the
// clipped gradients are ClipGradNorm's (within the sums' rounding), a NaN
// is an error that changes nothing, and float64 gradients whose squares
// overflow get the host's scaled norm.
func TestClipGradNormOn(t *testing.T) {
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	dev := elementwiseEngine[float64]{Engine: cpu, el: &countingElementwise[float64]{Elementwise: tensor.HostElementwise[float64]()}}
	params := func(scale float64, nan bool) []*autograd.Param[float64] {
		rng := rand.New(rand.NewPCG(5, 6))
		var ps []*autograd.Param[float64]
		for i, n := range []int{7, 3, 12} {
			p := autograd.NewParam(fmt.Sprint("p", i), tensor.New[float64](n))
			p.Grad = tensor.RandN[float64](rng, 0, scale, n)
			ps = append(ps, p)
		}
		if nan {
			ps[1].Grad.Set(math.NaN(), 2)
		}
		ps = append(ps, autograd.NewParam("no grad", tensor.New[float64](2)))
		return ps
	}
	grads := func(ps []*autograd.Param[float64]) [][]float64 {
		var g [][]float64
		for _, p := range ps {
			if p.Grad != nil {
				g = append(g, append([]float64(nil), p.Grad.ReadData()...))
			}
		}
		return g
	}
	for _, c := range []struct {
		name    string
		scale   float64
		maxNorm float64
		nan     bool
	}{{"clipped", 1, 0.5, false}, {"not clipped", 1, 100, false}, {"NaN", 1, 0.5, true}, {"squares overflow", 1e200, 1e199, false}} {
		t.Run(c.name, func(t *testing.T) {
			host, onDev := params(c.scale, c.nan), params(c.scale, c.nan)
			nh, errH := optim.ClipGradNorm(host, c.maxNorm)
			nd, errD := optim.ClipGradNormOn[float64](dev, onDev, c.maxNorm)
			opt := cmpopts.EquateApprox(1e-14, 0)
			if diff := cmp.Diff(nh, nd, opt, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("norm (−host +device):\n%s", diff)
			}
			if (errH == nil) != (errD == nil) {
				t.Errorf("errors: host %v, device %v", errH, errD)
			}
			if diff := cmp.Diff(grads(host), grads(onDev), opt, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("gradients (−host +device):\n%s", diff)
			}
		})
	}
}
