package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/layers"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// series is one named line of a figure, and optionally the values it
// summarises (rawXs, rawYs: a smoothed line's unsmoothed points), drawn
// under every figure's lines as a thin light line in the series' colour.
type series struct {
	name         string
	xs, ys       []float64
	rawXs, rawYs []float64
}

// finitePoints returns the points of xs, ys with a finite y (and a
// positive one when logY).
func finitePoints(xs, ys []float64, logY bool) plotter.XYs {
	var pts plotter.XYs
	for k := range xs {
		y := ys[k]
		if math.IsNaN(y) || math.IsInf(y, 0) || logY && y <= 0 {
			continue
		}
		pts = append(pts, plotter.XY{X: xs[k], Y: y})
	}
	return pts
}

// lighten mixes c with white, keeping the fraction keep of c.
func lighten(c color.Color, keep float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(keep*float64(v>>8) + (1-keep)*255 + 0.5) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// lineStyle is the look of the i-th line of a figure: its own colour, dash
// pattern and marker shape, so that the lines stay apart where they
// overlap and in grayscale.
type lineStyle struct {
	color  color.Color
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}

// lineStyles are the styles of a figure's lines, in order.
var lineStyles = []lineStyle{
	{color.RGBA{31, 119, 180, 255}, nil, draw.CircleGlyph{}},
	{color.RGBA{255, 127, 14, 255}, []vg.Length{vg.Points(6), vg.Points(3)}, draw.BoxGlyph{}},
	{color.RGBA{44, 160, 44, 255}, []vg.Length{vg.Points(1.5), vg.Points(2.5)}, draw.TriangleGlyph{}},
	{color.RGBA{214, 39, 40, 255}, []vg.Length{vg.Points(8), vg.Points(3), vg.Points(1.5), vg.Points(3)}, draw.CrossGlyph{}},
	{color.RGBA{148, 103, 189, 255}, []vg.Length{vg.Points(3), vg.Points(3)}, draw.RingGlyph{}},
	{color.RGBA{0, 0, 0, 255}, []vg.Length{vg.Points(10), vg.Points(2), vg.Points(2), vg.Points(2), vg.Points(2), vg.Points(2)}, draw.PlusGlyph{}},
	{color.RGBA{227, 119, 194, 255}, []vg.Length{vg.Points(12), vg.Points(4)}, draw.PyramidGlyph{}},
	{color.RGBA{127, 127, 127, 255}, []vg.Length{vg.Points(1), vg.Points(1)}, draw.SquareGlyph{}},
}

// styleOf returns the style of the i-th line of a figure.
func styleOf(i int) lineStyle { return lineStyles[i%len(lineStyles)] }

// styledLine adds pts to p as the i-th line of the figure: a line in its
// colour and dash pattern with its marker at up to marks points spread
// along it (every point when there are no more than marks), offset from
// line to line so that overlapping lines' markers do not coincide; and a
// legend entry showing both. norm maps a point to the coordinates the
// spacing is measured in (nil: the point itself).
func styledLine(p *plot.Plot, i int, name string, pts plotter.XYs, width vg.Length, marks int, norm func(plotter.XY) plotter.XY) error {
	st := styleOf(i)
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("line %q: %w", name, err)
	}
	l.Color, l.Width, l.Dashes = st.color, width, st.dashes
	sc, err := plotter.NewScatter(spacedMarks(pts, marks, float64(i)/float64(len(lineStyles)), norm))
	if err != nil {
		return fmt.Errorf("markers of %q: %w", name, err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: st.color, Radius: vg.Points(3.5), Shape: st.glyph}
	p.Add(l, sc)
	p.Legend.ThumbnailWidth = vg.Points(32) // long enough to show the dashes
	p.Legend.Add(name, l, sc)
	return nil
}

// spacedMarks returns up to n of pts, evenly spaced along the line's length
// (measured after norm, then scaled to the bounding box, so that x and y
// count alike), starting at phase (in [0, 1)) of the first interval: every
// point when len(pts) ≤ n.
func spacedMarks(pts plotter.XYs, n int, phase float64, norm func(plotter.XY) plotter.XY) plotter.XYs {
	if len(pts) <= n || n <= 0 {
		return pts
	}
	if norm == nil {
		norm = func(p plotter.XY) plotter.XY { return p }
	}
	q := make([]plotter.XY, len(pts))
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k, pt := range pts {
		q[k] = norm(pt)
		minX, maxX = math.Min(minX, q[k].X), math.Max(maxX, q[k].X)
		minY, maxY = math.Min(minY, q[k].Y), math.Max(maxY, q[k].Y)
	}
	dx, dy := maxX-minX, maxY-minY
	if dx == 0 {
		dx = 1
	}
	if dy == 0 {
		dy = 1
	}
	cum := make([]float64, len(q)) // arc length up to each point
	for k := 1; k < len(q); k++ {
		cum[k] = cum[k-1] + math.Hypot((q[k].X-q[k-1].X)/dx, (q[k].Y-q[k-1].Y)/dy)
	}
	total := cum[len(cum)-1]
	if total == 0 {
		return pts[:1]
	}
	var out plotter.XYs
	k := 0
	for j := 0; j < n; j++ {
		at := total * (float64(j) + phase) / float64(n)
		for k < len(cum)-1 && cum[k] < at {
			k++
		}
		out = append(out, pts[k])
	}
	return out
}

// linePlot returns a plot of the series as styled lines with markers
// (styledLine), with a log-scale y axis labelled in powers of ten when
// logY is set (non-positive and non-finite points are left out there).
func linePlot(title, xlabel, ylabel string, logY bool, ss []series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	norm := func(pt plotter.XY) plotter.XY { return pt }
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = decadeTicks{}
		norm = func(pt plotter.XY) plotter.XY { return plotter.XY{X: pt.X, Y: math.Log10(pt.Y)} }
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	p.Add(grid)
	for i, s := range ss {
		raw := finitePoints(s.rawXs, s.rawYs, logY)
		if len(raw) == 0 {
			continue
		}
		l, err := plotter.NewLine(raw)
		if err != nil {
			return nil, fmt.Errorf("plot %q: line %q: %w", title, s.name, err)
		}
		l.Color, l.Width = lighten(styleOf(i).color, 0.35), vg.Points(0.75)
		p.Add(l)
	}
	for i, s := range ss {
		pts := finitePoints(s.xs, s.ys, logY)
		if len(pts) == 0 {
			continue
		}
		if err := styledLine(p, i, s.name, pts, vg.Points(1.5), 8, norm); err != nil {
			return nil, fmt.Errorf("plot %q: %w", title, err)
		}
	}
	return p, nil
}

// decadeTicks marks a log axis at powers of ten, labelled 1eN: every
// decade when the axis spans few, else every 2nd, 5th, 10th… (the others
// unlabelled), at most about eleven labels; an axis within one decade gets
// the multiples 2…9 as unlabelled ticks too.
type decadeTicks struct{}

func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min || math.IsInf(max, 0) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	step := 1
	for _, s := range []int{1, 2, 5, 10, 20, 50, 100} {
		step = s
		if (hi-lo)/s <= 10 {
			break
		}
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		v := math.Pow(10, float64(e))
		if v >= min && v <= max {
			t := plot.Tick{Value: v}
			if e%step == 0 {
				t.Label = powerOfTen(e)
			}
			ts = append(ts, t)
		}
		if hi-lo <= 3 {
			for m := 2; m <= 9; m++ {
				if w := float64(m) * v; w >= min && w <= max {
					ts = append(ts, plot.Tick{Value: w})
				}
			}
		}
	}
	return ts
}

