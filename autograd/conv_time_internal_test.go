package autograd

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// TestTimeBiasDirect: timeBias, which reuses a row or a sum wherever the
// taps' ranges repeat, equals the sum over each position's inside taps
// formed afresh, bit for bit, on borders of every kind: pads 0–3, strides
// 1–3, kernels wider than the input, one-pixel outputs.
func TestTimeBiasDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for _, g := range []struct{ h, w, kh, kw, stride, pad int }{
		{5, 6, 3, 3, 1, 1}, {28, 28, 3, 3, 1, 1}, {7, 5, 3, 3, 2, 1}, {4, 5, 2, 3, 1, 2},
		{5, 5, 3, 3, 1, 0}, {6, 6, 5, 5, 1, 2}, {2, 2, 5, 5, 1, 2}, {9, 4, 3, 1, 3, 3}, {1, 1, 3, 3, 1, 1},
	} {
		t.Run(fmt.Sprintf("%+v", g), func(t *testing.T) {
			p := tensor.ConvParams{Stride: g.stride, Pad: g.pad}
			oh, ow := (g.h+2*g.pad-g.kh)/g.stride+1, (g.w+2*g.pad-g.kw)/g.stride+1
			const co, c = 3, 2
			w := make([]float32, co*(c+1)*g.kh*g.kw)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
			tv := float32(0.37)
			tb := make([]float32, co*oh*ow)
			timeBias(tb, w, tv, co, c, g.h, g.w, g.kh, g.kw, oh, ow, p)
			taps := g.kh * g.kw
			for o := range co {
				wt := w[(o*(c+1)+c)*taps:]
				for i := range oh {
					for j := range ow {
						klo, khi := tapRange(i, g.h, g.kh, p)
						llo, lhi := tapRange(j, g.w, g.kw, p)
						var s float32
						for k := klo; k < khi; k++ {
							for l := llo; l < lhi; l++ {
								s += wt[k*g.kw+l]
							}
						}
						if got := tb[(o*oh+i)*ow+j]; got != tv*s {
							t.Fatalf("tb[%d, %d, %d] = %v, want %v", o, i, j, got, tv*s)
						}
					}
				}
			}
		})
	}
}
