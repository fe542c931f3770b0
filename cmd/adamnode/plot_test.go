package main

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/train"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// TestLineStylesDistinct checks that the lines of a figure differ in dash
// pattern and marker as well as colour, so that they stay apart in
// grayscale.
func TestLineStylesDistinct(t *testing.T) {
	for i := range lineStyles {
		for j := range i {
			a, b := lineStyles[i], lineStyles[j]
			if a.color == b.color || a.glyph == b.glyph || slices.Equal(a.dashes, b.dashes) {
				t.Errorf("styles %d and %d share a colour, marker or dash pattern", j, i)
			}
		}
	}
}

// TestSpacedMarks checks the markers' positions: every point of a short
// line, else n points evenly spaced along its length.
func TestSpacedMarks(t *testing.T) {
	short := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}, {X: 2, Y: 0}}
	if got := spacedMarks(short, 8, 0.5, nil); len(got) != 3 {
		t.Errorf("short line: %d marks, want its 3 points", len(got))
	}
	// 101 points with 90 of them crowded in the last 1% of x: marks by
	// index would pile up there; by length they are 0.1 apart.
	var pts plotter.XYs
	for k := 0; k <= 10; k++ {
		pts = append(pts, plotter.XY{X: 0.099 * float64(k)})
	}
	for k := 1; k <= 90; k++ {
		pts = append(pts, plotter.XY{X: 0.99 + 0.01*float64(k)/90})
	}
	got := spacedMarks(pts, 10, 0, nil)
	if len(got) != 10 {
		t.Fatalf("%d marks, want 10", len(got))
	}
	for j, p := range got {
		if math.Abs(p.X-0.1*float64(j)) > 0.1 {
			t.Errorf("mark %d at x = %v, want about %v", j, p.X, 0.1*float64(j))
		}
	}
	if shifted := spacedMarks(pts, 10, 0.5, nil); shifted[0].X < 0.03 {
		t.Errorf("phase 0.5: first mark at x = %v, want about 0.05", shifted[0].X)
	}
}

// TestDecadeTicks checks the log axis's labels: powers of ten written
// 1eN, at most eleven of them, every decade ticked.
func TestDecadeTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		labels   []string
	}{
		{0.5, 2e20, []string{"1e0", "1e5", "1e10", "1e15", "1e20"}},
		{1e-3, 2e5, []string{"1e−3", "1e−2", "1e−1", "1e0", "1e1", "1e2", "1e3", "1e4", "1e5"}},
		{0.8, 1e12, []string{"1e0", "1e2", "1e4", "1e6", "1e8", "1e10", "1e12"}},
	} {
		var labels []string
		decades := 0
		for _, tk := range (decadeTicks{}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if e := math.Log10(tk.Value); math.Abs(e-math.Round(e)) < 1e-9 {
				decades++
			}
		}
		if strings.Join(labels, " ") != strings.Join(c.labels, " ") {
			t.Errorf("[%g, %g]: labels %q, want %q", c.min, c.max, labels, c.labels)
		}
		if want := int(math.Floor(math.Log10(c.max))) - int(math.Ceil(math.Log10(c.min))) + 1; decades != want {
			t.Errorf("[%g, %g]: %d decades ticked, want %d", c.min, c.max, decades, want)
		}
	}
	var minor int
	for _, tk := range (decadeTicks{}).Ticks(1, 100) {
		if tk.Label == "" {
			minor++
		}
	}
	if minor != 16 {
		t.Errorf("[1, 100]: %d unlabelled ticks, want 2…9 of two decades (16)", minor)
	}
}

// TestIntegerTicks checks the epoch axis: whole numbers only.
func TestIntegerTicks(t *testing.T) {
	var labels []string
	for _, tk := range (integerTicks{}).Ticks(0.9, 3.1) {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, ",") != "1,2,3" {
		t.Errorf("ticks %q, want 1,2,3", labels)
	}
	n := 0
	for _, tk := range (integerTicks{}).Ticks(1, 50) {
		if tk.Label != "" {
			n++
		}
	}
	if n > 11 {
		t.Errorf("1…50: %d labels, want at most 11", n)
	}
}

