package dist

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// halfLog2Pi is ½ log 2π.
var halfLog2Pi = 0.5 * math.Log(2*math.Pi)

// Normal is the normal (Gaussian) distribution N(μ, σ²) with mean Loc (μ)
// and standard deviation Scale (σ > 0), torch.distributions.Normal(loc,
// scale). Loc and Scale are Vars on one tape whose shapes broadcast
// against each other (and against a value scored); every method is
// elementwise over that batch shape.
type Normal[T tensor.Float] struct {
	Loc, Scale autograd.Var[T]
}

// LogProb returns the log-density of x, elementwise (x broadcasting
// against Loc and Scale), torch's Normal.log_prob:
//
//	log p(x) = −(x − μ)²/(2σ²) − log σ − ½ log 2π
func (d Normal[T]) LogProb(x autograd.Var[T]) autograd.Var[T] {
	z := autograd.Div(autograd.Sub(x, d.Loc), d.Scale)
	q := autograd.Scale(autograd.Square(z), -0.5)
	return autograd.AddConst(autograd.Sub(q, autograd.Log(d.Scale)), T(-halfLog2Pi))
}

// Entropy returns the differential entropy, elementwise over Scale's shape,
// torch's Normal.entropy:
//
//	H = ½ + ½ log 2π + log σ
func (d Normal[T]) Entropy() autograd.Var[T] {
	return autograd.AddConst(autograd.Log(d.Scale), T(0.5+halfLog2Pi))
}

// Mean returns μ (Loc itself), torch's Normal.mean.
func (d Normal[T]) Mean() autograd.Var[T] { return d.Loc }

// Stddev returns σ (Scale itself), torch's Normal.stddev.
func (d Normal[T]) Stddev() autograd.Var[T] { return d.Scale }

// Variance returns σ², torch's Normal.variance.
func (d Normal[T]) Variance() autograd.Var[T] { return autograd.Square(d.Scale) }

// Sample returns a reparameterised sample of the batch shape (the
// broadcast shape of Loc and Scale), torch's Normal.rsample():
//
//	x = μ + σ·ε,  ε ~ N(0, 1)
//
// ε is drawn from rng and enters tp (the parameters' tape) as a constant,
// so ∂x/∂μ = 1 and ∂x/∂σ = ε: gradients flow through the sample to the
// parameters (the pathwise, or reparameterisation, estimator).
func (d Normal[T]) Sample(tp *autograd.Tape[T], rng *rand.Rand) autograd.Var[T] {
	return d.sample(tp, rng, d.batchShape())
}

// SampleN returns n reparameterised samples stacked along a new leading
// axis, of shape [n, batch shape...], torch's Normal.rsample((n,)): each
// is μ + σ·ε with its own ε ~ N(0, 1) drawn from rng, as Sample's.
func (d Normal[T]) SampleN(tp *autograd.Tape[T], rng *rand.Rand, n int) autograd.Var[T] {
	if n < 1 {
		panic(shapeError("Normal.SampleN", "%d samples for batch shape %v: want at least 1 (the samples' shape is [n, %v...])", n, d.batchShape(), d.batchShape()))
	}
	return d.sample(tp, rng, append([]int{n}, d.batchShape()...))
}

func (d Normal[T]) sample(tp *autograd.Tape[T], rng *rand.Rand, shape []int) autograd.Var[T] {
	eps := tp.Const(tensor.RandN[T](rng, 0, 1, shape...))
	return autograd.Add(d.Loc, autograd.Mul(d.Scale, eps))
}

// batchShape returns the broadcast shape of Loc and Scale.
func (d Normal[T]) batchShape() []int {
	a, b := d.Loc.Shape(), d.Scale.Shape()
	if len(a) < len(b) {
		a, b = b, a
	}
	out := append([]int(nil), a...)
	off := len(a) - len(b)
	for i, n := range b {
		switch m := out[off+i]; {
		case m == n || n == 1:
		case m == 1:
			out[off+i] = n
		default:
			panic(shapeError("Normal", "Loc of shape %v and Scale of shape %v do not broadcast", d.Loc.Shape(), d.Scale.Shape()))
		}
	}
	return out
}

// KLNormal returns the Kullback–Leibler divergence KL(p ‖ q) between two
// Normals, elementwise over their broadcast batch shape, torch's
// kl_divergence(p, q) for Normals:
//
//	KL = log σq/σp + (σp² + (μp − μq)²)/(2σq²) − ½
//
// computed as torch does, ½(r + ((μp − μq)/σq)² − 1 − log r) with
// r = (σp/σq)².
func KLNormal[T tensor.Float](p, q Normal[T]) autograd.Var[T] {
	r := autograd.Square(autograd.Div(p.Scale, q.Scale))
	t := autograd.Square(autograd.Div(autograd.Sub(p.Loc, q.Loc), q.Scale))
	s := autograd.Sub(autograd.Add(r, t), autograd.Log(r))
	return autograd.Scale(autograd.AddConst(s, -1), 0.5)
}

