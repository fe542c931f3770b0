package main

import (
	"fmt"
	"image/color"
	"io"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotSeries writes a PNG of one panel per series — its observations
// before split (filled) and after it (hollow, not shown to the model), the
// true wave, the reconstruction up to split and the extrapolation beyond
// it — in a row, to path, atomically.
func plotSeries(path string, series []data.Series, waves []data.Sine, c curves, split, tmax, recon, extrap float64) error {
	n := len(series)
	if n == 0 {
		return fmt.Errorf("no series to plot")
	}
	const ph = 4 * vg.Inch
	w := vg.Length(n) * 4.2 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w, ph+0.4*vg.Inch), vgimg.UseDPI(110))
	dc := draw.New(img)
	fnt := plot.DefaultFont
	fnt.Size = vg.Points(13)
	dc.FillText(draw.TextStyle{Color: color.Black, Font: fnt, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter},
		vg.Point{X: w / 2, Y: dc.Max.Y - 0.28*vg.Inch},
		fmt.Sprintf("Latent ODE on held-out series: test MSE reconstruction %.4f (t < %g), extrapolation %.4f (t ≥ %g)", recon, split, extrap, split))
	blue, red, grey := color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}, color.Gray{150}
	for i, s := range series {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("Test series %d (frequency %.3f)", i, waves[i].Freq)
		p.X.Label.Text, p.Y.Label.Text = "time t", "observation x(t)"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, tmax, -1.6, 2.6
		p.Legend.Top, p.Legend.Left = true, true
		p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: -1, Label: "−1"}, {Value: 0, Label: "0"}, {Value: 1, Label: "1"}})

		var truth, rec, ext, obs, held plotter.XYs
		for k, t := range c.T {
			truth = append(truth, plotter.XY{X: t, Y: waves[i].At(t)})
			if t <= split {
				rec = append(rec, plotter.XY{X: t, Y: c.Y[i][k]})
			}
			if t >= split || (k+1 < len(c.T) && c.T[k+1] > split) {
				ext = append(ext, plotter.XY{X: t, Y: c.Y[i][k]})
			}
		}
		for k, t := range s.Times {
			if t < split {
				obs = append(obs, plotter.XY{X: t, Y: s.Values[k]})
			} else {
				held = append(held, plotter.XY{X: t, Y: s.Values[k]})
			}
		}
		lt, _ := plotter.NewLine(truth)
		lt.Color, lt.Width, lt.Dashes = grey, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		lr, _ := plotter.NewLine(rec)
		lr.Color, lr.Width = red, vg.Points(2)
		le, _ := plotter.NewLine(ext)
		le.Color, le.Width, le.Dashes = red, vg.Points(2), []vg.Length{vg.Points(6), vg.Points(3)}
		so, _ := plotter.NewScatter(obs)
		so.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		sh, _ := plotter.NewScatter(held)
		sh.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(2.5), Shape: draw.RingGlyph{}}
		vl, _ := plotter.NewLine(plotter.XYs{{X: split, Y: -1.6}, {X: split, Y: 1.6}})
		vl.Color, vl.Width = color.Gray{60}, vg.Points(0.5)
		p.Add(plotter.NewGrid(), vl, lt, lr, le, so, sh)
		if i == 0 {
			p.Legend.Add("true wave", lt)
			p.Legend.Add("observed", so)
			p.Legend.Add("held out", sh)
			p.Legend.Add("reconstruction", lr)
			p.Legend.Add("extrapolation", le)
		}
		pc := dc
		pc.Min.X, pc.Max.X = vg.Length(i)*w/vg.Length(n), vg.Length(i+1)*w/vg.Length(n)
		pc.Max.Y = ph
		p.Draw(padded(pc))
	}
	return layers.WriteFileAtomic(path, func(wr io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(wr)
		return err
	})
}

// padded returns c with a margin.
func padded(c draw.Canvas) draw.Canvas {
	m := 0.1 * vg.Inch
	c.Min.X, c.Min.Y, c.Max.X, c.Max.Y = c.Min.X+m, c.Min.Y+m, c.Max.X-m, c.Max.Y-m
	return c
}
