package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkWinogradChannels times the forward 3×3 pad-1 convolution of a
// batch of 32 28×28 images with C = Co channels, one worker, by Winograd's
// F(2×2, 3×3) and by im2col + GEMM: the measurement behind
// winogradMinHarmonic.
func BenchmarkWinogradChannels(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	be, err := OpenBLAS(1)
	if err != nil {
		be = Gonum(1)
	}
	one := EngineFor[float32](be)
	for _, c := range []int{4, 8, 16, 32, 64} {
		x := RandN[float32](rng, 0, 1, 32, c, 28, 28)
		w := RandN[float32](rng, 0, 1, c, c, 3, 3)
		y := New[float32](32, c, 28, 28)
		for _, wino := range []bool{true, false} {
			name := fmt.Sprintf("c%d/im2col", c)
			if wino {
				name = fmt.Sprintf("c%d/winograd", c)
			}
			b.Run(name, func(b *testing.B) {
				defer func(m int) { winogradMinHarmonic = m }(winogradMinHarmonic)
				winogradMinHarmonic = 1 << 30
				if wino {
					winogradMinHarmonic = 1
				}
				for b.Loop() {
					one.Conv2D(y, x, w, nil, ConvParams{Pad: 1})
				}
			})
		}
	}
}
