package cuda

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// trainModel is a train.Model: the images flattened, a linear layer and
// tanh, an optional ODE block on the hidden state, and the class scores.
type trainModel struct {
	in, out *layers.Linear[float32]
	field   *layers.Sequential[float32] // the block's dynamics, when there is one
	block   *odeblock.Block[float32]
}

// field is the block's dynamics dz/dt = f(z), an MLP.
type field struct{ f *layers.Sequential[float32] }

func (d field) Eval(tp *autograd.Tape[float32], _ float64, z autograd.Var[float32]) autograd.Var[float32] {
	return d.f.Forward(tp, z)
}
func (d field) Params() []*autograd.Param[float32] { return d.f.Params() }

func newTrainModel(rng *rand.Rand, pixels, hidden, classes int, ode bool) *trainModel {
	m := &trainModel{in: layers.NewLinear[float32](rng, pixels, hidden), out: layers.NewLinear[float32](rng, hidden, classes)}
	if ode {
		m.field = layers.NewSequential[float32]().Add("fc1", layers.NewLinear[float32](rng, hidden, hidden)).
			Add("tanh", layers.Tanh[float32]{}).Add("fc2", layers.NewLinear[float32](rng, hidden, hidden))
		m.block = &odeblock.Block[float32]{Dynamics: field{m.field}, Mode: odeblock.Adjoint{},
			Solver: odeblock.Options{Method: "rk4", Step: 0.25}}
	}
	return m
}

func (m *trainModel) Forward(tp *autograd.Tape[float32], x autograd.Var[float32]) (autograd.Var[float32], error) {
	h := autograd.Tanh(m.in.Forward(tp, autograd.Flatten(x)))
	if m.block != nil {
		var err error
		if h, err = m.block.Forward(tp, h); err != nil {
			return h, err
		}
	}
	return m.out.Forward(tp, h), nil
}

func (m *trainModel) Params() []*autograd.Param[float32] {
	ps := append(m.in.Params(), m.out.Params()...)
	if m.field != nil {
		ps = append(ps, m.field.Params()...)
	}
	return ps
}

// Stats gives the block's evaluations (train.Counted).
func (m *trainModel) Stats() odeblock.BlockStats {
	if m.block == nil {
		return odeblock.BlockStats{}
	}
	return m.block.Stats()
}

