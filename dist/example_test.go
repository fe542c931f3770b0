package dist_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/dist"
	"github.com/adamnode/adamnode/tensor"
)

// Example computes a VAE's evidence lower bound for one observation x:
// an encoder's Gaussian q(z|x) = N(μ, σ²), a reparameterised sample z, a
// Gaussian likelihood p(x|z) = N(Wz, 0.5²), and the KL to the prior
// N(0, 1):
//
//	ELBO = log p(x|z) − KL(q(z|x) ‖ p(z))
//
// Backward through −ELBO reaches the encoder's outputs through the sample
// (the reparameterisation trick) and through the KL.
func Example() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	rng := rand.New(rand.NewPCG(1, 2))

	// The encoder's outputs for x (here leaves; in a VAE, a network's).
	mu := tp.Input(tensor.FromSlice([]float64{0.3, -0.5}, 2))
	logSigma := tp.Input(tensor.FromSlice([]float64{-0.2, 0.1}, 2))
	q := dist.Normal[float64]{Loc: mu, Scale: autograd.Exp(logSigma)}

	// Decode a sample: the mean of p(x|z) is W·z.
	z := q.Sample(tp, rng)
	w := tp.Const(tensor.FromSlice([]float64{1, 0.5, -0.3, 2, 0.7, -1}, 3, 2))
	xMean := autograd.Reshape(autograd.MatMul(w, autograd.Reshape(z, 2, 1)), 3)
	x := tp.Const(tensor.FromSlice([]float64{0.1, -1.2, 0.6}, 3))
	px := dist.Normal[float64]{Loc: xMean, Scale: tp.Const(tensor.Full(0.5, 3))}

	prior := dist.Normal[float64]{Loc: tp.Const(tensor.New[float64](2)), Scale: tp.Const(tensor.Full(1.0, 2))}
	logLik := autograd.Sum(px.LogProb(x))
	kl := autograd.Sum(dist.KLNormal(q, prior))
	elbo := autograd.Sub(logLik, kl)

	if err := tp.Backward(autograd.Neg(elbo)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log p(x|z) %.4f, KL %.4f, ELBO %.4f\n", logLik.Item(), kl.Item(), elbo.Item())
	fmt.Printf("∂(−ELBO)/∂μ %.4f\n", mu.Grad().Data())
	fmt.Printf("∂(−ELBO)/∂log σ %.4f\n", logSigma.Grad().Data())
	// Output:
	// log p(x|z) -1.0459, KL 0.2159, ELBO -1.2618
	// ∂(−ELBO)/∂μ [1.9751 0.5804]
	// ∂(−ELBO)/∂log σ [0.1907 0.3106]
}

// ExampleCategorical scores labels under logits far beyond exp's range:
// the log-sum-exp is shifted by each row's maximum, so nothing overflows.
func ExampleCategorical() {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	logits := tp.Input(tensor.FromSlice([]float64{
		500, -500, 499, 0,
		0.5, -1, 2, 0.1,
	}, 2, 4))
	c := dist.Categorical[float64]{Logits: logits}
	fmt.Printf("log p %.4f\n", c.LogProb([]int{2, 0}).Value().Data())
	fmt.Printf("entropy %.4f\n", c.Entropy().Value().Data())
	// Output:
	// log p [-1.3133 -1.8524]
	// entropy [0.5822 0.8925]
}