// Bernoulli is the Bernoulli distribution on {0, 1} with P(x = 1) = σ(l)
// for the logits l (Logits, any shape), torch.distributions.Bernoulli(
// logits=l). Every method is elementwise and stable for logits of any
// finite size (see the package documentation).
type Bernoulli[T tensor.Float] struct {
	Logits autograd.Var[T]
}

// BernoulliProbs returns the Bernoulli distribution with P(x = 1) = p,
// torch's Bernoulli(probs=p): its logits are log p − log(1 − p), with p
// first clamped to [ε, 1 − ε] for the machine epsilon ε of T, as torch's
// probs_to_logits does (so p = 0 or 1 gives a large finite logit, and a
// zero gradient there).
func BernoulliProbs[T tensor.Float](p autograd.Var[T]) Bernoulli[T] {
	eps := T(math.Ldexp(1, -52))
	if _, single := any(eps).(float32); single {
		eps = T(math.Ldexp(1, -23))
	}
	c := autograd.Clamp(p, eps, 1-eps)
	return Bernoulli[T]{Logits: autograd.Sub(autograd.Log(c), autograd.Log(autograd.AddConst(autograd.Neg(c), 1)))}
}

// LogProb returns log P(x), elementwise, for x in {0, 1} (broadcasting
// against Logits), torch's Bernoulli.log_prob, in the stable form
//
//	log P(x) = x·l − softplus(l)
//
// (−binary cross-entropy with logits). Its gradient with respect to l is
// x − σ(l).
func (d Bernoulli[T]) LogProb(x autograd.Var[T]) autograd.Var[T] {
	return autograd.Sub(autograd.Mul(x, d.Logits), autograd.Softplus(d.Logits))
}

// Entropy returns the entropy, elementwise, torch's Bernoulli.entropy:
//
//	H = −p log p − (1 − p) log(1 − p) = softplus(l) − σ(l)·l
func (d Bernoulli[T]) Entropy() autograd.Var[T] {
	return autograd.Sub(autograd.Softplus(d.Logits), autograd.Mul(autograd.Sigmoid(d.Logits), d.Logits))
}

// Sample returns a draw x ∈ {0, 1} of Logits' shape, x = 1 with
// probability σ(l), each from one uniform number of rng, as a constant on
// tp: torch's Bernoulli.sample(), which has no gradient (score it with
// LogProb for a score-function estimator).
func (d Bernoulli[T]) Sample(tp *autograd.Tape[T], rng *rand.Rand) autograd.Var[T] {
	l := d.Logits.Value()
	x := tensor.New[T](l.Shape()...)
	xd := x.Data()
	for i, v := range l.Data() {
		if rng.Float64() < tensor.SigmoidOf(float64(v)) {
			xd[i] = 1
		}
	}
	return tp.Const(x)
}

// KLBernoulli returns the Kullback–Leibler divergence KL(p ‖ q) between
// two Bernoullis with logits lp and lq, elementwise, torch's
// kl_divergence(p, q) for Bernoullis, in the stable form
//
//	KL = σ(lp)·(lp − lq) + softplus(lq) − softplus(lp)
//
// (= p log(p/q) + (1 − p) log((1 − p)/(1 − q)) with p = σ(lp), q = σ(lq)),
// finite for all finite logits: torch returns +Inf once q rounds to 0 or 1
// (lq > 37 or lq < −745 in float64), where this gives the finite value.
func KLBernoulli[T tensor.Float](p, q Bernoulli[T]) autograd.Var[T] {
	a := autograd.Mul(autograd.Sigmoid(p.Logits), autograd.Sub(p.Logits, q.Logits))
	return autograd.Add(a, autograd.Sub(autograd.Softplus(q.Logits), autograd.Softplus(p.Logits)))
}

// Probs returns p = σ(l), torch's Bernoulli.probs.
func (d Bernoulli[T]) Probs() autograd.Var[T] { return autograd.Sigmoid(d.Logits) }

// Mean returns p = σ(l), torch's Bernoulli.mean.
func (d Bernoulli[T]) Mean() autograd.Var[T] { return d.Probs() }

// Categorical is the categorical distribution over K classes given by
// unnormalised logits z along the last axis of Logits ([B, K]: a batch of
// B distributions; any rank ≥ 1 works, the leading axes being the batch),
// torch.distributions.Categorical(logits=z): p_k = exp(z_k)/Σ_j exp(z_j).
type Categorical[T tensor.Float] struct {
	Logits autograd.Var[T]
}

// LogProbs returns the normalised log-probabilities, of Logits' shape,
// torch's Categorical.logits (log-softmax along the last axis):
//
//	log p_k = z_k − logsumexp(z),  logsumexp(z) = m + log Σ_j exp(z_j − m)
//
// with m the row's maximum, held constant (autograd.Detach), so that no
// exponent is positive.
func (d Categorical[T]) LogProbs() autograd.Var[T] {
	s := autograd.Sub(d.Logits, autograd.Detach(autograd.MaxAxis(d.Logits, -1, true)))
	return autograd.Sub(s, autograd.Log(autograd.SumAxis(autograd.Exp(s), -1, true)))
}

