package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/train"
)

func runCompare(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("compare")
	var f trainFlags
	names := fs.String("models", "node,anode,sonode,hbnode,ghbnode,adamnode", "comma-separated models to train, in this order")
	addTrainFlags(fs, &f, "out/compare")
	replot := fs.Bool("replot", false, "only redraw loss.png and efficacy.png in --out from its compare.csv (trains nothing; --dataset names the data in the titles)")
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	kinds, err := parseKinds(*names)
	if err != nil {
		return err
	}
	s, err := f.resolve("compare")
	if err != nil {
		return err
	}
	if *replot {
		return replotCompare(s, out)
	}
	tr, te, err := prepare(s)
	if err != nil {
		return err
	}
	command := "adamnode compare " + strings.Join(args, " ")
	fmt.Fprintf(out, "comparing %d models on %s: %d training images in batches of %d, %d test images; %s\n",
		len(kinds), s.dataset, tr.Len(), s.batch, te.Len(), s.describe())
	if err := printModelSizes(out, s, kinds); err != nil {
		return err
	}
	results, err := trainAll(ctx, s, kinds, tr, te, out, command)
	if err != nil {
		return err
	}
	return writeCompare(s, results, command, out)
}

// parseKinds parses --models, a comma-separated list of model names.
func parseKinds(names string) ([]models.Kind, error) {
	var kinds []models.Kind
	for _, n := range strings.Split(names, ",") {
		k, err := models.ParseKind(strings.TrimSpace(n))
		if err != nil {
			return nil, usagef("compare: unknown model %q in --models (use node, anode, sonode, hbnode, ghbnode, adamnode)", n)
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// printModelSizes builds each model of kinds as s configures it and prints
// its widths and numbers of parameters.
func printModelSizes(out io.Writer, s runSettings, kinds []models.Kind) error {
	for _, k := range kinds {
		cfg := s.modelConfig(k)
		m, err := models.New[float32](rand.New(rand.NewPCG(s.seed, 0)), cfg)
		if err != nil {
			return usagef("compare %v: %v", k, err)
		}
		c := m.Counts()
		fmt.Fprintf(out, "  %-8s c=%-2d nhid=%-3d %7d parameters (initial-state net %d, f %d, scalars %d, head %d)\n",
			k.Title(), cfg.C, cfg.NHid, c.Total, c.Init, c.Field, c.Scalars, c.Head)
	}
	return nil
}

// trainAll trains (or resumes) each model of kinds in turn, watching its
// memory while it trains.
func trainAll(ctx context.Context, s runSettings, kinds []models.Kind, tr, te *data.Loader, out io.Writer, command string) ([]compareResult, error) {
	var results []compareResult
	for _, k := range kinds {
		w := startMemWatch()
		r, err := trainModel(ctx, s, k, tr, te, out, command)
		mem := w.stop()
		if err != nil {
			return nil, err
		}
		cr := compareResult{trainResult: *r}
		if r.Ran {
			cr.mem = &mem
		}
		results = append(results, cr)
	}
	return results, nil
}

// writeCompare writes the comparison's CSV, table and plots into s.out and
// prints the table and what was written.
func writeCompare(s runSettings, results []compareResult, command string, out io.Writer) error {
	var all []train.Row
	for _, r := range results {
		all = append(all, r.Rows...)
	}
	if err := train.WriteCSV(filepath.Join(s.out, "compare.csv"), all); err != nil {
		return err
	}
	table := compareTable(s, results, command)
	if err := saveText(filepath.Join(s.out, "table.md"), table); err != nil {
		return err
	}
	if err := comparePlots(s, results); err != nil {
		return err
	}
	fmt.Fprint(out, table)
	fmt.Fprintf(out, "wrote %s: compare.csv, table.md, loss.png, efficacy.png, %s\n", s.out, checkpointSummary(results))
	return nil
}

// replotCompare redraws the plots in s.out from the compare.csv there.
func replotCompare(s runSettings, out io.Writer) error {
	path := filepath.Join(s.out, "compare.csv")
	results, err := readCompareCSV(path)
	if err != nil {
		return err
	}
	if err := comparePlots(s, results); err != nil {
		return err
	}
	fmt.Fprintf(out, "redrew %s and %s from %s\n",
		filepath.Join(s.out, "loss.png"), filepath.Join(s.out, "efficacy.png"), path)
	return nil
}

// readCompareCSV reads a compare.csv (train.WriteCSV's columns) into one
// result per model, in the order the models first appear.
func readCompareCSV(path string) ([]compareResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], train.CSVHeader()) {
		return nil, fmt.Errorf("%s: not a compare CSV (want the header %s)", path, strings.Join(train.CSVHeader(), ","))
	}
	var results []compareResult
	index := map[string]int{}
	for n, rec := range recs[1:] {
		bad := func(err error) error { return fmt.Errorf("%s, line %d: %w", path, n+2, err) }
		row := train.Row{Model: rec[0], Split: rec[1]}
		if row.Epoch, err = strconv.Atoi(rec[2]); err != nil {
			return nil, bad(err)
		}
		for k, v := range []*float64{&row.Loss, &row.Accuracy, &row.FwdNFE, &row.BwdNFE, &row.Seconds, &row.Elapsed} {
			if *v, err = strconv.ParseFloat(rec[3+k], 64); err != nil {
				return nil, bad(err)
			}
		}
		i, ok := index[row.Model]
		if !ok {
			kind, err := models.ParseKind(row.Model)
			if err != nil {
				return nil, bad(err)
			}
			i, index[row.Model] = len(results), len(results)
			results = append(results, compareResult{trainResult: trainResult{Result: &train.Result{}, kind: kind}})
		}
		results[i].Rows = append(results[i].Rows, row)
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return results, nil
}

// checkpointSummary says which of the per-model files this run wrote: the
// CSVs always, the checkpoints of the models it trained.
func checkpointSummary(results []compareResult) string {
	var trained []string // the models whose checkpoints this run wrote
	for _, r := range results {
		if r.WroteCheckpoint {
			trained = append(trained, r.kind.String())
		}
	}
	switch {
	case len(trained) == 0:
		return "and each model's CSV (from its checkpoint)"
	case len(trained) < len(results):
		return "each model's CSV, and the checkpoints of " + strings.Join(trained, ", ")
	}
	return "and each model's CSV and checkpoint"
}

// compareResult is one model's run, with its memory when it ran here.
type compareResult struct {
	trainResult
	mem *memUse
}

// split returns the model's rows of one split.
func (r compareResult) split(name string) []train.Row {
	var rs []train.Row
	for _, row := range r.Rows {
		if row.Split == name {
			rs = append(rs, row)
		}
	}
	return rs
}

// efficacy is the test accuracy per NFE of one training iteration
// (forward + backward) of the same epoch.
func efficacy(train, test train.Row) float64 {
	return test.Accuracy / (train.FwdNFE + train.BwdNFE)
}

// compareTable renders the results as Markdown: one row per model with the
// numbers of its last epoch, then how each column was measured.
func compareTable(s runSettings, results []compareResult, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# NODE families on %s\n\n", s.dataset)
	fmt.Fprintf(&b, "`%s`\n\n", command)
	b.WriteString("| model | parameters | final train loss | test accuracy | forward NFE | backward NFE | efficacy | s / epoch | peak RSS (MiB) | peak heap (MiB) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	cumulative := false
	for _, r := range results {
		tr, te := r.split("train"), r.split("test")
		if len(tr) == 0 || len(te) == 0 {
			continue
		}
		last, lastTest := tr[len(tr)-1], te[len(te)-1]
		secs := 0.0
		for _, row := range tr {
			secs += row.Seconds
		}
		rss, heap := "–", "–"
		if r.mem != nil {
			rss, heap = fmt.Sprintf("%.0f", r.mem.rssMiB), fmt.Sprintf("%.0f", r.mem.heapMiB)
			cumulative = cumulative || r.mem.rssCumulative
		}
		fmt.Fprintf(&b, "| %s | %d | %.4f | %.2f%% | %.1f | %.1f | %.4f | %.1f | %s | %s |\n",
			r.kind.Title(), r.counts.Total, last.Loss, 100*lastTest.Accuracy, last.FwdNFE, last.BwdNFE,
			efficacy(last, lastTest), secs/float64(len(tr)), rss, heap)
	}
	fmt.Fprintf(&b, "\nThe last epoch's numbers; %s. ", s.describe())
	if s.subset > 0 || s.testSubset > 0 {
		fmt.Fprintf(&b, "Subsets: the first %s training and %s test images. ", countOrAll(s.subset), countOrAll(s.testSubset))
	}
	if s.nhid > 0 || s.nhidScale != 1 {
		fmt.Fprintf(&b, "Hidden widths changed from the paper's (--nhid %d, --nhid-scale %g). ", s.nhid, s.nhidScale)
	}
	b.WriteString("Same data order and seed for every model.\n\n")
	b.WriteString("- *final train loss*: mean cross-entropy over the last epoch's training batches, as the model was being trained.\n")
	b.WriteString("- *forward / backward NFE*: evaluations of the ODE's right-hand side per training iteration (one batch), averaged over the last epoch; backward NFE counts the adjoint solve's evaluations (each one vector–Jacobian product).\n")
	b.WriteString("- *efficacy*: test accuracy (as a fraction) divided by the forward + backward NFE of one training iteration, both of the last epoch.\n")
	b.WriteString("- *s / epoch*: wall time of the training part of an epoch (evaluation excluded), averaged over the epochs.\n")
	b.WriteString("- *peak RSS*: the process's resident-set high-water mark (VmHWM) while that model trained and was evaluated, reset before each model after returning freed memory to the OS; it includes the datasets and the Go runtime.")
	if cumulative {
		b.WriteString(" (This kernel would not reset the mark, so it is the process's peak so far: getrusage's ru_maxrss.)")
	}
	b.WriteString("\n- *peak heap*: the largest Go heap (live and not yet collected objects) sampled every 10 ms during that model's run.\n")
	b.WriteString("- Plots: loss.png (training loss per epoch) and efficacy.png (efficacy per epoch), the paper's Figure 2.\n")
	return b.String()
}

func countOrAll(n int) string {
	if n == 0 {
		return "all"
	}
	return fmt.Sprint(n)
}

// comparePlots draws training loss and efficacy per epoch, one line per
// model, into loss.png and efficacy.png. Per epoch is the finest the
// training loop reports the loss at (Config.OnBatch carries no numbers);
// efficacy needs the epoch's test accuracy.
func comparePlots(s runSettings, results []compareResult) error {
	var loss, eff []series
	for _, r := range results {
		tr, te := r.split("train"), r.split("test")
		ls, es := series{name: r.kind.Title()}, series{name: r.kind.Title()}
		for i, row := range tr {
			ls.xs, ls.ys = append(ls.xs, float64(row.Epoch)), append(ls.ys, row.Loss)
			if i < len(te) {
				es.xs, es.ys = append(es.xs, float64(row.Epoch)), append(es.ys, efficacy(row, te[i]))
			}
		}
		loss, eff = append(loss, ls), append(eff, es)
	}
	for _, fig := range []struct {
		file, title, ylabel string
		ss                  []series
	}{
		{"loss.png", "Training loss on " + s.dataset, "cross-entropy (mean over the epoch's batches)", loss},
		{"efficacy.png", "Efficacy on " + s.dataset, "test accuracy per NFE (fwd + bwd)", eff},
	} {
		p, err := linePlot(fig.title, "epoch", fig.ylabel, false, fig.ss)
		if err != nil {
			return err
		}
		p.X.Tick.Marker = integerTicks{}
		// A little room either side so that the first and last epochs'
		// markers are not cut by the axes.
		p.X.Min, p.X.Max = p.X.Min-0.1, p.X.Max+0.1
		if err := savePNG(p, 7, 4, filepath.Join(s.out, fig.file)); err != nil {
			return err
		}
	}
	return nil
}
