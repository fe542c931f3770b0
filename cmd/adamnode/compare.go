package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
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
	replot := fs.Bool("replot", false, "only redraw loss.png and efficacy.png in --out from its compare.csv and batches.csv (per epoch without batches.csv; trains nothing; --dataset names the data in the titles)")
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
// memory while it trains, and records its training batches in
// batches.csv in s.out: after every epoch, after each model and when a
// model's run fails or is interrupted, so that a resumed run finds the
// batches of the epochs it will not train again.
func trainAll(ctx context.Context, s runSettings, kinds []models.Kind, tr, te *data.Loader, out io.Writer, command string) ([]compareResult, error) {
	log, err := newBatchLog(filepath.Join(s.out, "batches.csv"), kinds, s.resume)
	if err != nil {
		return nil, err
	}
	if !s.resume { // a fresh comparison: forget the memory of an earlier one
		if err := os.Remove(filepath.Join(s.out, "memory.csv")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	nb := tr.NumBatches()
	var results []compareResult
	for _, k := range kinds {
		name := k.String()
		hooks := trainHooks{
			onStep: func(epoch, batches int, st train.Step) {
				log.add(batchRow{Model: name, Epoch: epoch + 1, Batch: batches, Batches: nb, Loss: st.Loss,
					N: st.N, Correct: st.Correct, FwdNFE: st.FwdNFE, BwdNFE: st.BwdNFE, Seconds: st.Seconds})
			},
			onEpoch: func(row, _ train.Row) error {
				log.done[name] = row.Epoch
				return log.write()
			},
		}
		w := startMemWatch()
		r, err := trainModel(ctx, s, k, tr, te, out, command, hooks)
		mem := w.stop()
		if err != nil {
			// Interrupted or failed: the batches and the memory so far are
			// kept for a resumed run.
			_, merr := saveMemory(filepath.Join(s.out, "memory.csv"), name, mem)
			if werr := errors.Join(log.write(), merr); werr != nil {
				err = fmt.Errorf("%w (and writing %s: %v)", err, s.out, werr)
			}
			return nil, err
		}
		cr := compareResult{trainResult: *r}
		if cr.mem, err = modelMemory(s, name, r.Ran, mem); err != nil {
			return nil, err
		}
		log.done[name] = len(cr.split("train"))
		cr.batches = log.merged(name)
		if err := log.write(); err != nil {
			return nil, err
		}
		results = append(results, cr)
	}
	return results, nil
}

// modelMemory returns the memory a model's run took, kept in memory.csv in
// s.out (trainAll removes it when not resuming): when it ran (ran), mem,
// with the peaks of its runs before when resuming; when it did not (its
// checkpoint held every epoch), those of its runs before, or nil when none
// was recorded.
func modelMemory(s runSettings, name string, ran bool, mem memUse) (*memUse, error) {
	path := filepath.Join(s.out, "memory.csv")
	if ran {
		u, err := saveMemory(path, name, mem)
		return &u, err
	}
	all, err := loadMemory(path)
	if u, ok := all[name]; ok && err == nil {
		return &u, nil
	}
	return nil, err
}

// batchRow is one line of batches.csv: one training batch of one model,
// as train.Config.OnStep reported it.
type batchRow struct {
	Model                 string
	Epoch, Batch, Batches int     // the epoch (from 1), the batch in it (from 1), the epoch's batches
	Loss                  float64 // the batch's mean cross-entropy
	N, Correct            int     // its examples, and those predicted right
	FwdNFE, BwdNFE        int     // the ODE block's evaluations in its forward and backward passes
	Seconds               float64 // the step's wall time
}

// batchHeader is batches.csv's header; position, accuracy and efficacy
// are derived from the other columns (and not read back).
var batchHeader = []string{"model", "epoch", "batch", "batches", "position", "loss", "examples", "correct",
	"accuracy", "forward_nfe", "backward_nfe", "efficacy", "seconds"}

// position is the batch's place in epochs: the epochs before it plus the
// fraction of its epoch done after it (the last batch of epoch e is at e).
func (b batchRow) position() float64 {
	return float64(b.Epoch-1) + float64(b.Batch)/float64(b.Batches)
}

// accuracy is the fraction of the batch's examples predicted right (while
// it was being trained on, before the step).
func (b batchRow) accuracy() float64 { return float64(b.Correct) / float64(b.N) }

// efficacy is the batch's training accuracy per NFE of its iteration
// (forward + backward): the per-batch counterpart of efficacy, which
// needs a test accuracy only an epoch's end has.
func (b batchRow) efficacy() float64 { return b.accuracy() / float64(b.FwdNFE+b.BwdNFE) }

func (b batchRow) record() []string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []string{b.Model, strconv.Itoa(b.Epoch), strconv.Itoa(b.Batch), strconv.Itoa(b.Batches), g(b.position()),
		g(b.Loss), strconv.Itoa(b.N), strconv.Itoa(b.Correct), g(b.accuracy()), strconv.Itoa(b.FwdNFE),
		strconv.Itoa(b.BwdNFE), g(b.efficacy()), g(b.Seconds)}
}

// before reports whether a comes before b in training.
func (b batchRow) before(c batchRow) bool {
	return b.Epoch < c.Epoch || b.Epoch == c.Epoch && b.Batch < c.Batch
}

// batchLog is a comparison's batches.csv as it is being trained: the rows
// this run reported and, when it resumes, those the file held before.
type batchLog struct {
	path  string
	kinds []models.Kind
	old   map[string][]batchRow // the file's rows when the run began (resuming)
	rows  map[string][]batchRow // this run's
	done  map[string]int        // epochs each model's checkpoint holds, once known
}

// newBatchLog starts the log of kinds' batches at path, with the rows the
// file there holds when resuming (none when it does not exist).
func newBatchLog(path string, kinds []models.Kind, resume bool) (*batchLog, error) {
	l := &batchLog{path: path, kinds: kinds, old: map[string][]batchRow{}, rows: map[string][]batchRow{}, done: map[string]int{}}
	if !resume {
		return l, nil
	}
	rows, err := readBatchCSV(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w (move it away to resume without it)", err)
	}
	for _, r := range rows {
		l.old[r.Model] = append(l.old[r.Model], r)
	}
	return l, nil
}

func (l *batchLog) add(r batchRow) { l.rows[r.Model] = append(l.rows[r.Model], r) }

// merged returns a model's rows in training order: the old ones before the
// first this run reported (the batches its checkpoint already held), then
// this run's; none past the epochs its checkpoint holds, once known.
func (l *batchLog) merged(model string) []batchRow {
	fresh := l.rows[model]
	var out []batchRow
	for _, r := range l.old[model] {
		if len(fresh) == 0 || r.before(fresh[0]) {
			out = append(out, r)
		}
	}
	out = append(out, fresh...)
	slices.SortStableFunc(out, func(a, b batchRow) int {
		if a.before(b) {
			return -1
		} else if b.before(a) {
			return 1
		}
		return 0
	})
	if done, ok := l.done[model]; ok {
		out = slices.DeleteFunc(out, func(r batchRow) bool { return r.Epoch > done })
	}
	return out
}

// write writes every model's merged rows to the log's file, through a
// temporary file renamed into place.
func (l *batchLog) write() error {
	var rows []batchRow
	for _, k := range l.kinds {
		rows = append(rows, l.merged(k.String())...)
	}
	return writeBatchCSV(l.path, rows)
}

// writeBatchCSV writes rows as batches.csv to path.
func writeBatchCSV(path string, rows []batchRow) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(batchHeader)
	for _, r := range rows {
		w.Write(r.record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return saveText(path, b.String())
}

// readHeadedCSV reads the CSV file at path, which must begin with header, and
// returns its records after the header; what names the kind of file in the
// error for another header. A missing file's error wraps fs.ErrNotExist.
func readHeadedCSV(path, what string, header []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], header) {
		return nil, fmt.Errorf("%s: not a %s CSV (want the header %s)", path, what, strings.Join(header, ","))
	}
	return recs[1:], nil
}

