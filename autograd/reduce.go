package autograd

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// scalarOut returns a one-element (rank 0) tensor holding s.
func (t *Tape[T]) scalarOut(s float64) *tensor.Tensor[T] {
	z := t.arena.get()
	z.Data()[0] = T(s)
	return z
}

// Sum returns the sum of all elements of x, a scalar (rank 0), accumulated
// in float64.
//
// Backward: ∂L/∂x += g (the scalar g broadcast).
func Sum[T tensor.Float](x Var[T]) Var[T] {
	t, xe := use1("Sum", x)
	var z *tensor.Tensor[T]
	if t.onDevice {
		z = t.ewScalarOut(t.ew.Sum(xe.value))
	} else {
		z = t.scalarOut(sumProd(xe.value, nil))
	}
	e := t.record("Sum", z, sumRule[T]{}, xe, nil, nil)
	e.f[0] = 1
	return t.varOf(e)
}

// Mean returns the mean of all elements of x, a scalar (rank 0).
//
// Backward: ∂L/∂x += g / n for x of n elements.
func Mean[T tensor.Float](x Var[T]) Var[T] {
	t, xe := use1("Mean", x)
	n := float64(xe.value.Len())
	var z *tensor.Tensor[T]
	if t.onDevice {
		z = t.ewScalarOut(t.ew.Sum(xe.value) / n)
	} else {
		z = t.scalarOut(sumProd(xe.value, nil) / n)
	}
	e := t.record("Mean", z, sumRule[T]{}, xe, nil, nil)
	e.f[0] = T(1 / n)
	return t.varOf(e)
}

// sumRule is the backward of Sum (f[0] = 1) and Mean (f[0] = 1/n).
type sumRule[T tensor.Float] struct{}

func (sumRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	if t.onDevice {
		t.ewBroadcastGrad(dst, acc, e.f[0], e.grad)
		return
	}
	g := e.grad.Data()[0] * e.f[0]
	if acc {
		dst.AddScalar(dst, g)
	} else {
		dst.Fill(g)
	}
}

// SoftmaxCrossEntropy returns the mean over the batch of the cross-entropy
// between softmax(logits) and the labels, for logits [B, K] and B labels in
// [0, K), computed stably through log-sum-exp:
//
//	L = (1/B) Σ_n [ log Σ_k exp(z[n,k]) − z[n, labels[n]] ]
//
// Backward: ∂L/∂z[n,k] += g·(softmax(z)[n,k] − [k = labels[n]]) / B.
// labels is read during the call only.
func SoftmaxCrossEntropy[T tensor.Float](logits Var[T], labels []int) Var[T] {
	t, le := use1("SoftmaxCrossEntropy", logits)
	z := le.value
	if z.Rank() != 2 || z.Dim(0) != len(labels) {
		panic(&tensor.ShapeError{Op: "autograd.SoftmaxCrossEntropy", Msg: fmt.Sprintf("logits of shape %v do not fit labels of shape [%d] (want [B, K] and B labels)", z.Shape(), len(labels))})
	}
	b, k := z.Dim(0), z.Dim(1)
	for n, l := range labels {
		if l < 0 || l >= k {
			panic(usage("SoftmaxCrossEntropy: label %d of sample %d out of range [0, %d)", l, n, k))
		}
	}
	recording := !t.noGrad && le.requires
	if t.onDevice {
		return t.varOf(t.ewSoftmaxCE(le, labels, recording))
	}
	var d []T // (softmax − onehot)/B, saved for backward
	var aux *tensor.Tensor[T]
	if recording {
		aux = t.arena.like(z)
		d = aux.Data()
	}
	zd := z.Data()
	var loss float64
	for n := 0; n < b; n++ {
		row := zd[n*k : (n+1)*k]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		lse := m + math.Log(s)
		loss += lse - float64(row[labels[n]])
		if recording {
			dr := d[n*k : (n+1)*k]
			for i, v := range row {
				dr[i] = T(math.Exp(float64(v)-lse) / float64(b))
			}
			dr[labels[n]] -= T(1 / float64(b))
		}
	}
	if b > 0 {
		loss /= float64(b)
	}
	e := t.record("SoftmaxCrossEntropy", t.scalarOut(loss), softmaxCERule[T]{}, le, nil, nil)
	saveCE(e, aux, labels, recording)
	return t.varOf(e)
}

// saveCE keeps what SoftmaxCrossEntropy's backward needs in its entry: the
// gradient (softmax − onehot)/B, and the labels for the backward written
// in ops (Grad).
func saveCE[T tensor.Float](e *entry[T], aux *tensor.Tensor[T], labels []int, recording bool) {
	e.aux = aux
	if recording {
		e.fs = e.fs[:0]
		for _, l := range labels {
			e.fs = append(e.fs, T(l))
		}
	}
}

type softmaxCERule[T tensor.Float] struct{}

func (softmaxCERule[T]) backward(t *Tape[T], e *entry[T]) {
	t.addScaledGrad(e.in[0], e.grad.ReadData()[0], e.aux)
}

// MSE returns the mean squared error between x and y (same shapes), a
// scalar:
//
//	L = (1/n) Σ_i (x[i] − y[i])²
//
// Backward: ∂L/∂x += 2g(x − y)/n, ∂L/∂y −= 2g(x − y)/n.
func MSE[T tensor.Float](x, y Var[T]) Var[T] {
	t, xe, ye := use2("MSE", x, y)
	mustSameShape("MSE", xe, ye)
	if t.onDevice {
		return t.ewMSE(xe, ye)
	}
	xd, yd := xe.value.Data(), ye.value.Data()
	var s float64
	for i, v := range xd {
		d := float64(v) - float64(yd[i])
		s += d * d
	}
	n := float64(len(xd))
	return t.varOf(t.record("MSE", t.scalarOut(s/n), mseRule[T]{}, xe, ye, nil))
}

type mseRule[T tensor.Float] struct{}

func (mseRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, y := e.in[0], e.in[1]
	if t.onDevice {
		// The difference x − y is in aux; the output gradient is read
		// (one number) for mseRule's coefficient 2g/n.
		c := 2 * T(t.ew.Sum(e.grad)) / T(x.value.Len())
		if dst, acc := t.gradDst(x); dst != nil {
			t.ewScaled(dst, acc, c, e.aux)
		}
		if dst, acc := t.gradDst(y); dst != nil {
			t.ewScaled(dst, acc, -c, e.aux)
		}
		return
	}
	xd, yd := x.value.Data(), y.value.Data()
	c := 2 * e.grad.Data()[0] / T(len(xd))
	for k, v := range [2]*entry[T]{x, y} {
		dst, acc := t.gradDst(v)
		if dst == nil {
			continue
		}
		a := c
		if k == 1 {
			a = -c
		}
		d := dst.Data()
		for i := range d {
			g := a * (xd[i] - yd[i])
			if acc {
				d[i] += g
			} else {
				d[i] = g
			}
		}
	}
}
