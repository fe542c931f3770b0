package layers

import (
	"fmt"
	"slices"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Normalisation layers, as PyTorch's nn.LayerNorm, nn.GroupNorm and
// nn.BatchNorm1d/2d/3d. Each is written with autograd's broadcasting ops,
// so its gradient is theirs. Variances are biased (divided by the count),
// as PyTorch's normalisation uses.

// normalize returns (x − mean) / √(var + eps) along axis of x, the mean
// and variance taken along that axis.
func normalize[T tensor.Float](x autograd.Var[T], axis int, eps float64) autograd.Var[T] {
	xc := autograd.Sub(x, autograd.MeanAxis(x, axis, true))
	v := autograd.MeanAxis(autograd.Square(xc), axis, true)
	return autograd.Div(xc, autograd.Sqrt(autograd.AddConst(v, T(eps))))
}

// affineShape returns the shape [C, 1, …, 1] that a per-channel parameter
// takes to broadcast against x [N, C, …] of the given rank.
func affineShape(c, rank int) []int {
	s := make([]int, rank-1)
	for i := range s {
		s[i] = 1
	}
	s[0] = c
	return s
}

// channelAffine returns y ⊙ γ + β for per-channel γ and β of length C.
func channelAffine[T tensor.Float](tp *autograd.Tape[T], y autograd.Var[T], w, b *autograd.Param[T]) autograd.Var[T] {
	s := affineShape(w.Value.Len(), len(y.Shape()))
	return autograd.Add(autograd.Mul(y, autograd.Reshape(tp.Param(w), s...)), autograd.Reshape(tp.Param(b), s...))
}

func ones[T tensor.Float](n ...int) *tensor.Tensor[T] {
	t := tensor.New[T](n...)
	t.Fill(1)
	return t
}

// LayerNorm normalises over the last len(Shape) axes of its input and
// applies an elementwise affine map:
//
//	y = (x − E[x]) / √(Var[x] + Eps) ⊙ Weight + Bias
//
// with the mean and (biased) variance over those axes of each sample.
type LayerNorm[T tensor.Float] struct {
	Shape        []int
	Eps          float64
	Weight, Bias *autograd.Param[T] // of shape Shape: 1 and 0 at first
}

// NewLayerNorm returns a LayerNorm over trailing axes of the given shape,
// with PyTorch's defaults (Eps 1e-5, Weight 1, Bias 0).
func NewLayerNorm[T tensor.Float](shape ...int) *LayerNorm[T] {
	return &LayerNorm[T]{Shape: slices.Clone(shape), Eps: 1e-5,
		Weight: autograd.NewParam("weight", ones[T](shape...)), Bias: autograd.NewParam("bias", tensor.New[T](shape...))}
}

// Forward records the normalised x; x's last axes must be Shape (a
// *tensor.ShapeError otherwise).
func (l *LayerNorm[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	sh := x.Shape()
	if len(sh) < len(l.Shape) || !slices.Equal(sh[len(sh)-len(l.Shape):], l.Shape) {
		panic(&tensor.ShapeError{Op: "layers.LayerNorm", Msg: fmt.Sprintf("input of shape %v does not end in the normalised shape %v", sh, l.Shape)})
	}
	n := l.Weight.Value.Len()
	y := autograd.Reshape(normalize(autograd.Reshape(x, -1, n), 1, l.Eps), sh...)
	return autograd.Add(autograd.Mul(y, tp.Param(l.Weight)), tp.Param(l.Bias))
}

// Params returns the weight and the bias.
func (l *LayerNorm[T]) Params() []*autograd.Param[T] { return weightBias(l.Weight, l.Bias) }

// GroupNorm splits the C channels of its input [N, C, …] into Groups
// groups and normalises each sample's group over its channels and
// positions, then applies a per-channel affine map (Wu and He, 2018):
//
//	y = (x − E_g[x]) / √(Var_g[x] + Eps) ⊙ Weight[c] + Bias[c]
type GroupNorm[T tensor.Float] struct {
	Groups       int
	Eps          float64
	Weight, Bias *autograd.Param[T] // [C]: 1 and 0 at first
}

// NewGroupNorm returns a GroupNorm of the given number of groups over
// channels channels (which it must divide: it panics otherwise), with
// PyTorch's defaults.
func NewGroupNorm[T tensor.Float](groups, channels int) *GroupNorm[T] {
	if groups < 1 || channels%groups != 0 {
		panic(shapeError("NewGroupNorm", "%d groups do not divide %d channels", groups, channels))
	}
	return &GroupNorm[T]{Groups: groups, Eps: 1e-5,
		Weight: autograd.NewParam("weight", ones[T](channels)), Bias: autograd.NewParam("bias", tensor.New[T](channels))}
}

// Forward records the normalised x [N, C, …].
func (g *GroupNorm[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	sh := x.Shape()
	if c := g.Weight.Value.Len(); len(sh) < 2 || sh[1] != c {
		panic(&tensor.ShapeError{Op: "layers.GroupNorm", Msg: fmt.Sprintf("input of shape %v, want [N, %d, ...]", sh, c)})
	}
	y := autograd.Reshape(normalize(autograd.Reshape(x, sh[0], g.Groups, -1), 2, g.Eps), sh...)
	return channelAffine(tp, y, g.Weight, g.Bias)
}

// Params returns the weight and the bias.
func (g *GroupNorm[T]) Params() []*autograd.Param[T] { return weightBias(g.Weight, g.Bias) }

// BatchNorm normalises each channel of its input [N, C, …] over the batch
// and the positions (PyTorch's BatchNorm1d/2d/3d), then applies a
// per-channel affine map:
//
//	y = (x − μ_c) / √(σ²_c + Eps) ⊙ Weight[c] + Bias[c]
//
// In training mode (the initial mode) μ and σ² are the batch's (σ²
// biased), and the running estimates are updated,
// r ← (1 − Momentum)·r + Momentum·batch, with the unbiased variance; in
// evaluation mode the running estimates are used. They are the module's
// buffers (running_mean, running_var): saved in checkpoints with the
// parameters (State), never trained.
type BatchNorm[T tensor.Float] struct {
	Eps, Momentum           float64
	Weight, Bias            *autograd.Param[T] // [C]: 1 and 0 at first
	RunningMean, RunningVar *autograd.Param[T] // [C]: 0 and 1 at first
	eval                    bool
}

// NewBatchNorm returns a BatchNorm over channels channels in training
// mode, with PyTorch's defaults (Eps 1e-5, Momentum 0.1).
func NewBatchNorm[T tensor.Float](channels int) *BatchNorm[T] {
	return &BatchNorm[T]{Eps: 1e-5, Momentum: 0.1,
		Weight: autograd.NewParam("weight", ones[T](channels)), Bias: autograd.NewParam("bias", tensor.New[T](channels)),
		RunningMean: autograd.NewParam("running_mean", tensor.New[T](channels)), RunningVar: autograd.NewParam("running_var", ones[T](channels))}
}

// SetTraining sets training mode (batch statistics) or evaluation mode
// (running statistics).
func (b *BatchNorm[T]) SetTraining(training bool) { b.eval = !training }

// Forward records the normalised x [N, C, …], updating the running
// statistics in training mode.
func (b *BatchNorm[T]) Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T] {
	sh := x.Shape()
	c := b.Weight.Value.Len()
	if len(sh) < 2 || sh[1] != c {
		panic(&tensor.ShapeError{Op: "layers.BatchNorm", Msg: fmt.Sprintf("input of shape %v, want [N, %d, ...]", sh, c)})
	}
	stat := affineShape(c, len(sh))
	if b.eval {
		mean := tp.Const(b.RunningMean.Value.Reshape(stat...))
		std := autograd.Sqrt(autograd.AddConst(tp.Const(b.RunningVar.Value.Reshape(stat...)), T(b.Eps)))
		return channelAffine(tp, autograd.Div(autograd.Sub(x, mean), std), b.Weight, b.Bias)
	}
	// [N, C, rest] → [C, N·rest] by moving C first: per-channel statistics
	// along axis 1.
	xr := autograd.Reshape(x, sh[0], c, -1)
	mean := autograd.MeanAxis(autograd.MeanAxis(xr, 2, true), 0, true) // [1, C, 1]
	xc := autograd.Sub(xr, mean)
	v := autograd.MeanAxis(autograd.MeanAxis(autograd.Square(xc), 2, true), 0, true)
	y := autograd.Reshape(autograd.Div(xc, autograd.Sqrt(autograd.AddConst(v, T(b.Eps)))), sh...)
	b.track(mean.Value().Data(), v.Value().Data(), x.Len()/c)
	return channelAffine(tp, y, b.Weight, b.Bias)
}

// track moves the running statistics towards the batch's (variance made
// unbiased over the n values per channel).
func (b *BatchNorm[T]) track(mean, v []T, n int) {
	m := b.Momentum
	unbias := 1.0
	if n > 1 {
		unbias = float64(n) / float64(n-1)
	}
	rm, rv := b.RunningMean.Value.Data(), b.RunningVar.Value.Data()
	for i := range rm {
		rm[i] = T((1-m)*float64(rm[i]) + m*float64(mean[i]))
		rv[i] = T((1-m)*float64(rv[i]) + m*float64(v[i])*unbias)
	}
}

// Params returns the weight and the bias.
func (b *BatchNorm[T]) Params() []*autograd.Param[T] { return weightBias(b.Weight, b.Bias) }

// Buffers returns the running mean and variance.
func (b *BatchNorm[T]) Buffers() []*autograd.Param[T] {
	return []*autograd.Param[T]{b.RunningMean, b.RunningVar}
}
