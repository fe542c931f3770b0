package main

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/adamnode/adamnode/odeblock"
)

// testFunction is a 2-D function with a known minimum, for Figure 1.
type testFunction struct {
	name    string
	f       func(x, y float64) float64
	grad    func(x, y float64) (gx, gy float64)
	min     [2]float64
	start   [2]float64
	box     [4]float64 // xmin, xmax, ymin, ymax of the figure
	horizon float64
}

func testFunctions() []testFunction {
	return []testFunction{
		{
			name: "rosenbrock",
			f:    func(x, y float64) float64 { return (1-x)*(1-x) + 100*(y-x*x)*(y-x*x) },
			grad: func(x, y float64) (float64, float64) {
				return -2*(1-x) - 400*x*(y-x*x), 200 * (y - x*x)
			},
			min: [2]float64{1, 1}, start: [2]float64{-1.5, 2}, box: [4]float64{-2, 2, -1, 3}, horizon: 20,
		},
		{
			name: "beale",
			f: func(x, y float64) float64 {
				a, b, c := 1.5-x+x*y, 2.25-x+x*y*y, 2.625-x+x*y*y*y
				return a*a + b*b + c*c
			},
			grad: func(x, y float64) (float64, float64) {
				a, b, c := 1.5-x+x*y, 2.25-x+x*y*y, 2.625-x+x*y*y*y
				return 2*a*(y-1) + 2*b*(y*y-1) + 2*c*(y*y*y-1), 2*a*x + 4*b*x*y + 6*c*x*y*y
			},
			min: [2]float64{3, 0.5}, start: [2]float64{1, 1.5}, box: [4]float64{-1, 4, -1, 2}, horizon: 20,
		},
	}
}

// flowParams are the constants of the three ODEs.
type flowParams struct {
	gamma   float64 // heavy ball damping
	a1, a2  float64 // Adam ODE rates of the first and second moments
	eps     float64
	tol     float64
	samples int
}

// flows returns the right-hand sides of gradient flow, the heavy-ball ODE
// and the Adam ODE for the gradient g, each with its initial state:
//
//	ODE:     x' = −∇F(x)
//	HBODE:   x' = −m,  m' = ∇F(x) − γ·m
//	AdamODE: x' = −m/√(v+ε),  m' = a1·(∇F(x) − m),  v' = a2·(∇F(x)² − v)
//
// (the continuous limits of gradient descent, classical momentum and Adam
// that the families NODE, HBNODE and AdamNODE parameterise with f = ∓∇F).
func flows(p flowParams, grad func(x, y float64) (float64, float64), start [2]float64) []struct {
	name string
	f    odeblock.Func[float64]
	y0   []float64
} {
	type flow = struct {
		name string
		f    odeblock.Func[float64]
		y0   []float64
	}
	return []flow{
		{"ODE", func(_ float64, y, dy []float64) error {
			gx, gy := grad(y[0], y[1])
			dy[0], dy[1] = -gx, -gy
			return nil
		}, []float64{start[0], start[1]}},
		{"HBODE", func(_ float64, y, dy []float64) error {
			gx, gy := grad(y[0], y[1])
			dy[0], dy[1] = -y[2], -y[3]
			dy[2], dy[3] = gx-p.gamma*y[2], gy-p.gamma*y[3]
			return nil
		}, []float64{start[0], start[1], 0, 0}},
		{"AdamODE", func(_ float64, y, dy []float64) error {
			gx, gy := grad(y[0], y[1])
			dy[0], dy[1] = -y[2]/math.Sqrt(y[4]+p.eps), -y[3]/math.Sqrt(y[5]+p.eps)
			dy[2], dy[3] = p.a1*(gx-y[2]), p.a1*(gy-y[3])
			dy[4], dy[5] = p.a2*(gx*gx-y[4]), p.a2*(gy*gy-y[5])
			return nil
		}, []float64{start[0], start[1], 0, 0, 0, 0}},
	}
}