// Probs returns the probabilities exp(log p_k) of LogProbs, of Logits'
// shape, torch's Categorical.probs.
func (d Categorical[T]) Probs() autograd.Var[T] { return autograd.Exp(d.LogProbs()) }

// LogProb returns log p(labels[b]) for each row b of the batch (Logits
// [B, K] gives [B]; in general the batch shape, Logits' shape without its
// last axis), torch's Categorical.log_prob(labels):
//
//	log p(k) = z_k − logsumexp(z)
//
// labels holds one class in [0, K) per row, in row-major order; it is read
// during the call only. Its gradient with respect to z is onehot(k) − p.
func (d Categorical[T]) LogProb(labels []int) autograd.Var[T] {
	shape := d.Logits.Shape()
	if len(shape) == 0 {
		panic(shapeError("Categorical.LogProb", "logits of shape %v (rank 0) for %d labels, want [..., K]", shape, len(labels)))
	}
	k := shape[len(shape)-1]
	rows := d.Logits.Len() / max(k, 1)
	if len(labels) != rows {
		panic(shapeError("Categorical.LogProb", "labels of shape [%d] for logits of shape %v (want [%d], one per row)", len(labels), shape, rows))
	}
	onehot := tensor.New[T](shape...)
	od := onehot.Data()
	for b, l := range labels {
		if l < 0 || l >= k {
			panic(shapeError("Categorical.LogProb", "label %d of row %d out of range [0, %d) for logits of shape %v", l, b, k, shape))
		}
		od[b*k+l] = 1
	}
	tp := d.Logits.Tape()
	return autograd.SumAxis(autograd.Mul(d.LogProbs(), tp.Const(onehot)), -1, false)
}

// Sample draws one class per row of the batch, class k with probability
// p_k, from one uniform number of rng per row (the inverse of the
// cumulative distribution, computed in float64 from the logits shifted by
// the row's maximum), torch's Categorical.sample(). The classes are plain
// ints, in row-major order: sampling has no gradient.
func (d Categorical[T]) Sample(rng *rand.Rand) []int {
	z := d.Logits.Value()
	shape := z.Shape()
	if len(shape) == 0 || shape[len(shape)-1] == 0 {
		panic(shapeError("Categorical.Sample", "logits of shape %v, want [..., K] with K ≥ 1", shape))
	}
	k := shape[len(shape)-1]
	zd := z.Data()
	out := make([]int, len(zd)/k)
	w := make([]float64, k)
	for b := range out {
		row := zd[b*k : (b+1)*k]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, float64(v))
		}
		var s float64
		for j, v := range row {
			w[j] = math.Exp(float64(v) - m)
			s += w[j]
		}
		u := rng.Float64() * s
		c := k - 1
		for j, v := range w {
			if u < v {
				c = j
				break
			}
			u -= v
		}
		// Never a class of probability 0 (the fall-through past rounding).
		for c > 0 && w[c] == 0 {
			c--
		}
		out[b] = c
	}
	return out
}

// KLCategorical returns the Kullback–Leibler divergence KL(p ‖ q) between
// two Categoricals over the same K classes, for each distribution of the
// batch (logits [B, K] give [B]), torch's kl_divergence(p, q) for
// Categoricals:
//
//	KL = Σ_k p_k (log p_k − log q_k)
//
// with the log-probabilities of LogProbs, finite for all finite logits:
// torch returns +Inf once a q_k underflows to 0 (a logit 745 or more below
// its row's maximum, in float64), where this gives the finite value.
func KLCategorical[T tensor.Float](p, q Categorical[T]) autograd.Var[T] {
	lp := p.LogProbs()
	return autograd.SumAxis(autograd.Mul(autograd.Exp(lp), autograd.Sub(lp, q.LogProbs())), -1, false)
}

// Entropy returns the entropy of each distribution of the batch (Logits
// [B, K] gives [B]), torch's Categorical.entropy:
//
//	H = −Σ_k p_k log p_k
//
// with log p_k from LogProbs, finite for finite logits, so a p_k that
// underflows to 0 contributes 0.
func (d Categorical[T]) Entropy() autograd.Var[T] {
	lp := d.LogProbs()
	return autograd.Neg(autograd.SumAxis(autograd.Mul(autograd.Exp(lp), lp), -1, false))
}

// shapeError returns the *tensor.ShapeError of op (named "dist.op"): the
// package's misuse panics are all about shapes, and tensor.Recover turns
// them into errors at an API edge.
func shapeError(op, format string, args ...any) *tensor.ShapeError {
	return &tensor.ShapeError{Op: "dist." + op, Msg: fmt.Sprintf(format, args...)}
}
