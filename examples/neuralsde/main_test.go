package main

import (
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/internal/pngtest"
)

// TestRecoversParameters runs the default fit (2000 paths of geometric
// Brownian motion with μ = 0.5, σ = 0.6; 300 Adam steps; a few seconds)
// and checks that the fitted μ is within ±0.1 and σ within ±10% of the
// truth, that the loss fell a hundredfold, and that the PNG was written.
func TestRecoversParameters(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for 300 steps")
	}
	c := defaults()
	c.Out, c.Log = filepath.Join(t.TempDir(), "neuralsde.png"), io.Discard
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted μ = %.4f, σ = %.4f (truth %g, %g); loss %.4f → %.4f; %.1f s", r.Mu, r.Sigma, c.Mu, c.Sigma, r.LossFirst, r.LossLast, r.Seconds)
	if math.Abs(r.Mu-c.Mu) > 0.1 {
		t.Errorf("fitted μ = %.4f, want %g ± 0.1", r.Mu, c.Mu)
	}
	if math.Abs(r.Sigma-c.Sigma) > 0.1*c.Sigma {
		t.Errorf("fitted σ = %.4f, want %g ± 10%%", r.Sigma, c.Sigma)
	}
	if !(r.LossLast < r.LossFirst/100) {
		t.Errorf("loss %.4f → %.4f: want it a hundredfold smaller", r.LossFirst, r.LossLast)
	}
	pngtest.Check(t, c.Out, 800, 400)
}
