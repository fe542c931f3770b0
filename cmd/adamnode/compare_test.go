package main

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/train"
)

// checkBatches reads the batches.csv at path and checks that it has
// epochs × nb rows for each of names, in that order, at increasing
// positions ending at each epoch's end; it returns the rows.
func checkBatches(t *testing.T, path string, names []string, epochs, nb int) []batchRow {
	t.Helper()
	rows, err := readBatchCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(names)*epochs*nb {
		t.Fatalf("%s has %d rows, want %d models × %d epochs × %d batches", path, len(rows), len(names), epochs, nb)
	}
	for m, name := range names {
		rs := rows[m*epochs*nb : (m+1)*epochs*nb]
		for i, r := range rs {
			want := float64(i+1) / float64(nb)
			if r.Model != name || r.Batches != nb || r.Epoch != i/nb+1 || r.Batch != i%nb+1 || math.Abs(r.position()-want) > 1e-12 {
				t.Errorf("%s row %d: %+v at %g, want %s epoch %d batch %d of %d at %g", name, i, r, r.position(), name, i/nb+1, i%nb+1, nb, want)
			}
			if i > 0 && r.position() <= rs[i-1].position() {
				t.Errorf("%s row %d: position %g not after %g", name, i, r.position(), rs[i-1].position())
			}
			if r.N < 1 || r.Correct > r.N || !(r.Loss > 0) {
				t.Errorf("%s row %d: %+v", name, i, r)
			}
		}
	}
	return rows
}

// TestCompareBatchesResume trains two models for one epoch, marks the
// batches.csv it wrote, and resumes to two epochs: the first epoch's rows
// must come from the file (marks kept), the second's from the new run; a
// run without --resume starts the file over, and a resumed run that fails
// keeps the rows of the epochs its checkpoint holds.
func TestCompareBatchesResume(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeIDX(t, dir, 40, 20)
	names := []string{"node", "anode"}
	base := []string{"compare", "--models", strings.Join(names, ",")}
	path := filepath.Join(out, "batches.csv")
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, out)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := checkBatches(t, path, names, 1, 3)
	mpath := filepath.Join(out, "memory.csv")
	mem, err := loadMemory(mpath)
	if err != nil || len(mem) != 2 || !(mem["node"].rssMiB > 0) || !(mem["anode"].heapMiB > 0) {
		t.Fatalf("memory.csv after the first run: %v, %v", mem, err)
	}
	// A mark: a resumed run keeps the larger peak, and a model that does
	// not run again keeps its row.
	if _, err := saveMemory(mpath, "node", memUse{rssMiB: 1e6, heapMiB: 1e6}); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Seconds = 1000 + float64(i) // marks: a run would not take so long
	}
	if err := writeBatchCSV(path, rows); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "2", "--resume"), tinyArgs(dir, out)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := checkBatches(t, path, names, 2, 3)
	if mem, err := loadMemory(mpath); err != nil || mem["node"].rssMiB != 1e6 || !(mem["anode"].rssMiB > 0) {
		t.Errorf("memory.csv after resuming: %v, %v (node's mark must be kept)", mem, err)
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(table), "median s / batch") || !strings.Contains(string(table), "| 1000000 | 1000000 |") {
		t.Errorf("table.md after resuming (%v): want a median s / batch column and node's marked memory:\n%s", err, table)
	}
	for m := range names {
		for i := range 6 {
			r := got[6*m+i]
			if marked := r.Seconds >= 1000; marked != (i < 3) {
				t.Errorf("%s epoch %d batch %d: seconds %g (the first epoch's rows must be the file's)", r.Model, r.Epoch, r.Batch, r.Seconds)
			} else if marked && r.Seconds != 1000+float64(3*m+i) {
				t.Errorf("%s epoch %d batch %d: seconds %g, want the mark %d", r.Model, r.Epoch, r.Batch, r.Seconds, 1000+3*m+i)
			}
		}
	}

	// A resumed run that fails (too few solver steps) in its first new
	// epoch keeps the rows of the epochs done.
	if code, _, stderr := runCmd(append(append(base, "--epochs", "3", "--resume", "--max-steps", "1"), tinyArgs(dir, out)...)...); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	failed, err := readBatchCSV(path)
	if err != nil || !slices.Equal(failed, got) {
		t.Errorf("the failed run changed batches.csv (%v): %d rows, want the %d before", err, len(failed), len(got))
	}

	// Without --resume the models train afresh: no marked rows are left.
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, out)...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range checkBatches(t, path, names, 1, 3) {
		if r.Seconds >= 1000 {
			t.Errorf("a fresh run kept the old row %+v", r)
		}
	}
	if mem, err := loadMemory(mpath); err != nil || len(mem) != 2 || mem["node"].rssMiB == 1e6 {
		t.Errorf("memory.csv after a fresh run: %v, %v (the mark must be gone)", mem, err)
	}
}