// TestLegendBesideData draws a figure whose lines fill the data area and
// checks that every series with points has a legend entry, that one with
// none has not, and that the legend's text lies right of everything the
// axes drew: off the data.
func TestLegendBesideData(t *testing.T) {
	xs := []float64{0, 1, 2, 3}
	ss := []series{
		{name: "first", xs: xs, ys: []float64{1, 10, 100, 1000}},
		{name: "second", xs: xs, ys: []float64{1000, 100, 10, 1}},
		{name: "empty", xs: xs, ys: []float64{math.NaN(), -1, 0, math.Inf(1)}},
		{name: "third", xs: xs, ys: []float64{5, 5, 5, 5}},
	}
	p, err := linePlot("title", "x", "y", true, ss)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	drawBesideLegend(p, draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: 6 * vg.Inch, Y: 4 * vg.Inch}}})
	maxPlotX, legendX := vg.Length(math.Inf(-1)), vg.Length(math.Inf(1))
	entries := map[string]bool{}
	inLegend := false
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.FillString:
			if a.String == "first" || a.String == "second" || a.String == "third" || a.String == "empty" {
				inLegend = true
				entries[a.String] = true
				legendX = min(legendX, a.Point.X)
			}
		case *recorder.Stroke:
			if inLegend {
				continue // the legend's thumbnails
			}
			for _, c := range a.Path {
				maxPlotX = max(maxPlotX, c.Pos.X)
			}
		}
	}
	if len(entries) != 3 || entries["empty"] {
		t.Errorf("legend entries %v, want first, second and third", entries)
	}
	if !(legendX > maxPlotX) {
		t.Errorf("legend text starts at x = %v, inside the axes (which reach %v)", legendX, maxPlotX)
	}
	if p.Legend.Left || p.Legend.Top {
		t.Error("drawBesideLegend left its changes on the plot's legend")
	}
}

// TestSavePNGSize checks that a figure is written as a PNG of the asked
// size (96 dots per inch).
func TestSavePNGSize(t *testing.T) {
	p, err := linePlot("t", "x", "y", false, []series{{name: "a", xs: []float64{0, 1}, ys: []float64{0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.png")
	if err := savePNG(p, 7, 4, path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != 7*96 || cfg.Height != 4*96 {
		t.Errorf("%v, %dx%d, want 672x384", err, cfg.Width, cfg.Height)
	}
}

// TestCompareReplot redraws a comparison's plots from its CSV alone, and
// refuses a file that is not one.
func TestCompareReplot(t *testing.T) {
	out := t.TempDir()
	var rows []train.Row
	for _, m := range []string{"node", "adamnode"} {
		for e := 1; e <= 3; e++ {
			rows = append(rows,
				train.Row{Model: m, Split: "train", Epoch: e, Loss: 2 / float64(e), Accuracy: 0.5, FwdNFE: 20, BwdNFE: 20},
				train.Row{Model: m, Split: "test", Epoch: e, Loss: 2 / float64(e), Accuracy: 0.2 * float64(e), FwdNFE: 20})
		}
	}
	if err := train.WriteCSV(filepath.Join(out, "compare.csv"), rows); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("compare", "--replot", "--out", out)
	if code != 0 || !strings.Contains(stdout, "redrew") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	results, err := readCompareCSV(filepath.Join(out, "compare.csv"))
	if err != nil || len(results) != 2 || results[1].kind.Title() != "AdamNODE" || len(results[1].split("test")) != 3 {
		t.Errorf("read back %d models (%v)", len(results), err)
	}
	for _, name := range []string{"loss.png", "efficacy.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 7*96 || cfg.Height != 4*96 {
			t.Errorf("%s: %v, %dx%d, want 672x384", name, err, cfg.Width, cfg.Height)
		}
	}
	for _, bad := range []string{"", "model,split\nnode,train\n", strings.Join(train.CSVHeader(), ",") + "\nnomodel,train,1,1,1,1,1,1,1\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "compare.csv"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := runCmd("compare", "--replot", "--out", dir); code == 0 {
			t.Errorf("--replot accepted the CSV %q", bad)
		}
	}
	if code, _, _ := runCmd("compare", "--replot", "--out", t.TempDir()); code == 0 {
		t.Error("--replot without a compare.csv succeeded")
	}
}