func runTrajectories(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("trajectories")
	dir := fs.String("out", "out/trajectories", "directory for the PNGs and the Markdown table")
	var p flowParams
	fs.Float64Var(&p.gamma, "gamma", 1, "heavy-ball damping γ")
	fs.Float64Var(&p.a1, "a1", 1, "Adam ODE first-moment rate (1−β1 per unit time)")
	fs.Float64Var(&p.a2, "a2", 1, "Adam ODE second-moment rate (1−β2 per unit time)")
	fs.Float64Var(&p.eps, "eps", 1e-8, "Adam ODE ε")
	fs.Float64Var(&p.tol, "tol", 1e-8, "solver tolerance (rtol = atol, dopri5)")
	fs.IntVar(&p.samples, "samples", 400, "points per trajectory")
	horizon := fs.Float64("horizon", 0, "end time (0: each function's default, 20)")
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	switch {
	case !(p.gamma >= 0) || !(p.a1 > 0) || !(p.a2 > 0) || !(p.eps > 0):
		return usagef("trajectories: need --gamma ≥ 0 and positive --a1, --a2, --eps")
	case !(p.tol > 0 && p.tol < 1):
		return usagef("trajectories: --tol must be in (0, 1), got %g", p.tol)
	case p.samples < 2:
		return usagef("trajectories: --samples must be at least 2, got %d", p.samples)
	case !(*horizon >= 0) || math.IsInf(*horizon, 0):
		return usagef("trajectories: --horizon must be a finite end time > 0 (or 0 for the defaults), got %g", *horizon)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| function | method | final point | distance to the minimum | F at the end | NFE |\n|---|---|---|---|---|---|\n")
	for _, tf := range testFunctions() {
		if err := ctx.Err(); err != nil {
			return err
		}
		t1 := tf.horizon
		if *horizon > 0 {
			t1 = *horizon
		}
		ts := make([]float64, p.samples)
		for i := range ts {
			ts[i] = t1 * float64(i) / float64(p.samples-1)
		}
		var ss []series
		for _, fl := range flows(p, tf.grad, tf.start) {
			ys, st, err := odeblock.Solve(fl.f, fl.y0, ts, odeblock.Options{RTol: p.tol, ATol: p.tol, StepControl: odeblock.StepControl{MaxSteps: 1_000_000}})
			if err != nil {
				return fmt.Errorf("trajectories: %s on %s: %w", fl.name, tf.name, err)
			}
			s := series{name: fl.name}
			for _, y := range ys {
				s.xs, s.ys = append(s.xs, y[0]), append(s.ys, y[1])
			}
			ss = append(ss, s)
			end := ys[len(ys)-1]
			d := math.Hypot(end[0]-tf.min[0], end[1]-tf.min[1])
			fmt.Fprintf(&table, "| %s | %s | (%.4f, %.4f) | %.3g | %.3g | %d |\n", tf.name, fl.name, end[0], end[1], d, tf.f(end[0], end[1]), st.NFE)
		}
		if err := trajectoryFigure(tf, ss, t1, filepath.Join(*dir, tf.name+".png")); err != nil {
			return err
		}
	}
	fmt.Fprintf(&table, "\nODE: x' = −∇F; HBODE: x' = −m, m' = ∇F − γm (γ = %g); AdamODE: x' = −m/√(v+ε), m' = a1(∇F − m), v' = a2(∇F² − v) (a1 = %g, a2 = %g, ε = %g); m and v start at 0; dopri5 at tolerance %g.\n", p.gamma, p.a1, p.a2, p.eps, p.tol)
	if err := saveText(filepath.Join(*dir, "table.md"), table.String()); err != nil {
		return err
	}
	fmt.Fprint(out, table.String())
	fmt.Fprintf(out, "wrote %s\n", *dir)
	return nil
}

// trajectoryFigure draws the trajectories over log-spaced contours of the
// function (light gray, darker for lower levels), each path in its own
// colour, dash pattern, width and markers spaced along it, with the minimum as a
// black star; the legend sits beside the axes.
func trajectoryFigure(tf testFunction, ss []series, t1 float64, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, t from 0 to %g", tf.name, t1)
	p.X.Label.Text, p.Y.Label.Text = "x", "y"
	grid := &fnGrid{f: tf.f, box: tf.box, n: 120}
	levels := make([]float64, 12)
	for i := range levels {
		levels[i] = math.Pow(10, -1+0.4*float64(i))
	}
	c := plotter.NewContour(grid, levels, grayLevels(len(levels)))
	p.Add(c)
	for i, s := range ss {
		var pts plotter.XYs
		for k := range s.xs {
			x, y := s.xs[k], s.ys[k]
			if x < tf.box[0] || x > tf.box[1] || y < tf.box[2] || y > tf.box[3] || math.IsNaN(x+y) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		// Each line thinner than the one under it: where the paths share
		// a valley, each still shows beside the next.
		width := vg.Points(max(4.5-1.25*float64(i), 2))
		if err := styledLine(p, i, s.name, pts, width, 10, nil); err != nil {
			return fmt.Errorf("trajectories: %s: %w", tf.name, err)
		}
	}
	star, err := plotter.NewScatter(plotter.XYs{{X: tf.min[0], Y: tf.min[1]}})
	if err != nil {
		return err
	}
	star.Shape = draw.PyramidGlyph{}
	star.Color = color.Black
	star.Radius = vg.Points(6)
	p.Add(star)
	p.Legend.Add("minimum", star)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = tf.box[0], tf.box[1], tf.box[2], tf.box[3]
	return savePNG(p, 7, 5, path)
}

// grayLevels is a palette of n light grays, darker for the lower contour
// levels: a background the coloured paths stand out on.
type grayLevels int

func (n grayLevels) Colors() []color.Color {
	cs := make([]color.Color, n)
	for i := range cs {
		cs[i] = color.Gray{Y: uint8(150 + 80*i/max(int(n)-1, 1))}
	}
	return cs
}

// fnGrid samples a function on a regular grid for a contour plot.
type fnGrid struct {
	f   func(x, y float64) float64
	box [4]float64
	n   int
}

func (g *fnGrid) Dims() (c, r int) { return g.n, g.n }
func (g *fnGrid) X(c int) float64 {
	return g.box[0] + (g.box[1]-g.box[0])*float64(c)/float64(g.n-1)
}
func (g *fnGrid) Y(r int) float64 {
	return g.box[2] + (g.box[3]-g.box[2])*float64(r)/float64(g.n-1)
}
func (g *fnGrid) Z(c, r int) float64 { return g.f(g.X(c), g.Y(r)) }