// powerOfTen labels 10 to the power e as 1e12, 1e−3 (the plots' font has
// no superscript zero or minus).
func powerOfTen(e int) string {
	return strings.Replace(fmt.Sprintf("1e%d", e), "-", "−", 1)
}

// integerTicks marks a linear axis at whole numbers only (epochs), at most
// about ten of them labelled.
type integerTicks struct{}

func (integerTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := int(math.Ceil(min)), int(math.Floor(max))
	step := 1
	for (hi-lo)/step > 10 {
		step *= 2
	}
	var ts []plot.Tick
	for v := lo; v <= hi; v++ {
		t := plot.Tick{Value: float64(v)}
		if (v-lo)%step == 0 {
			t.Label = strconv.Itoa(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// savePNG writes p as a PNG of the given size in inches to path, through a
// temporary file renamed into place. The legend, when p has one, goes to
// the right of the axes, off the data.
func savePNG(p *plot.Plot, w, h float64, path string) error {
	c, err := draw.NewFormattedCanvas(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	drawBesideLegend(p, draw.New(c))
	return layers.WriteFileAtomic(path, func(f io.Writer) error {
		_, err := c.WriteTo(f)
		return err
	})
}

// drawBesideLegend draws p on dc with its legend in a column at the right
// of the axes, top-aligned with the data area.
func drawBesideLegend(p *plot.Plot, dc draw.Canvas) {
	leg := p.Legend
	r := leg.Rectangle(dc)
	width := r.Max.X - r.Min.X
	if width <= 0 {
		p.Draw(dc)
		return
	}
	pad := vg.Points(8)
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = leg }()
	p.Draw(draw.Crop(dc, 0, -(width + 2*pad), 0, 0))
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	}
	beside := leg
	beside.Left, beside.Top = true, true
	beside.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-width-pad, -pad, 0, -top-pad))
}

// saveText writes s to path through a temporary file renamed into place.
func saveText(path, s string) error {
	return layers.WriteFileAtomic(path, func(f io.Writer) error {
		_, err := io.WriteString(f, s)
		return err
	})
}