// TestMemoryCSV: memory.csv keeps the larger of each peak over a model's
// runs, reads back what it wrote, is empty when missing, and a damaged
// file is an error naming the file and the line.
func TestMemoryCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.csv")
	if mem, err := loadMemory(path); err != nil || len(mem) != 0 {
		t.Fatalf("missing file: %v, %v", mem, err)
	}
	steps := []struct {
		model string
		in    memUse
		want  memUse
	}{
		{"node", memUse{rssMiB: 100, heapMiB: 40}, memUse{rssMiB: 100, heapMiB: 40}},
		{"anode", memUse{rssMiB: 90.5, heapMiB: 30}, memUse{rssMiB: 90.5, heapMiB: 30}},
		{"node", memUse{rssMiB: 80, heapMiB: 50, rssCumulative: true}, memUse{rssMiB: 100, heapMiB: 50, rssCumulative: true}},
	}
	for i, st := range steps {
		got, err := saveMemory(path, st.model, st.in)
		if err != nil || got != st.want {
			t.Fatalf("step %d: saveMemory = %+v, %v; want %+v", i, got, err, st.want)
		}
	}
	mem, err := loadMemory(path)
	want := map[string]memUse{"node": steps[2].want, "anode": steps[1].want}
	if err != nil || len(mem) != 2 || mem["node"] != want["node"] || mem["anode"] != want["anode"] {
		t.Fatalf("read back %v, %v; want %v", mem, err, want)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*")); len(left) != 1 {
		t.Errorf("files beside memory.csv: %v", left)
	}
	for _, bad := range []struct{ text, want string }{
		{"model,rss\n", "header"},
		{"model,peak_rss_mib,rss_cumulative,peak_heap_mib\nnode,-1,false,3\n", "line 2"},
		{"model,peak_rss_mib,rss_cumulative,peak_heap_mib\nnode,1,maybe,3\n", "line 2"},
	} {
		if err := os.WriteFile(path, []byte(bad.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadMemory(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one naming %s and %q", bad.text, err, path, bad.want)
		}
		if _, err := saveMemory(path, "node", memUse{}); err == nil {
			t.Errorf("%q: saveMemory over a damaged file succeeded", bad.text)
		}
	}
}

// TestMedianSeconds: the median of odd and even counts, whatever the order.
func TestMedianSeconds(t *testing.T) {
	rows := func(secs ...float64) []batchRow {
		var rs []batchRow
		for _, s := range secs {
			rs = append(rs, batchRow{Seconds: s})
		}
		return rs
	}
	for _, c := range []struct {
		rows []batchRow
		want float64
	}{
		{rows(3), 3},
		{rows(5, 1, 900), 5},
		{rows(4, 1, 900, 2), 3},
	} {
		if got := medianSeconds(c.rows); got != c.want {
			t.Errorf("medianSeconds(%v) = %g, want %g", c.rows, got, c.want)
		}
	}
}

// TestBatchLogMerged checks the merge of a resumed model's rows: the old
// ones before the first new one (a checkpoint in the middle of an epoch
// included), none past the epochs the checkpoint holds, every model's
// old rows kept until it runs.
func TestBatchLogMerged(t *testing.T) {
	row := func(m string, e, b int, secs float64) batchRow {
		return batchRow{Model: m, Epoch: e, Batch: b, Batches: 3, Loss: 1, N: 8, Correct: 4, FwdNFE: 20, BwdNFE: 20, Seconds: secs}
	}
	path := filepath.Join(t.TempDir(), "batches.csv")
	var old []batchRow
	for _, m := range []string{"node", "hbnode"} {
		for e := 1; e <= 2; e++ {
			for b := 1; b <= 3; b++ {
				old = append(old, row(m, e, b, 1))
			}
		}
	}
	if err := writeBatchCSV(path, old); err != nil {
		t.Fatal(err)
	}
	l, err := newBatchLog(path, []models.Kind{models.NODE, models.HBNODE}, true)
	if err != nil {
		t.Fatal(err)
	}
	// node resumes from epoch 2, batch 1 (a mid-epoch checkpoint).
	for e, b := 2, 2; e <= 3; b++ {
		if b > 3 {
			e, b = e+1, 1
			if e > 3 {
				break
			}
		}
		l.add(row("node", e, b, 2))
	}
	got := l.merged("node")
	var pos []string
	for _, r := range got {
		pos = append(pos, fmt.Sprintf("%d.%d:%g", r.Epoch, r.Batch, r.Seconds))
	}
	want := "1.1:1 1.2:1 1.3:1 2.1:1 2.2:2 2.3:2 3.1:2 3.2:2 3.3:2"
	if strings.Join(pos, " ") != want {
		t.Errorf("merged node rows %s, want %s", strings.Join(pos, " "), want)
	}
	l.done["hbnode"] = 1 // a checkpoint of one epoch: the second's rows are stale
	if err := l.write(); err != nil {
		t.Fatal(err)
	}
	rows, err := readBatchCSV(path)
	if err != nil || len(rows) != 9+3 || rows[9].Model != "hbnode" || rows[11].Epoch != 1 {
		t.Errorf("wrote %d rows (%v), want node's 9 then hbnode's first epoch", len(rows), err)
	}
	// Without --resume the file is not read.
	if l, err := newBatchLog(path, []models.Kind{models.NODE}, false); err != nil || len(l.merged("node")) != 0 {
		t.Errorf("a fresh log has node's old rows (%v)", err)
	}
	// A file that is not a batches.csv stops a resumed run.
	if err := os.WriteFile(path, []byte("model,epoch\nnode,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newBatchLog(path, []models.Kind{models.NODE}, true); err == nil {
		t.Error("resumed with a batches.csv of another format")
	}
}

// TestCompareReplotBatches redraws the plots from compare.csv with and
// without the batches.csv beside it, and refuses a bad batches.csv.
func TestCompareReplotBatches(t *testing.T) {
	out := t.TempDir()
	var rows []train.Row
	var batches []batchRow
	for _, m := range []string{"node", "adamnode"} {
		for e := 1; e <= 2; e++ {
			rows = append(rows,
				train.Row{Model: m, Split: "train", Epoch: e, Loss: 2 / float64(e), Accuracy: 0.5, FwdNFE: 20, BwdNFE: 20},
				train.Row{Model: m, Split: "test", Epoch: e, Loss: 2 / float64(e), Accuracy: 0.3 * float64(e), FwdNFE: 20})
			for b := 1; b <= 10; b++ {
				batches = append(batches, batchRow{Model: m, Epoch: e, Batch: b, Batches: 10,
					Loss: 2 / float64(e*b), N: 32, Correct: 3 * b, FwdNFE: 20 + b%3, BwdNFE: 20})
			}
		}
	}
	if err := train.WriteCSV(filepath.Join(out, "compare.csv"), rows); err != nil {
		t.Fatal(err)
	}
	pngs := func() map[string][]byte {
		t.Helper()
		m := map[string][]byte{}
		for _, name := range []string{"loss.png", "efficacy.png"} {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(strings.NewReader(string(b)))
			if err != nil || cfg.Width != 7*96 || cfg.Height != 4*96 {
				t.Errorf("%s: %v, %dx%d, want 672x384", name, err, cfg.Width, cfg.Height)
			}
			m[name] = b
		}
		return m
	}
	code, stdout, stderr := runCmd("compare", "--replot", "--out", out)
	if code != 0 || !strings.Contains(stdout, "redrew") || strings.Contains(stdout, "batches.csv") {
		t.Fatalf("without batches.csv: exit %d: %s%s", code, stdout, stderr)
	}
	perEpoch := pngs()
	if err := writeBatchCSV(filepath.Join(out, "batches.csv"), batches); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd("compare", "--replot", "--out", out)
	if code != 0 || !strings.Contains(stdout, "batches.csv") {
		t.Fatalf("with batches.csv: exit %d: %s%s", code, stdout, stderr)
	}
	perBatch := pngs()
	for name := range perBatch {
		if string(perBatch[name]) == string(perEpoch[name]) {
			t.Errorf("%s is the same drawn from batches.csv as from compare.csv", name)
		}
	}
	for _, bad := range []string{"", "model,epoch\nnode,1\n",
		strings.Join(batchHeader, ",") + "\nnode,1,4,3,1,1,8,4,0.5,20,20,0.0125,1\n", // batch 4 of 3
		strings.Join(batchHeader, ",") + "\nnomodel,1,1,3,1,1,8,4,0.5,20,20,0.0125,1\n"} {
		if err := os.WriteFile(filepath.Join(out, "batches.csv"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := runCmd("compare", "--replot", "--out", out); code == 0 {
			t.Errorf("--replot accepted the batches.csv %q", bad)
		}
	}
}

// TestTrailingMean checks the smoothing of the per-batch lines.
func TestTrailingMean(t *testing.T) {
	got := trailingMean([]float64{1, 3, 5, 7}, 2)
	if !slices.Equal(got, []float64{1, 2, 4, 6}) {
		t.Errorf("trailingMean = %v", got)
	}
	if got := trailingMean([]float64{2, 4}, 1); !slices.Equal(got, []float64{2, 4}) {
		t.Errorf("window 1: %v", got)
	}
}
