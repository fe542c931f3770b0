package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

func runTrain(ctx context.Context, args []string, out io.Writer) error {
	s, kind, err := parseTrain(args, out)
	if err != nil {
		return err
	}
	return train(ctx, s, kind, out, "adamnode train "+strings.Join(args, " "))
}

// parseTrain reads train's command line.
func parseTrain(args []string, out io.Writer) (runSettings, models.Kind, error) {
	fs := newFlags("train")
	var f trainFlags
	model := fs.String("model", "adamnode", "model: node, anode, sonode, hbnode, ghbnode or adamnode")
	addTrainFlags(fs, &f, "out/train")
	if err := parseFlags(fs, args, out); err != nil {
		return runSettings{}, 0, err
	}
	kind, err := models.ParseKind(*model)
	if err != nil {
		return runSettings{}, 0, usagef("train: unknown --model %q (use node, anode, sonode, hbnode, ghbnode or adamnode)", *model)
	}
	s, err := f.resolve("train")
	return s, kind, err
}

// train loads the data and trains one model.
func train(ctx context.Context, s runSettings, kind models.Kind, out io.Writer, command string) error {
	tr, te, err := prepare(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s on %s: %d training images in batches of %d, %d test images; %s\n",
		kind.Title(), s.dataset, tr.Len(), s.batch, te.Len(), s.describe())
	r, err := trainModel(ctx, s, kind, tr, te, out, command)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, r.wrote())
	return nil
}

// describe summarises the training settings in one line.
func (s runSettings) describe() string {
	clip := "no clipping"
	if s.clip > 0 {
		clip = fmt.Sprintf("gradient norm clipped at %g", s.clip)
	}
	epochs := "epochs"
	if s.epochs == 1 {
		epochs = "epoch"
	}
	return fmt.Sprintf("%s at tolerance %g, %s gradients; Adam lr %g, %s; seed %d; %d %s",
		s.method, s.tol, s.mode, s.lr, clip, s.seed, s.epochs, epochs)
}

// csvHeader is the first line of every CSV the trainer writes.
func csvHeader() []string {
	return []string{"model", "split", "epoch", "loss", "accuracy", "forward_nfe", "backward_nfe", "seconds", "elapsed"}
}

// epochRow is one line of the CSV: one model, one epoch, one split. NFEs
// are means per batch: forward and backward evaluations of the ODE block
// in one training iteration (train), or in one evaluation batch (test,
// where the backward NFE is 0). Seconds is the wall time of that split of
// the epoch; Elapsed the sum of Seconds of the run so far.
type epochRow struct {
	Model    string  `json:"model"`
	Split    string  `json:"split"`
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	Accuracy float64 `json:"accuracy"`
	FwdNFE   float64 `json:"forward_nfe"`
	BwdNFE   float64 `json:"backward_nfe"`
	Seconds  float64 `json:"seconds"`
	Elapsed  float64 `json:"elapsed"`
}

func (r epochRow) record() []string {
	g := func(v float64, prec int) string { return strconv.FormatFloat(v, 'g', prec, 64) }
	return []string{r.Model, r.Split, strconv.Itoa(r.Epoch), g(r.Loss, 8), g(r.Accuracy, 8),
		g(r.FwdNFE, 8), g(r.BwdNFE, 8), strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.FormatFloat(r.Elapsed, 'f', 3, 64)}
}

// writeCSV writes the rows under the header to path atomically.
func writeCSV(path string, rows []epochRow) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(csvHeader())
	for _, r := range rows {
		w.Write(r.record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return saveText(path, b.String())
}

// epochProgress is the state of a partly trained epoch, saved with an
// interrupted run's checkpoint so that a resumed epoch ends with the same
// numbers as an uninterrupted one.
type epochProgress struct {
	Batches int     `json:"batches"`  // training batches done
	LossSum float64 `json:"loss_sum"` // Σ batch-mean loss × batch size
	Correct int     `json:"correct"`  // correct predictions
	Seen    int     `json:"seen"`     // images trained on
	FwdNFE  int     `json:"fwd_nfe"`  // Σ forward NFE over the batches
	BwdNFE  int     `json:"bwd_nfe"`  // Σ backward NFE over the batches
	Seconds float64 `json:"seconds"`  // wall time spent on them
}

// interruptedError is a run stopped by Ctrl-C after saving a checkpoint.
type interruptedError struct {
	model              string
	epoch, batch, nb   int
	checkpoint, resume string
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted: %s stopped after batch %d of %d of epoch %d; checkpoint saved to %s; to continue, run the same command with --resume",
		e.model, e.batch, e.nb, e.epoch+1, e.checkpoint)
}

