package main

import (
	"math"
	"math/rand/v2"
)

// toys are the 2-D densities, as FFJORD's toy data (its lib/toy_data.py).
var toys = map[string]func(*rand.Rand, int) [][2]float64{
	"moons":      moons,
	"8gaussians": eightGaussians,
}

// moons is scikit-learn's make_moons with noise 0.1 (the half-circle's
// angle drawn uniformly rather than on a grid), scaled by 2 and shifted by
// (−1, −0.2) as in FFJORD.
func moons(rng *rand.Rand, n int) [][2]float64 {
	x := make([][2]float64, n)
	for i := range x {
		a := math.Pi * rng.Float64()
		p := [2]float64{math.Cos(a), math.Sin(a)}
		if i%2 == 1 {
			p = [2]float64{1 - math.Cos(a), 0.5 - math.Sin(a)}
		}
		x[i] = [2]float64{2*(p[0]+0.1*rng.NormFloat64()) - 1, 2*(p[1]+0.1*rng.NormFloat64()) - 0.2}
	}
	return x
}

// eightGaussians is a mixture of eight equally weighted Gaussians of
// standard deviation 0.5/√2 whose means lie evenly on the circle of
// radius 4/√2 (FFJORD's "8gaussians").
func eightGaussians(rng *rand.Rand, n int) [][2]float64 {
	x := make([][2]float64, n)
	for i := range x {
		a := float64(rng.IntN(8)) * math.Pi / 4
		x[i] = [2]float64{(4*math.Cos(a) + 0.5*rng.NormFloat64()) / math.Sqrt2, (4*math.Sin(a) + 0.5*rng.NormFloat64()) / math.Sqrt2}
	}
	return x
}

// gaussian is a 2-D normal density, the baseline.
type gaussian struct {
	mean [2]float64
	cov  [2][2]float64
}

// fitGaussian returns the maximum-likelihood Gaussian of x: its mean and
// full covariance.
func fitGaussian(x [][2]float64) gaussian {
	var g gaussian
	n := float64(len(x))
	for _, p := range x {
		g.mean[0] += p[0] / n
		g.mean[1] += p[1] / n
	}
	for _, p := range x {
		d0, d1 := p[0]-g.mean[0], p[1]-g.mean[1]
		g.cov[0][0] += d0 * d0 / n
		g.cov[0][1] += d0 * d1 / n
		g.cov[1][1] += d1 * d1 / n
	}
	g.cov[1][0] = g.cov[0][1]
	return g
}

// meanLogProb returns the mean of log N(x; mean, cov) over x, in closed
// form: −log 2π − ½ log det Σ − ½ (x − μ)ᵀ Σ⁻¹ (x − μ).
func (g gaussian) meanLogProb(x [][2]float64) float64 {
	det := g.cov[0][0]*g.cov[1][1] - g.cov[0][1]*g.cov[1][0]
	var s float64
	for _, p := range x {
		d0, d1 := p[0]-g.mean[0], p[1]-g.mean[1]
		q := (g.cov[1][1]*d0*d0 - 2*g.cov[0][1]*d0*d1 + g.cov[0][0]*d1*d1) / det
		s += -math.Log(2*math.Pi) - 0.5*math.Log(det) - 0.5*q
	}
	return s / float64(len(x))
}

// gridPoints returns the centres of an n × n grid of cells on [lo, hi]²,
// row by row from the bottom (x fastest).
func gridPoints(lo, hi float64, n int) [][2]float64 {
	h := (hi - lo) / float64(n)
	g := make([][2]float64, 0, n*n)
	for r := range n {
		for c := range n {
			g = append(g, [2]float64{lo + (float64(c)+0.5)*h, lo + (float64(r)+0.5)*h})
		}
	}
	return g
}
