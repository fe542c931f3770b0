package optim

import (
	"errors"
	"math"
	"testing"

	"github.com/adamnode/adamnode/autograd"
)

func TestClipGradNorm(t *testing.T) {
	// Gradients [3, 4] and [12]: ‖g‖ = √(9 + 16 + 144) = 13.
	for _, tc := range []struct {
		name    string
		maxNorm float64
		want    []float64 // the three gradient elements afterwards
	}{
		{"below", 26, []float64{3, 4, 12}},
		{"far below", 1e9, []float64{3, 4, 12}},
		// c = 6.5/(13 + 1e-6)
		{"above", 6.5, []float64{3 * 6.5 / 13.000001, 4 * 6.5 / 13.000001, 12 * 6.5 / 13.000001}},
		// torch scales whenever c < 1, so a norm equal to the maximum is
		// scaled by 13/13.000001.
		{"equal", 13, []float64{3 * 13 / 13.000001, 4 * 13 / 13.000001, 12 * 13 / 13.000001}},
		{"zero", 0, []float64{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newParam[float64]("a", []float64{0, 0})
			b := newParam[float64]("b", []float64{0})
			c := newParam[float64]("c", []float64{0})
			c.Grad = nil // skipped
			setGrad(a, []float64{3, 4})
			setGrad(b, []float64{12})
			n, err := ClipGradNorm([]*autograd.Param[float64]{a, b, c}, tc.maxNorm)
			if err != nil || n != 13 {
				t.Fatalf("ClipGradNorm = %v, %v; want 13, nil", n, err)
			}
			got := append(append([]float64{}, a.Grad.Data()...), b.Grad.Data()...)
			for i := range got {
				if !closeTo(got[i], tc.want[i], 1e-15) {
					t.Errorf("grad[%d] = %.17g, want %.17g", i, got[i], tc.want[i])
				}
			}
			if after := GradNorm([]*autograd.Param[float64]{a, b}); after > max(tc.maxNorm, 0)+1e-9 {
				t.Errorf("norm after clipping %v > %v", after, tc.maxNorm)
			}
		})
	}
}

func TestClipGradNormFloat32(t *testing.T) {
	a := newParam[float32]("a", []float64{0, 0})
	setGrad(a, []float64{30, 40})
	n, err := ClipGradNorm([]*autograd.Param[float32]{a}, 10)
	if err != nil || n != 50 {
		t.Fatalf("ClipGradNorm = %v, %v; want 50, nil", n, err)
	}
	if g := a.Grad.Data(); !closeTo(float64(g[0]), 6, 1e-6) || !closeTo(float64(g[1]), 8, 1e-6) {
		t.Fatalf("clipped to %v, want about [6 8]", g)
	}
}

func TestClipGradNormNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		a := newParam[float64]("a", []float64{0, 0})
		b := newParam[float64]("b", []float64{0})
		setGrad(a, []float64{3, 4})
		setGrad(b, []float64{bad})
		n, err := ClipGradNorm([]*autograd.Param[float64]{a, b}, 1)
		if !errors.Is(err, ErrNonFinite) {
			t.Fatalf("gradient %v: error %v, want ErrNonFinite", bad, err)
		}
		if !math.IsNaN(n) && !math.IsInf(n, 1) {
			t.Errorf("gradient %v: norm %v", bad, n)
		}
		if g := a.Grad.Data(); g[0] != 3 || g[1] != 4 {
			t.Errorf("gradient %v: finite gradients changed to %v", bad, g)
		}
	}
}

func TestGradNormScaling(t *testing.T) {
	// Squares of 1e200 overflow float64; the scaled sum does not.
	a := newParam[float64]("a", []float64{0, 0})
	b := newParam[float64]("b", []float64{0})
	setGrad(a, []float64{3e200, 4e200})
	setGrad(b, []float64{12e200})
	if n := GradNorm([]*autograd.Param[float64]{a, b}); !closeTo(n, 13e200, 1e-15) {
		t.Errorf("GradNorm = %v, want 1.3e201", n)
	}
	setGrad(a, []float64{3e-200, 4e-200})
	setGrad(b, []float64{12e-200})
	if n := GradNorm([]*autograd.Param[float64]{a, b}); math.Abs(n-13e-200) > 1e-214 {
		t.Errorf("GradNorm = %v, want 1.3e-199", n)
	}
	if n := GradNorm[float64](nil); n != 0 {
		t.Errorf("GradNorm of nothing = %v", n)
	}
	mustPanic(t, "negative max norm", "max norm", func() { ClipGradNorm([]*autograd.Param[float64]{a}, -1) })
}