// trainResult is what a finished training run reports to compare.
type trainResult struct {
	kind              models.Kind
	counts            models.ParamCounts
	rows              []epochRow
	csvPath, ckptPath string
	ran               bool // false when a resumed run had nothing left to do
	// wroteCSV and wroteCkpt say which of the two files this run wrote.
	wroteCSV, wroteCkpt bool
}

// wrote reports the files the run wrote, and only those.
func (r *trainResult) wrote() string {
	switch {
	case r.wroteCSV && r.wroteCkpt:
		return fmt.Sprintf("wrote %s and %s", r.csvPath, r.ckptPath)
	case r.wroteCSV:
		return fmt.Sprintf("wrote %s (the rows the checkpoint holds)", r.csvPath)
	case r.wroteCkpt:
		return fmt.Sprintf("wrote %s", r.ckptPath)
	}
	return "wrote nothing"
}

// checkpointFormat marks the trainer's checkpoints.
const checkpointFormat = "adamnode-train-1"

// trainModel trains model kind under s, writing its CSV and checkpoint into
// s.out after every epoch (and the checkpoint on Ctrl-C). A failure leaves
// the files of the last finished epoch as they were and returns an error
// naming the model, the epoch and the batch.
func trainModel(ctx context.Context, s runSettings, kind models.Kind, tr, te *data.Loader, out io.Writer, command string) (*trainResult, error) {
	cfg := s.modelConfig(kind)
	m, err := models.New[float32](rand.New(rand.NewPCG(s.seed, 0)), cfg)
	if err != nil {
		return nil, usagef("train %v: %v", kind, err)
	}
	params := m.Params()
	opt := optim.NewAdam(params, optim.AdamConfig{LR: s.lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	res := &trainResult{
		kind: kind, counts: m.Counts(),
		csvPath:  filepath.Join(s.out, kind.String()+".csv"),
		ckptPath: filepath.Join(s.out, kind.String()+".safetensors"),
	}
	name := kind.String()
	var (
		start    int           // the epoch to run next
		progress epochProgress // of epoch start
	)
	nb := tr.NumBatches()
	// A run killed while saving left its temporary files beside the
	// checkpoint and the CSV; this run owns both paths now.
	for _, path := range []string{res.ckptPath, res.csvPath} {
		removed, err := layers.RemoveTemporaries(path)
		if err != nil {
			return nil, fmt.Errorf("train %s: removing temporary files of an interrupted save: %w", name, err)
		}
		for _, r := range removed {
			fmt.Fprintf(out, "%s: removed %s, left by an interrupted save\n", name, r)
		}
	}
	if s.resume {
		state, found, err := loadTrainCheckpoint(s, kind, res.ckptPath, m, nb, opt)
		if err != nil {
			return nil, err
		}
		if found {
			start, res.rows, progress = state.epoch, state.rows, state.progress
			fmt.Fprintf(out, "%s: resuming from %s after %d epochs and %d batches\n", name, res.ckptPath, start, progress.Batches)
			// The checkpoint is the record of the run; the CSV is
			// derived from it (see save below) and may lag behind it
			// after a kill, so it is rewritten from the checkpoint's
			// rows before anything else happens.
			if err := writeCSV(res.csvPath, res.rows); err != nil {
				return nil, fmt.Errorf("train %s: rewriting the CSV from %s: %w", name, res.ckptPath, err)
			}
			res.wroteCSV = true
		} else {
			fmt.Fprintf(out, "%s: no checkpoint %s, starting from scratch\n", name, res.ckptPath)
		}
	}
	if start >= s.epochs {
		fmt.Fprintf(out, "%s: already trained for %d epochs (--epochs %d): nothing to do\n", name, start, s.epochs)
		return res, nil
	}
	res.ran = true

	save := func(epoch int, p epochProgress) error {
		rows, err := json.Marshal(res.rows)
		if err != nil {
			return err
		}
		pj, err := json.Marshal(p)
		if err != nil {
			return err
		}
		meta := map[string]string{}
		for _, st := range s.identity() {
			meta[st.key] = st.value
		}
		meta["format"] = checkpointFormat
		meta["model"] = name
		meta["epoch"] = strconv.Itoa(epoch)
		meta["batch"] = strconv.Itoa(p.Batches)
		meta["progress"] = string(pj)
		meta["rows"] = string(rows)
		meta["command"] = command
		meta["parameters"] = strconv.Itoa(m.NumParams())
		return layers.SaveCheckpoint(res.ckptPath, params, opt, meta)
	}

	eng := tensor.EngineFor[float32](tensor.Default())
	tp := autograd.NewTape(eng)
	defer tp.Release()
	evalTape := autograd.NewTape(eng)
	evalTape.SetNoGrad(true)
	defer evalTape.Release()
	bar := newProgress(s.quiet)

	for epoch := start; epoch < s.epochs; epoch++ {
		p := epochProgress{}
		if epoch == start {
			p = progress
		}
		stop := func() error {
			if err := save(epoch, p); err != nil {
				return fmt.Errorf("train %s: interrupted, and saving the checkpoint failed: %w", name, err)
			}
			return &interruptedError{model: name, epoch: epoch, batch: p.Batches, nb: nb, checkpoint: res.ckptPath}
		}
		if p.Batches < nb {
			bar.start(nb, p.Batches)
			i := 0
			for b, err := range tr.Epoch(ctx, epoch) {
				if err != nil {
					bar.finish()
					return nil, stop()
				}
				if i++; i <= p.Batches {
					continue // done before the checkpoint this run resumed from
				}
				t0 := time.Now()
				st, err := trainStep(tp, m, opt, b, s.clip)
				if err != nil {
					bar.finish()
					return nil, fmt.Errorf("train %s: epoch %d, batch %d of %d: %w", name, epoch+1, i, nb, err)
				}
				p.Batches++
				p.LossSum += st.loss * float64(b.Len())
				p.Correct += st.correct
				p.Seen += b.Len()
				p.FwdNFE += st.fwd
				p.BwdNFE += st.bwd
				p.Seconds += time.Since(t0).Seconds()
				bar.set(p.Batches, fmt.Sprintf("%s %d/%d loss %.4f acc %5.1f%% NFE %.0f+%.0f", name, epoch+1, s.epochs,
					p.LossSum/float64(p.Seen), 100*float64(p.Correct)/float64(p.Seen),
					float64(p.FwdNFE)/float64(p.Batches), float64(p.BwdNFE)/float64(p.Batches)))
				if s.onBatch != nil {
					s.onBatch(epoch, p.Batches)
				}
				if ctx.Err() != nil && p.Batches < nb {
					bar.finish()
					return nil, stop()
				}
			}
			bar.finish()
		}
		if p.Batches == 0 {
			return nil, fmt.Errorf("train %s: no training batches (check --subset and --batch)", name)
		}
		ev, err := evaluate(ctx, evalTape, m, te)
		if err != nil {
			if ctx.Err() != nil {
				return nil, stop()
			}
			return nil, fmt.Errorf("train %s: epoch %d, evaluation: %w", name, epoch+1, err)
		}
		elapsed := 0.0
		if n := len(res.rows); n > 0 {
			elapsed = res.rows[n-1].Elapsed
		}
		trainRow := epochRow{Model: name, Split: "train", Epoch: epoch + 1,
			Loss: p.LossSum / float64(p.Seen), Accuracy: float64(p.Correct) / float64(p.Seen),
			FwdNFE: float64(p.FwdNFE) / float64(p.Batches), BwdNFE: float64(p.BwdNFE) / float64(p.Batches),
			Seconds: p.Seconds, Elapsed: elapsed + p.Seconds}
		ev.Model, ev.Epoch, ev.Elapsed = name, epoch+1, trainRow.Elapsed+ev.Seconds
		res.rows = append(res.rows, trainRow, ev)
		// The checkpoint holds every row so far (metadata "rows"), and
		// is saved before the CSV, each file through a temporary file
		// renamed into place. A kill before the checkpoint's rename
		// leaves the previous epoch's files, and --resume runs this
		// epoch again (bit for bit); a kill between the two renames
		// leaves a CSV one epoch behind, and --resume rewrites it from
		// the checkpoint before it does anything else, also when no
		// epoch is left to train. So the CSV never holds a row the
		// checkpoint lacks, and no kill point loses a row.
		if err := save(epoch+1, epochProgress{}); err != nil {
			return nil, fmt.Errorf("train %s: epoch %d: saving the checkpoint: %w", name, epoch+1, err)
		}
		res.wroteCkpt = true
		if err := writeCSV(res.csvPath, res.rows); err != nil {
			return nil, fmt.Errorf("train %s: epoch %d: %w", name, epoch+1, err)
		}
		res.wroteCSV = true
		if !s.quiet {
			fmt.Fprintf(out, "%s epoch %d/%d: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% | NFE fwd %.1f bwd %.1f (test %.1f) | %.1f s\n",
				name, epoch+1, s.epochs, trainRow.Loss, 100*trainRow.Accuracy, ev.Loss, 100*ev.Accuracy,
				trainRow.FwdNFE, trainRow.BwdNFE, ev.FwdNFE, trainRow.Seconds+ev.Seconds)
		}
	}
	return res, nil
}

// stepStats are the numbers of one training iteration.
type stepStats struct {
	loss     float64
	correct  int
	fwd, bwd int
}

// trainStep runs one training iteration on batch b: forward, cross-entropy,
// backward, gradient clipping, an Adam step.
func trainStep(tp *autograd.Tape[float32], m models.Model[float32], opt *optim.Adam[float32], b *data.Batch, clip float64) (stepStats, error) {
	tp.Reset()
	logits, err := m.Forward(tp, tp.Const(b.X))
	if err != nil {
		return stepStats{}, err
	}
	loss := layers.SoftmaxCrossEntropy(logits, b.Labels)
	st := stepStats{loss: float64(loss.Item()), correct: countCorrect(logits.Value(), b.Labels)}
	if math.IsNaN(st.loss) || math.IsInf(st.loss, 0) {
		return st, fmt.Errorf("the loss is %v", st.loss)
	}
	if err := tp.Backward(loss); err != nil {
		opt.ZeroGrad()
		return st, err
	}
	if clip > 0 {
		if _, err := optim.ClipGradNorm(m.Params(), clip); err != nil {
			opt.ZeroGrad()
			return st, err
		}
	}
	opt.Step()
	opt.ZeroGrad()
	ns := m.Stats()
	st.fwd, st.bwd = ns.Forward.NFE, ns.Backward.NFE
	return st, nil
}

// countCorrect counts the rows of logits whose largest entry is at the label.
func countCorrect(logits *tensor.Tensor[float32], labels []int) int {
	n := 0
	for i, k := range tensor.ArgMax(logits, 1) {
		if k == labels[i] {
			n++
		}
	}
	return n
}

// evaluate runs m over the test loader without gradients and returns its
// row (loss, accuracy, mean forward NFE per batch, seconds).
func evaluate(ctx context.Context, tp *autograd.Tape[float32], m models.Model[float32], te *data.Loader) (epochRow, error) {
	t0 := time.Now()
	var lossSum float64
	var correct, seen, nfe, batches int
	for b, err := range te.Epoch(ctx, 0) {
		if err != nil {
			return epochRow{}, err
		}
		tp.Reset()
		logits, err := m.Forward(tp, tp.Const(b.X))
		if err != nil {
			return epochRow{}, fmt.Errorf("batch %d: %w", batches+1, err)
		}
		lossSum += float64(layers.SoftmaxCrossEntropy(logits, b.Labels).Item()) * float64(b.Len())
		correct += countCorrect(logits.Value(), b.Labels)
		seen += b.Len()
		nfe += m.Stats().Forward.NFE
		batches++
	}
	if seen == 0 {
		return epochRow{}, errors.New("no test images (check --test-subset)")
	}
	return epochRow{Split: "test", Loss: lossSum / float64(seen), Accuracy: float64(correct) / float64(seen),
		FwdNFE: float64(nfe) / float64(batches), Seconds: time.Since(t0).Seconds()}, nil
}

// prepare loads the datasets of s, makes their loaders and the output
// directory: what train and compare do first.
func prepare(s runSettings) (tr, te *data.Loader, err error) {
	trainSet, testSet, err := loadDatasets(s)
	if err != nil {
		return nil, nil, err
	}
	if tr, te, err = newLoaders(s, trainSet, testSet); err != nil {
		return nil, nil, err
	}
	return tr, te, os.MkdirAll(s.out, 0o755)
}
