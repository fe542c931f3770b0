package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// joinCase evaluates the right-hand side of SONODE (its parts joined
// along the channel axis, autograd.Concat(1, h, u)) or of ANODE (an
// input of C channels augmented with 2 zero channels, AugmentChannels,
// then NODE) with a convolutional field g = conv(tanh(h)) + b on images
// [B, C, 4, 4], or with solve the state at t = 1 of a Block of those
// dynamics (rk4, step 0.25, the adjoint), and its backward for the
// cotangent c (Σ F ⊙ c), on engine e. It returns the values, the gradients of the state (or input) and of
// the field's parameters, and the bytes the engine's backend (device, nil
// for a CPU engine) copied to the host during the evaluation and
// backward, in all and by site, before anything is read.
func joinCase(t *testing.T, e tensor.Engine[float32], family string, solve bool, device tensor.Backend) (vals, grads []float32, down int64, sites map[string]int64) {
	t.Helper()
	const b, c, hw = 2, 3, 4
	rng := rand.New(rand.NewPCG(9, 10))
	// The field's input and output channels, the state's parts.
	in, out, parts := 2*c, c, 2
	if family == "anode" {
		in, out, parts = c+2, c+2, 1
	}
	x := autograd.NewParam("x", tensor.RandN[float32](rng, 0, 1, parts*b, c, hw, hw))
	w := autograd.NewParam("w", tensor.RandN[float32](rng, 0, 0.3, out, in, 3, 3))
	bias := autograd.NewParam("b", tensor.RandN[float32](rng, 0, 0.3, out))
	field := odeblock.FieldFunc([]*autograd.Param[float32]{w, bias}, func(tp *autograd.Tape[float32], _ float64, h autograd.Var[float32]) autograd.Var[float32] {
		return autograd.Conv2D(autograd.Tanh(h), tp.Param(w), tp.Param(bias), tensor.ConvParams{Stride: 1, Pad: 1})
	})
	var dyn odeblock.Dynamics[float32] = &odeblock.SONODE[float32]{F: field}
	if family == "anode" {
		dyn = &odeblock.NODE[float32]{F: field}
	}
	ps := []*autograd.Param[float32]{x, w, bias}
	autograd.ZeroGrads(ps)
	cot := tensor.RandN[float32](rng, 0, 1, parts*b, out, hw, hw)
	var cs *copySites
	var before Stats
	if device != nil {
		before = stats(t, device)
		cs = &copySites{bytes: map[string]int64{}}
		downloadHook = cs.record
		defer func() { downloadHook = nil }()
	}
	tp := autograd.NewTape(e)
	z := tp.Param(x)
	if family == "anode" {
		z = odeblock.AugmentChannels(tp, z, 2)
	}
	var f autograd.Var[float32]
	if solve {
		b := &odeblock.Block[float32]{Dynamics: dyn, Mode: odeblock.Adjoint{}, Solver: odeblock.Options{Method: "rk4", Step: 0.25}}
		var err error
		if f, err = b.Forward(tp, z); err != nil {
			t.Fatal(err)
		}
	} else {
		f = dyn.Eval(tp, 0.4, z)
	}
	if err := tp.Backward(autograd.Sum(autograd.Mul(f, tp.Const(cot)))); err != nil {
		t.Fatal(err)
	}
	if cs != nil {
		downloadHook = nil
		down, sites = stats(t, device).DownloadBytes-before.DownloadBytes, cs.bytes
	}
	vals = f.Value().ReadData()
	for _, p := range ps {
		grads = append(grads, p.Grad.ReadData()...)
	}
	return vals, grads, down, sites
}

// TestJoinedFamiliesOnDevice: SONODE's right-hand side (its parts joined
// along the channel axis) and ANODE's (its input augmented with zero
// channels) evaluate and differentiate on the engine, alone and in a
// Block's rk4 solve with the adjoint, with nothing of the state copied to
// the host, the joins and their gradients the engine's
// CopyBlocks: no copy of a tensor (at most the loss's sum, a number),
// and the values and gradients are the CPU's.
func TestJoinedFamiliesOnDevice(t *testing.T) {
	g := gpu(t)
	if tensor.BlockCopierOf(tensor.EngineFor[float32](g)) == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	for _, fam := range []string{"sonode", "anode"} {
		for _, solve := range []bool{false, true} {
			name := fam + "/eval"
			if solve {
				name = fam + "/block"
			}
			t.Run(name, func(t *testing.T) {
				wv, wg, _, _ := joinCase(t, tensor.EngineFor[float32](tensor.Gonum(1)), fam, solve, nil)
				gv, gg, down, sites := joinCase(t, tensor.EngineFor[float32](g), fam, solve, g)
				t.Logf("%d bytes copied to the host", down)
				for site, n := range sites {
					t.Errorf("%s copied %d bytes of device values to the host", site, n)
				}
				if down > 8 {
					t.Errorf("%d bytes copied to the host, more than the loss's number", down)
				}
				approx := cmpopts.EquateApprox(1e-4, 1e-5)
				if diff := cmp.Diff(wv, gv, approx); diff != "" {
					t.Errorf("F (-cpu +device):\n%s", diff)
				}
				if diff := cmp.Diff(wg, gg, approx); diff != "" {
					t.Errorf("gradients (-cpu +device):\n%s", diff)
				}
			})
		}
	}
}