// readBatchCSV reads a batches.csv.
func readBatchCSV(path string) ([]batchRow, error) {
	recs, err := readHeadedCSV(path, "batches", batchHeader)
	if err != nil {
		return nil, err
	}
	var rows []batchRow
	for n, rec := range recs {
		bad := func(err error) error { return fmt.Errorf("%s, line %d: %w", path, n+2, err) }
		r := batchRow{Model: rec[0]}
		if _, err := models.ParseKind(r.Model); err != nil {
			return nil, bad(err)
		}
		for k, v := range map[int]*int{1: &r.Epoch, 2: &r.Batch, 3: &r.Batches, 6: &r.N, 7: &r.Correct, 9: &r.FwdNFE, 10: &r.BwdNFE} {
			if *v, err = strconv.Atoi(rec[k]); err != nil {
				return nil, bad(err)
			}
		}
		for k, v := range map[int]*float64{5: &r.Loss, 12: &r.Seconds} {
			if *v, err = strconv.ParseFloat(rec[k], 64); err != nil {
				return nil, bad(err)
			}
		}
		if r.Epoch < 1 || r.Batch < 1 || r.Batch > r.Batches || r.N < 1 {
			return nil, bad(fmt.Errorf("epoch %d, batch %d of %d, %d examples", r.Epoch, r.Batch, r.Batches, r.N))
		}
		rows = append(rows, r)
	}
	return rows, nil
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
	fmt.Fprintf(out, "wrote %s: compare.csv, batches.csv, table.md, loss.png, efficacy.png, %s\n", s.out, checkpointSummary(results))
	return nil
}

