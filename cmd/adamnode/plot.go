package main

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/adamnode/adamnode/layers"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one named line of a figure.
type series struct {
	name   string
	xs, ys []float64
}

// lineColor gives each line of a figure its own colour.
func lineColor(i int) color.Color {
	cs := []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255},
		{214, 39, 40, 255}, {148, 103, 189, 255}, {140, 86, 75, 255},
		{227, 119, 194, 255}, {127, 127, 127, 255},
	}
	return cs[i%len(cs)]
}

// linePlot returns a plot of the series as lines, with a log-scale y axis
// when logY is set (non-positive and non-finite points are left out there).
func linePlot(title, xlabel, ylabel string, logY bool, ss []series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range ss {
		var pts plotter.XYs
		for k := range s.xs {
			y := s.ys[k]
			if math.IsNaN(y) || math.IsInf(y, 0) || logY && y <= 0 {
				continue
			}
			pts = append(pts, plotter.XY{X: s.xs[k], Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %q, line %q: %w", title, s.name, err)
		}
		l.Color = lineColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	return p, nil
}

// savePNG writes p as a PNG of the given size in inches to path, through a
// temporary file renamed into place.
func savePNG(p *plot.Plot, w, h float64, path string) error {
	wt, err := p.WriterTo(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return layers.WriteFileAtomic(path, func(f io.Writer) error {
		_, err := wt.WriteTo(f)
		return err
	})
}

// saveText writes s to path through a temporary file renamed into place.
func saveText(path, s string) error {
	return layers.WriteFileAtomic(path, func(f io.Writer) error {
		_, err := io.WriteString(f, s)
		return err
	})
}
