package main

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	"github.com/adamnode/adamnode/layers"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The square [plotLo, plotHi]² every panel shows.
const plotLo, plotHi = -4.0, 4.0

// logRange is how far below its largest value the log-density's colour
// scale goes; lower values take the darkest colour.
const logRange = 10

// grid is a density on the n × n cells of gridPoints, as a plotter.GridXYZ.
type grid struct {
	n int
	z []float64 // row by row from the bottom
}

func (g grid) Dims() (c, r int)   { return g.n, g.n }
func (g grid) Z(c, r int) float64 { return g.z[r*g.n+c] }
func (g grid) X(c int) float64    { return plotLo + (float64(c)+0.5)*(plotHi-plotLo)/float64(g.n) }
func (g grid) Y(r int) float64    { return g.X(r) }

// plotFlow writes a PNG of three panels — the test data, samples of the
// flow, and its log-density logp on an n × n grid with a colour bar, titled
// with the mean test log-likelihoods of the flow and of the Gaussian — to
// path, atomically.
func plotFlow(path, data string, test, samples [][2]float64, n int, logp []float64, flowLL, gaussLL float64) error {
	const w, h = 15 * vg.Inch, 4.6 * vg.Inch
	const bar = 1.1 * vg.Inch // the colour bar's strip
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))
	panel := (w - bar) / 3
	at := func(i int, width vg.Length) draw.Canvas { // panel i, with a margin
		x := vg.Length(i) * panel
		return draw.Canvas{Canvas: img, Rectangle: vg.Rectangle{Min: vg.Point{X: x + 0.1*vg.Inch, Y: 0.1 * vg.Inch},
			Max: vg.Point{X: x + width - 0.1*vg.Inch, Y: h - 0.15*vg.Inch}}}
	}

	dots := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}}
	for i, pts := range [][][2]float64{test, samples} {
		p := square([]string{fmt.Sprintf("Test data (%s, %d points)", data, len(test)),
			fmt.Sprintf("Samples of the flow (%d points)", len(samples))}[i])
		var xy plotter.XYs
		for _, q := range pts { // those inside the square (scatters are not clipped)
			if min(q[0], q[1]) >= plotLo && max(q[0], q[1]) <= plotHi {
				xy = append(xy, plotter.XY{X: q[0], Y: q[1]})
			}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: dots[i], Radius: vg.Points(1.2), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Draw(at(i, panel))
	}

	top := slices.Max(logp)
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(top - logRange)
	cm.SetMax(top)
	pal := cm.Palette(255)
	hm := plotter.NewHeatMap(grid{n: n, z: logp}, pal)
	hm.Min, hm.Max = top-logRange, top
	hm.Underflow = pal.Colors()[0]
	hm.Rasterized = true
	p := square(fmt.Sprintf("Log-density of the flow: test log-lik. %.2f (Gaussian %.2f)", flowLL, gaussLL))
	p.Add(hm)
	p.Draw(at(2, panel))

	cb := plot.New() // beside the heat map, as tall as its data area
	cb.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	cb.HideX()
	cb.Y.Label.Text = "log p(x)"
	da, bc := p.DataCanvas(at(2, panel)), at(3, bar)
	bc.Min.Y, bc.Max.Y = da.Min.Y, da.Max.Y
	bc.Max.X -= 0.3 * vg.Inch
	cb.Draw(bc)

	return layers.WriteFileAtomic(path, func(wr io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(wr)
		return err
	})
}

// square returns a plot of [plotLo, plotHi]² with its axes labelled.
func square(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "x₁", "x₂"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = plotLo, plotHi, plotLo, plotHi
	return p
}
