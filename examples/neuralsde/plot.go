package main

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/sde"
	"github.com/adamnode/adamnode/tensor"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotPaths writes the PNG: c.Plot data paths and c.Plot paths of the
// fitted model m on a grid of 101 times, the mean of each over c.Paths
// paths, and the exact mean exp(μt) of the data's process, with the legend
// to the right of the axes.
func plotPaths(c config, m *model, r result) error {
	fine := make([]float64, 101)
	for k := range fine {
		fine[k] = float64(k) / 100
	}
	data, fitted, err := samplePaths(c, m, fine)
	if err != nil {
		return err
	}
	dataMean, _ := moments(data)
	fitMean, _ := moments(fitted)

	p := plot.New()
	p.Title.Text = fmt.Sprintf("Geometric Brownian motion: μ = %g, σ = %g; fitted μ = %.3f, σ = %.3f", c.Mu, c.Sigma, r.Mu, r.Sigma)
	p.X.Label.Text, p.Y.Label.Text = "time t", "Y(t)"
	p.X.Min, p.X.Max = 0, 1
	blue, orange := color.RGBA{31, 119, 180, 255}, color.RGBA{230, 110, 0, 255}
	dash := []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(plotter.NewGrid())
	var dataLine, fitLine *plotter.Line
	for i := range min(c.Plot, c.Paths) {
		l, err := plotter.NewLine(curve(fine, func(k int, _ float64) float64 { return data[k][i] }))
		if err != nil {
			return err
		}
		l.Color, l.Width = blendWhite(blue, 0.75), vg.Points(1)
		f, err := plotter.NewLine(curve(fine, func(k int, _ float64) float64 { return fitted[k][i] }))
		if err != nil {
			return err
		}
		f.Color, f.Width, f.Dashes = blendWhite(orange, 0.75), vg.Points(1), dash
		p.Add(l, f)
		dataLine, fitLine = l, f
	}
	dm, err := plotter.NewLine(curve(fine, func(k int, _ float64) float64 { return dataMean[k] }))
	if err != nil {
		return err
	}
	dm.Color, dm.Width = blue, vg.Points(3)
	fm, err := plotter.NewLine(curve(fine, func(k int, _ float64) float64 { return fitMean[k] }))
	if err != nil {
		return err
	}
	fm.Color, fm.Width, fm.Dashes = orange, vg.Points(3), dash
	ex, err := plotter.NewLine(curve(fine, func(_ int, t float64) float64 { return math.Exp(c.Mu * t) }))
	if err != nil {
		return err
	}
	ex.Color, ex.Width, ex.Dashes = color.Black, vg.Points(1.5), []vg.Length{vg.Points(1.5), vg.Points(2)}
	p.Add(dm, fm, ex)
	if dataLine != nil {
		p.Legend.Add("data paths", dataLine)
		p.Legend.Add("fitted model's paths", fitLine)
	}
	p.Legend.Add(fmt.Sprintf("data mean (%d paths)", c.Paths), dm)
	p.Legend.Add(fmt.Sprintf("model mean (%d paths)", c.Paths), fm)
	p.Legend.Add("exact mean exp(μt)", ex)
	p.Legend.Left, p.Legend.Top = true, true
	return savePNGLegendRight(p, c.Out)
}

// samplePaths returns, at the times fine, c.Paths paths of the data's
// process (the data's own seed: the data paths on a finer grid) and as many
// of the fitted model m, one row per time.
func samplePaths(c config, m *model, fine []float64) (data, fitted [][]float64, err error) {
	if data, err = gbmPaths(c.Mu, c.Sigma, c.Paths, fine, c.Seed); err != nil {
		return nil, nil, err
	}
	b, err := sde.NewBrownian[float64](0, 1, []int{c.Paths}, sde.BrownianOptions{Seed: c.Seed + 1000})
	if err != nil {
		return nil, nil, err
	}
	tp := autograd.NewTape(tensor.Default().Float64())
	tp.SetNoGrad(true)
	defer tp.Release()
	ys, _, err := sde.Solve[float64](tp, m, tp.Const(tensor.Full(1.0, c.Paths)), fine, b,
		sde.Options{Method: sde.ReversibleHeun, Step: 0.01})
	if err != nil {
		return nil, nil, err
	}
	fitted = make([][]float64, len(ys))
	for k, y := range ys {
		fitted[k] = y.Value().ReadData()
	}
	return data, fitted, nil
}

// curve returns the points (t, f(k, t)) for the times ts.
func curve(ts []float64, f func(k int, t float64) float64) plotter.XYs {
	pts := make(plotter.XYs, len(ts))
	for k, t := range ts {
		pts[k] = plotter.XY{X: t, Y: f(k, t)}
	}
	return pts
}

// savePNGLegendRight writes p as a 10 × 5 inch PNG at out (atomically),
// its legend in a column right of the axes, off the paths.
func savePNGLegendRight(p *plot.Plot, out string) error {
	const w, h = 10 * vg.Inch, 5 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(100))
	dc := draw.New(img)
	leg := p.Legend
	leg.Padding = vg.Points(3)
	r0 := leg.Rectangle(dc)
	lw := r0.Max.X - r0.Min.X
	pad := vg.Points(10)
	p.Legend = plot.NewLegend()
	p.Draw(draw.Crop(dc, pad/2, -(lw + 2*pad), pad/2, -pad))
	top := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	leg.Draw(draw.Crop(dc, w-lw-pad, -pad, 0, -top-2*pad))
	return layers.WriteFileAtomic(out, func(wr io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(wr)
		return err
	})
}

// blendWhite mixes c with white, keeping the fraction keep of c.
func blendWhite(c color.RGBA, keep float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(keep*float64(v) + (1-keep)*255 + 0.5) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}
