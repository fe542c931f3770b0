package layers

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// SoftmaxCrossEntropy returns the mean over the batch of the cross-entropy
// between softmax(logits) and the labels, for logits [B, K] and B labels in
// [0, K), as PyTorch's nn.CrossEntropyLoss (reduction "mean"), fused and
// computed stably through log-sum-exp:
//
//	L = (1/B) Σ_n [ log Σ_k exp(z[n,k]) − z[n, labels[n]] ]
//
// It is autograd.SoftmaxCrossEntropy; labels is read during the call only.
func SoftmaxCrossEntropy[T tensor.Float](logits autograd.Var[T], labels []int) autograd.Var[T] {
	return autograd.SoftmaxCrossEntropy(logits, labels)
}

// MSE returns the mean squared error between pred and the constant target
// (same shapes), as PyTorch's nn.MSELoss (reduction "mean"):
//
//	L = (1/n) Σ_i (pred[i] − target[i])²
//
// The target enters pred's tape as a constant (referenced, not copied).
func MSE[T tensor.Float](pred autograd.Var[T], target *tensor.Tensor[T]) autograd.Var[T] {
	return autograd.MSE(pred, pred.Tape().Const(target))
}