// replotCompare redraws the plots in s.out from the compare.csv there and
// the batches.csv beside it when there is one (per epoch without it).
func replotCompare(s runSettings, out io.Writer) error {
	path := filepath.Join(s.out, "compare.csv")
	results, err := readCompareCSV(path)
	if err != nil {
		return err
	}
	from := path
	bpath := filepath.Join(s.out, "batches.csv")
	rows, err := readBatchCSV(bpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		from += " and " + bpath
		for i := range results {
			for _, r := range rows {
				if r.Model == results[i].kind.String() {
					results[i].batches = append(results[i].batches, r)
				}
			}
		}
	}
	if err := comparePlots(s, results); err != nil {
		return err
	}
	fmt.Fprintf(out, "redrew %s and %s from %s\n",
		filepath.Join(s.out, "loss.png"), filepath.Join(s.out, "efficacy.png"), from)
	return nil
}

// readCompareCSV reads a compare.csv (train.WriteCSV's columns) into one
// result per model, in the order the models first appear.
func readCompareCSV(path string) ([]compareResult, error) {
	recs, err := readHeadedCSV(path, "compare", train.CSVHeader())
	if err != nil {
		return nil, err
	}
	var results []compareResult
	index := map[string]int{}
	for n, rec := range recs {
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

// compareResult is one model's run, with its memory when it ran here and
// its training batches (batches.csv's rows) when known.
type compareResult struct {
	trainResult
	mem     *memUse
	batches []batchRow
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
	b.WriteString("| model | parameters | final train loss | test accuracy | forward NFE | backward NFE | efficacy | s / epoch | median s / batch | peak RSS (MiB) | peak heap (MiB) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
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
		med := "–"
		if len(r.batches) > 0 {
			med = fmt.Sprintf("%.3f", medianSeconds(r.batches))
		}
		fmt.Fprintf(&b, "| %s | %d | %.4f | %.2f%% | %.1f | %.1f | %.4f | %.1f | %s | %s | %s |\n",
			r.kind.Title(), r.counts.Total, last.Loss, 100*lastTest.Accuracy, last.FwdNFE, last.BwdNFE,
			efficacy(last, lastTest), secs/float64(len(tr)), med, rss, heap)
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
	b.WriteString("- *median s / batch*: the median wall time of a training step over every logged batch (batches.csv): unlike s / epoch, it does not count the minutes a run was paused or interrupted.\n")
	b.WriteString("- *peak RSS*: the process's resident-set high-water mark (VmHWM) while that model trained and was evaluated, reset before each model after returning freed memory to the OS; it includes the datasets and the Go runtime. A resumed model's is the largest of its runs' (memory.csv).")
	if cumulative {
		b.WriteString(" (This kernel would not reset the mark, so it is the process's peak so far: getrusage's ru_maxrss.)")
	}
	b.WriteString("\n- *peak heap*: the largest Go heap (live and not yet collected objects) sampled every 10 ms during that model's run.\n")
	b.WriteString("- Plots (the paper's Figure 2): loss.png, the training loss of every batch (light) and its trailing mean over a quarter of an epoch's batches; efficacy.png, per batch the batch's training accuracy divided by its forward + backward NFE (the test accuracy exists only at an epoch's end), light and as the same trailing mean. The batches' numbers are in batches.csv.\n")
	return b.String()
}

// medianSeconds returns the median of the batches' step times.
func medianSeconds(rows []batchRow) float64 {
	secs := make([]float64, len(rows))
	for i, r := range rows {
		secs[i] = r.Seconds
	}
	slices.Sort(secs)
	n := len(secs)
	if n%2 == 1 {
		return secs[n/2]
	}
	return (secs[n/2-1] + secs[n/2]) / 2
}

func countOrAll(n int) string {
	if n == 0 {
		return "all"
	}
	return fmt.Sprint(n)
}

// comparePlots draws training loss and efficacy, one line per model, into
// loss.png and efficacy.png: per logged batch for the models whose batches
// are known (each batch's value a thin light line, their trailing mean
// over a quarter of an epoch the styled line; efficacy there is the
// batch's training accuracy per NFE, batchRow.efficacy), else per epoch
// (efficacy with the epoch's test accuracy).
func comparePlots(s runSettings, results []compareResult) error {
	var loss, eff []series
	perBatch, perEpoch := false, false
	for _, r := range results {
		ls, es := series{name: r.kind.Title()}, series{name: r.kind.Title()}
		if len(r.batches) > 0 {
			perBatch = true
			for _, b := range r.batches {
				ls.rawXs, ls.rawYs = append(ls.rawXs, b.position()), append(ls.rawYs, b.Loss)
				es.rawXs, es.rawYs = append(es.rawXs, b.position()), append(es.rawYs, b.efficacy())
			}
			w := (r.batches[0].Batches + 3) / 4
			ls.xs, ls.ys = ls.rawXs, trailingMean(ls.rawYs, w)
			es.xs, es.ys = es.rawXs, trailingMean(es.rawYs, w)
		} else {
			perEpoch = true
			tr, te := r.split("train"), r.split("test")
			for i, row := range tr {
				ls.xs, ls.ys = append(ls.xs, float64(row.Epoch)), append(ls.ys, row.Loss)
				if i < len(te) {
					es.xs, es.ys = append(es.xs, float64(row.Epoch)), append(es.ys, efficacy(row, te[i]))
				}
			}
		}
		loss, eff = append(loss, ls), append(eff, es)
	}
	lossY, effY := "cross-entropy (mean over the epoch's batches)", "test accuracy per NFE (fwd + bwd)"
	switch {
	case perBatch && !perEpoch:
		lossY, effY = "cross-entropy per batch (line: trailing mean)", "training accuracy per NFE, per batch"
	case perBatch:
		lossY, effY = "cross-entropy (per batch or per epoch)", "accuracy per NFE (train per batch, test per epoch)"
	}
	for _, fig := range []struct {
		file, title, ylabel string
		ss                  []series
	}{
		{"loss.png", "Training loss on " + s.dataset, lossY, loss},
		{"efficacy.png", "Efficacy on " + s.dataset, effY, eff},
	} {
		p, err := linePlot(fig.title, "epoch", fig.ylabel, false, fig.ss)
		if err != nil {
			return err
		}
		p.X.Tick.Marker = integerTicks{}
		// A little room either side so that the first and last epochs'
		// markers are not cut by the axes.
		p.X.Min, p.X.Max = p.X.Min-0.1, p.X.Max+0.1
		if perBatch {
			p.X.Min = math.Min(p.X.Min, 0)
		}
		if err := savePNG(p, 7, 4, filepath.Join(s.out, fig.file)); err != nil {
			return err
		}
	}
	return nil
}

// trailingMean returns each of ys averaged with the w−1 before it (fewer
// at the start), leaving out the non-finite ones.
func trailingMean(ys []float64, w int) []float64 {
	out := make([]float64, len(ys))
	for i := range ys {
		sum, n := 0.0, 0
		for _, y := range ys[max(0, i-w+1) : i+1] {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				sum, n = sum+y, n+1
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}