// TestTrainStepCopies: the train loop (train.Run, the classifier's task:
// softmax cross-entropy, the accuracy count, Adam after UseEngine,
// clipping) on the stand-in copies, per step once the weights are up
// (every copy the stand-in makes, whoever asked for it):
//
//   - to the device, the batch's images and the labels' one-hot, one copy
//     each, and no weight (the first step uploads the weights);
//   - an MLP, to the host: the step's numbers — the cross-entropy's sums,
//     the loss, its output gradient's element, a squared norm a parameter
//     for the clipping — and the predicted classes (4 bytes a row), not the
//     class scores (68 bytes a step at batch 8; 356 with the scores read on
//     the host, as before ArgMaxOn);
//   - with an ODE block (rk4 at 0.25, adjoint) on the hidden state, to the
//     host: at most 4 hidden states (what odeblock reads of its output and
//     gradients) and 64 bytes an evaluation (the solvers' numbers), not a
//     state an evaluation.
func TestTrainStepCopies(t *testing.T) {
	g := gpu(t)
	if tensor.ElementwiseOf(tensor.EngineFor[float32](g)) == nil {
		t.Skip("the stand-in's kernels do not load")
	}
	standinCopies(t) // skips on real libraries
	const (
		batch, steps, classes = 8, 4, 10
		side, hidden          = 8, 16
		f32                   = 4
	)
	rng := rand.New(rand.NewPCG(35, 2))
	images := &data.Images{C: 1, H: side, W: side, Classes: classes,
		Pixels: make([]uint8, batch*steps*side*side), Labels: make([]int, batch*steps)}
	for i := range images.Pixels {
		images.Pixels[i] = uint8(rng.IntN(256))
	}
	for i := range images.Labels {
		images.Labels[i] = rng.IntN(classes)
	}
	loader := func(prefetch int) *data.Loader {
		l, err := data.NewLoader(images, data.LoaderOptions{BatchSize: batch, Shuffle: true, Seed: 3, DropLast: true, Prefetch: prefetch})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	imageBytes := int64(batch * side * side * f32)
	oneHotBytes := int64(batch * classes * f32)
	logitBytes := int64(batch * classes * f32)
	for _, c := range []struct {
		name     string
		ode      bool
		prefetch int
	}{{"mlp", false, 0}, {"mlp, prefetch", false, 2}, {"ode rk4", true, 0}} {
		t.Run(c.name, func(t *testing.T) {
			m := newTrainModel(rand.New(rand.NewPCG(35, 5)), side*side, hidden, classes, c.ode)
			var paramBytes int64
			for _, p := range m.Params() {
				paramBytes += int64(p.Value.Len() * f32)
			}
			opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
			var per []Copies
			last := standinCopies(t)
			var nfe []odeblock.BlockStats
			cfg := train.Config{Name: "copies", Epochs: 1, Quiet: true, Backend: g, Clip: 1,
				OnStep: func(_, _ int, s train.Step) {
					now := standinCopies(t)
					per = append(per, now.Sub(last))
					last = now
					nfe = append(nfe, m.Stats())
				}}
			if _, err := train.Run[float32](context.Background(), cfg, m, opt, loader(c.prefetch), loader(0)); err != nil {
				t.Fatal(err)
			}
			if len(per) != steps {
				t.Fatalf("%d steps, want %d", len(per), steps)
			}
			for i, d := range per {
				t.Logf("step %d: %d copies up (%d bytes), %d down (%d bytes); NFE %d+%d", i, d.Up, d.UpBytes, d.Down, d.DownBytes,
					nfe[i].Forward.NFE, nfe[i].Backward.NFE)
			}
			if first := per[0]; first.UpBytes < paramBytes+imageBytes {
				t.Errorf("step 0 uploaded %d bytes, less than the weights and the images (%d)", first.UpBytes, paramBytes+imageBytes)
			}
			for i, d := range per[1:] {
				step := i + 1
				// Up: the images and the one-hot labels, once each.
				if d.UpBytes != imageBytes+oneHotBytes || d.Up != 2 {
					t.Errorf("step %d: %d copies (%d bytes) to the device, want the images' (%d bytes) and the one-hot labels' (%d)",
						step, d.Up, d.UpBytes, imageBytes, oneHotBytes)
				}
				if !c.ode {
					// Down: numbers — the cross-entropy's two sums and its
					// dot, the loss Item reads, the output gradient's element
					// its backward reads, a squared norm a parameter for the
					// clipping — and the predicted classes, not the scores.
					numbers := int64(5 + len(m.Params()))
					if bound := numbers*f32 + batch*4; d.Down > numbers+1 || d.DownBytes > bound || d.DownBytes >= logitBytes {
						t.Errorf("step %d: %d copies (%d bytes) to the host, want at most %d numbers and the predicted classes (%d bytes; the class scores are %d)",
							step, d.Down, d.DownBytes, numbers, bound, logitBytes)
					}
					continue
				}
				// Down, with the block: numbers a solver step (the error
				// norm's record, the adjoint's norms and drift check), the
				// block's output and gradients the host reads (odeblock), not
				// a hidden state an evaluation.
				st := nfe[step]
				state, evals := int64(batch*hidden*f32), int64(st.Forward.NFE+st.Backward.NFE)
				if bound := 4*state + 64*evals + batch*4; d.DownBytes > bound {
					t.Errorf("step %d: %d bytes to the host, more than %d (4 hidden states of %d bytes and 64 bytes an evaluation, %d)",
						step, d.DownBytes, bound, state, evals)
				}
			}
		})
	}
}
