package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Model is a classifier the loop trains: class scores [B, classes] for a
// batch of images, and its parameters (named: the checkpoint saves them by
// name). models.Classifier is one. A model that is layers.Trainable
// (Dropout, BatchNorm) is evaluated in evaluation mode and trained in
// training mode; one that is layers.Buffered has its buffers (BatchNorm's
// running statistics) saved and resumed with the parameters.
type Model[T tensor.Float] interface {
	Forward(tp *autograd.Tape[T], x autograd.Var[T]) (autograd.Var[T], error)
	Params() []*autograd.Param[T]
}

// Counted is implemented by models that report their ODE block's work,
// which the rows' NFE columns show (models.Classifier does).
type Counted interface {
	Stats() odeblock.BlockStats
}

// Config is what Run does besides the model and the data.
type Config struct {
	// Name names the model in the rows, the messages and the files
	// NAME.csv and NAME.safetensors.
	Name string
	// Dir is the directory of the files; "" writes none (nor resumes).
	Dir string
	// Epochs is the number of epochs to have trained when Run returns
	// (counting those a resumed checkpoint holds).
	Epochs int
	// Clip, if positive, clips the gradients' global norm to it before
	// each step.
	Clip float64
	// Resume continues from NAME.safetensors in Dir when it exists.
	Resume bool
	// Meta is saved in every checkpoint: the run's identity (its settings,
	// the command line). CheckResume, if set, is given a checkpoint's
	// metadata before resuming from it, to refuse one made with other
	// settings.
	Meta        map[string]string
	CheckResume func(path string, meta map[string]string) error
	// Log receives the messages (resuming, files removed, one line per
	// epoch unless Quiet); nil discards them. The progress bar is drawn on
	// standard error when it is a terminal, unless Quiet.
	Log   io.Writer
	Quiet bool
	// Backend computes the passes; nil means tensor.Default() (the CPU).
	Backend tensor.Backend
	// Distributed, if set (distributed.Comm), trains data-parallel: every
	// rank runs Run with the same Config and model, its training loader
	// sharded (data.LoaderOptions.Shard); see distributed.go.
	Distributed Distributed
	// Settings, for a distributed run, are the caller's settings that
	// every rank must have alike (its command-line flags, say). Run
	// compares them and its own (this Config's, the loaders' sizes and
	// shuffle, the model's size, the optimizer's hyperparameters) across
	// the ranks before anything else, and fails on every rank with a
	// *SettingsError when they differ (see Agree).
	Settings []Setting
	// OnBatch, if set, is called after every training batch with the
	// epoch (from 0) and the batches done in it.
	OnBatch func(epoch, batches int)
	// OnEpoch, if set, is called after each epoch's files are written,
	// with its training and test rows; returning ErrStop ends the run
	// there (early stopping), another error ends it with that error.
	OnEpoch func(train, test Row) error
}

// ErrStop, returned by Config.OnEpoch, ends a run after the epoch.
var ErrStop = errors.New("train: stop")

// Result is what a run did.
type Result struct {
	Rows                      []Row  // every row so far, two per epoch
	CSVPath, CheckpointPath   string // "" without Config.Dir
	Ran                       bool   // false when a resumed run had nothing left to do
	WroteCSV, WroteCheckpoint bool
	// Distributed runs: the training steps' all-reduces on this rank —
	// how many, their time (waiting for the slowest rank included) and
	// the numbers each carried.
	AllReduces       int
	AllReduceSeconds float64
	AllReduceLen     int
}

// Wrote reports the files the run wrote, and only those.
func (r *Result) Wrote() string {
	switch {
	case r.WroteCSV && r.WroteCheckpoint:
		return fmt.Sprintf("wrote %s and %s", r.CSVPath, r.CheckpointPath)
	case r.WroteCSV:
		return fmt.Sprintf("wrote %s (the rows the checkpoint holds)", r.CSVPath)
	case r.WroteCheckpoint:
		return fmt.Sprintf("wrote %s", r.CheckpointPath)
	}
	return "wrote nothing"
}

// InterruptedError is a run stopped by its context (Ctrl-C) after saving
// a checkpoint of the partial epoch.
type InterruptedError struct {
	Name           string
	Epoch          int // from 0
	Batch, Batches int // done, and in an epoch
	Checkpoint     string
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted: %s stopped after batch %d of %d of epoch %d; checkpoint saved to %s",
		e.Name, e.Batch, e.Batches, e.Epoch+1, e.Checkpoint)
}

// MismatchError is a checkpoint this run cannot continue as configured:
// one of another model, or with more epochs finished than Config.Epochs
// (for a command line, a usage error).
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }

// validate returns an error naming the first setting Run cannot work with.
func (cfg Config) validate(m, opt, tr, te any) error {
	switch {
	case cfg.Epochs < 1:
		return fmt.Errorf("train: Config.Epochs is %d, want at least 1", cfg.Epochs)
	case !(cfg.Clip >= 0) || math.IsInf(cfg.Clip, 0):
		return fmt.Errorf("train: Config.Clip is %g, want a finite number ≥ 0 (0: no clipping)", cfg.Clip)
	case cfg.Name == "" || strings.ContainsAny(cfg.Name, `/\`):
		return fmt.Errorf("train: Config.Name %q must name the model (and its files: no path separators)", cfg.Name)
	case cfg.Resume && cfg.Dir == "":
		return fmt.Errorf("train: Config.Resume needs Config.Dir, where the checkpoint is")
	case isNil(m) || isNil(opt) || isNil(tr) || isNil(te):
		return fmt.Errorf("train: Run needs a model, an optimizer and both loaders")
	}
	return nil
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// checkpointFormat marks the loop's checkpoints.
const checkpointFormat = "adamnode-train-1"

// run is one call of Run.
type run[T tensor.Float] struct {
	ctx     context.Context
	loopCtx context.Context // the loaders' context: ctx, or none when distributed
	// resumeFrom, if set, is the file a rank other than 0 resumes from: a
	// copy of rank 0's checkpoint (shareCheckpoint).
	resumeFrom   string
	noCheckpoint bool // rank 0 has none: nor has this rank
	cfg          Config
	m            Model[T]
	opt          optim.Optimizer[T]
	tr, te       *data.Loader
	res          *Result
	nb           int // training batches per epoch
	tp, evalT    *autograd.Tape[T]
	bar          *progress
}

// Run trains m with opt on tr, evaluating on te after every epoch, as cfg
// says (see the package documentation). A failure leaves the files of the
// last finished epoch as they were and returns an error naming the model,
// the epoch and the batch.
func Run[T tensor.Float](ctx context.Context, cfg Config, m Model[T], opt optim.Optimizer[T], tr, te *data.Loader) (*Result, error) {
	err := cfg.validate(m, opt, tr, te)
	if err == nil {
		err = cfg.checkShards(tr)
	}
	if err != nil && !cfg.distributed() {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	r := &run[T]{ctx: ctx, loopCtx: ctx, cfg: cfg, m: m, opt: opt, tr: tr, te: te, res: &Result{}}
	if err == nil {
		r.nb = tr.NumBatches()
	}
	if r.distributed() {
		// Every rank walks the same batches; a rank's cancellation
		// reaches the others through the step's all-reduce.
		r.loopCtx = context.Background()
		if !r.writer() {
			r.cfg.Quiet = true
		}
	}
	if cfg.Dir != "" {
		r.res.CSVPath = filepath.Join(cfg.Dir, cfg.Name+".csv")
		r.res.CheckpointPath = filepath.Join(cfg.Dir, cfg.Name+".safetensors")
	}
	if r.distributed() {
		// First, before any call whose shape depends on the settings
		// (sharing the checkpoint, the number of epochs).
		// A rank that cannot begin says so here, and every rank stops.
		anyFailed, aerr := agree(cfg.Distributed, runSettings(cfg, m, opt, tr, te), err != nil)
		switch {
		case aerr != nil:
			return r.res, aerr
		case err != nil:
			return r.res, fmt.Errorf("rank %d: %w", cfg.Distributed.Rank(), err)
		case anyFailed:
			return r.res, remote("to begin")
		}
	}
	// A rank that fails to resume still takes part in agreeing to start,
	// so that the others learn of it and stop too.
	var start int
	var p progressSums
	if r.distributed() && cfg.Resume && cfg.Dir != "" {
		// Every rank resumes from rank 0's checkpoint, whether or not
		// the ranks share a file system.
		var cleanup func()
		cleanup, err = r.shareCheckpoint(err)
		defer cleanup()
	}
	if err == nil {
		start, p, err = r.begin()
	}
	if r.distributed() {
		if err = r.agreeStart(start, p, err); err == nil {
			err = r.broadcastParams()
		}
	}
	if err != nil || start >= cfg.Epochs {
		return r.res, err
	}
	r.res.Ran = true
	be := cfg.Backend
	if be == nil {
		be = tensor.Default()
	}
	eng := tensor.EngineFor[T](be)
	r.tp, r.evalT = autograd.NewTape(eng), autograd.NewTape(eng)
	r.evalT.SetNoGrad(true)
	defer r.tp.Release()
	defer r.evalT.Release()
	r.bar = newProgress(r.cfg.Quiet)
	for epoch := start; epoch < cfg.Epochs; epoch++ {
		if epoch > start {
			p = progressSums{}
		}
		stop, err := r.epoch(epoch, p)
		if err != nil || stop {
			return r.res, err
		}
	}
	return r.res, nil
}

// begin removes the temporary files of interrupted saves and, resuming,
// loads the checkpoint: the epoch to run next and its progress.
func (r *run[T]) begin() (start int, p progressSums, err error) {
	cfg, res := r.cfg, r.res
	if cfg.Dir == "" {
		return 0, p, nil
	}
	// A run killed while saving left its temporary files beside the
	// checkpoint and the CSV; this run owns both paths now.
	for _, path := range []string{res.CheckpointPath, res.CSVPath} {
		if !r.writer() {
			break
		}
		removed, err := layers.RemoveTemporaries(path)
		if err != nil {
			return 0, p, fmt.Errorf("train %s: removing temporary files of an interrupted save: %w", cfg.Name, err)
		}
		for _, f := range removed {
			fmt.Fprintf(cfg.Log, "%s: removed %s, left by an interrupted save\n", cfg.Name, f)
		}
	}
	if cfg.Resume {
		st, found, err := r.load()
		if err != nil {
			return 0, p, err
		}
		if found {
			start, res.Rows, p = st.epoch, st.rows, st.progress
			fmt.Fprintf(cfg.Log, "%s: resuming from %s after %d epochs and %d batches\n", cfg.Name, res.CheckpointPath, start, p.Batches)
			// The checkpoint is the record of the run; the CSV is
			// derived from it and may lag behind it after a kill, so
			// it is rewritten from the checkpoint's rows first.
			if r.writer() {
				if err := WriteCSV(res.CSVPath, res.Rows); err != nil {
					return 0, p, fmt.Errorf("train %s: rewriting the CSV from %s: %w", cfg.Name, res.CheckpointPath, err)
				}
				res.WroteCSV = true
			}
		} else {
			fmt.Fprintf(cfg.Log, "%s: no checkpoint %s, starting from scratch\n", cfg.Name, res.CheckpointPath)
		}
	}
	if start >= cfg.Epochs {
		fmt.Fprintf(cfg.Log, "%s: already trained for %d epochs (Epochs %d): nothing to do\n", cfg.Name, start, cfg.Epochs)
	}
	return start, p, nil
}

// save writes the checkpoint after epoch epochs and the batches of p.
func (r *run[T]) save(epoch int, p progressSums) error {
	if r.cfg.Dir == "" || !r.writer() {
		return nil
	}
	rows, err := json.Marshal(r.res.Rows)
	if err != nil {
		return err
	}
	pj, err := json.Marshal(p)
	if err != nil {
		return err
	}
	meta := map[string]string{}
	for k, v := range r.cfg.Meta {
		meta[k] = v
	}
	meta["format"] = checkpointFormat
	meta["model"] = r.cfg.Name
	meta["epoch"] = strconv.Itoa(epoch)
	meta["batch"] = strconv.Itoa(p.Batches)
	meta["progress"] = string(pj)
	meta["rows"] = string(rows)
	meta["parameters"] = strconv.Itoa(numel(r.m.Params()))
	return layers.SaveCheckpoint(r.res.CheckpointPath, r.state(), r.opt, meta)
}

// interrupted saves the partial epoch and returns the error saying so.
func (r *run[T]) interrupted(epoch int, p progressSums) error {
	if err := r.save(epoch, p); err != nil {
		return fmt.Errorf("train %s: interrupted, and saving the checkpoint failed: %w", r.cfg.Name, err)
	}
	return &InterruptedError{Name: r.cfg.Name, Epoch: epoch, Batch: p.Batches, Batches: r.nb, Checkpoint: r.res.CheckpointPath}
}

// state is what the checkpoint holds of the model: its parameters, then
// its buffers (layers.Buffered: BatchNorm's running statistics).
func (r *run[T]) state() []*autograd.Param[T] {
	return append(slices.Clone(r.m.Params()), layers.Buffers[T](r.m)...)
}

// setTraining puts the model in training or evaluation mode if it has
// modes (layers.Trainable: Dropout, BatchNorm).
func (r *run[T]) setTraining(training bool) {
	if tm, ok := r.m.(layers.Trainable); ok {
		tm.SetTraining(training)
	}
}

func numel[T tensor.Float](ps []*autograd.Param[T]) int {
	n := 0
	for _, p := range ps {
		n += p.Value.Len()
	}
	return n
}

// epoch trains epoch epoch from the progress p, evaluates, writes the
// files and reports whether OnEpoch stopped the run.
func (r *run[T]) epoch(epoch int, p progressSums) (stop bool, err error) {
	cfg, res := r.cfg, r.res
	if p, err = r.trainBatches(epoch, p); err != nil {
		return false, err
	}
	if p.Batches == 0 {
		return false, fmt.Errorf("train %s: no training batches", cfg.Name)
	}
	rank, size := 0, 1
	if r.distributed() {
		rank, size = r.cfg.Distributed.Rank(), r.cfg.Distributed.Size()
	}
	t0 := time.Now()
	r.setTraining(false)
	sums, err := evaluate(r.loopCtx, r.evalT, r.m, r.te, rank, size)
	r.setTraining(true)
	if r.distributed() {
		sums, err = r.reduceEvaluation(sums, err)
	}
	var ev Row
	if err == nil {
		ev, err = sums.row(time.Since(t0).Seconds())
	}
	if err != nil {
		if r.ctx.Err() != nil && !r.distributed() {
			return false, r.interrupted(epoch, p)
		}
		return false, fmt.Errorf("train %s: epoch %d, evaluation: %w", cfg.Name, epoch+1, err)
	}
	elapsed := 0.0
	if n := len(res.Rows); n > 0 {
		elapsed = res.Rows[n-1].Elapsed
	}
	trainRow := p.row(cfg.Name, epoch+1, elapsed)
	ev.Model, ev.Epoch, ev.Elapsed = cfg.Name, epoch+1, trainRow.Elapsed+ev.Seconds
	res.Rows = append(res.Rows, trainRow, ev)
	// The checkpoint holds every row so far and is saved before the CSV,
	// each through a temporary file renamed into place: a kill before the
	// checkpoint's rename leaves the previous epoch's files (a resumed run
	// trains this epoch again, bit for bit); a kill between the renames
	// leaves a CSV one epoch behind, which a resumed run rewrites first.
	// So the CSV never holds a row the checkpoint lacks.
	err = r.writeFiles(epoch)
	if r.distributed() {
		return r.endEpoch(epoch, trainRow, ev, err)
	}
	if err != nil {
		return false, err
	}
	return r.onEpoch(trainRow, ev)
}

// onEpoch reports the epoch's rows and calls Config.OnEpoch.
func (r *run[T]) onEpoch(trainRow, ev Row) (stop bool, err error) {
	cfg := r.cfg
	if !cfg.Quiet {
		fmt.Fprintf(cfg.Log, "%s epoch %d/%d: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% | NFE fwd %.1f bwd %.1f (test %.1f) | %.1f s\n",
			cfg.Name, trainRow.Epoch, cfg.Epochs, trainRow.Loss, 100*trainRow.Accuracy, ev.Loss, 100*ev.Accuracy,
			trainRow.FwdNFE, trainRow.BwdNFE, ev.FwdNFE, trainRow.Seconds+ev.Seconds)
	}
	if cfg.OnEpoch != nil {
		if err := cfg.OnEpoch(trainRow, ev); errors.Is(err, ErrStop) {
			return true, nil
		} else if err != nil {
			return false, err
		}
	}
	return false, nil
}

// writeFiles saves the checkpoint after epoch epoch+1 and then the CSV
// (each through a temporary file renamed into place; rank 0 only).
func (r *run[T]) writeFiles(epoch int) error {
	cfg, res := r.cfg, r.res
	if cfg.Dir == "" || !r.writer() {
		return nil
	}
	if err := r.save(epoch+1, progressSums{}); err != nil {
		return fmt.Errorf("train %s: epoch %d: saving the checkpoint: %w", cfg.Name, epoch+1, err)
	}
	res.WroteCheckpoint = true
	if err := WriteCSV(res.CSVPath, res.Rows); err != nil {
		return fmt.Errorf("train %s: epoch %d: %w", cfg.Name, epoch+1, err)
	}
	res.WroteCSV = true
	return nil
}

// trainBatches runs the training batches of epoch after the p.Batches
// done, adding them to p; a cancelled context saves and interrupts.
func (r *run[T]) trainBatches(epoch int, p progressSums) (progressSums, error) {
	cfg := r.cfg
	if p.Batches >= r.nb {
		return p, nil
	}
	r.bar.start(r.nb, p.Batches)
	defer r.bar.finish()
	i := 0
	for b, err := range r.tr.Epoch(r.loopCtx, epoch) {
		if err != nil {
			return p, r.interrupted(epoch, p)
		}
		if i++; i <= p.Batches {
			continue // done before the checkpoint this run resumed from
		}
		t0 := time.Now()
		st, stop, err := r.step(b)
		if err != nil {
			return p, fmt.Errorf("train %s: epoch %d, batch %d of %d: %w", cfg.Name, epoch+1, i, r.nb, err)
		}
		p.Batches++
		p.LossSum += st.loss
		p.Correct += st.correct
		p.Seen += st.seen
		p.FwdNFE += st.fwd
		p.BwdNFE += st.bwd
		p.Seconds += time.Since(t0).Seconds()
		r.bar.set(p.Batches, fmt.Sprintf("%s %d/%d loss %.4f acc %5.1f%% NFE %.0f+%.0f", cfg.Name, epoch+1, cfg.Epochs,
			p.LossSum/float64(p.Seen), 100*float64(p.Correct)/float64(p.Seen),
			float64(p.FwdNFE)/float64(p.Batches), float64(p.BwdNFE)/float64(p.Batches)))
		if cfg.OnBatch != nil {
			cfg.OnBatch(epoch, p.Batches)
		}
		if stop && p.Batches < r.nb {
			return p, r.interrupted(epoch, p)
		}
	}
	return p, nil
}

// stepStats are the numbers of one training iteration.
type stepStats struct {
	loss     float64 // batch-mean loss (a step's result: its sum over the images)
	correct  int
	seen     int
	fwd, bwd int
}

// step runs one training iteration on batch b and returns its numbers
// (summed over the ranks when distributed) and whether the run is to stop
// after it (its context, or any rank's, is done).
func (r *run[T]) step(b *data.Batch) (stepStats, bool, error) {
	if r.cfg.Distributed == nil || r.cfg.Distributed.Size() <= 1 {
		st, err := step(r.tp, r.m, r.opt, b, r.cfg.Clip)
		st.loss *= float64(b.Len())
		st.seen = b.Len()
		return st, r.ctx.Err() != nil, err
	}
	return r.distributedStep(b)
}

// step runs one training iteration on batch b: forward, cross-entropy,
// backward, gradient clipping, an optimizer step.
func step[T tensor.Float](tp *autograd.Tape[T], m Model[T], opt optim.Optimizer[T], b *data.Batch, clip float64) (stepStats, error) {
	st, err := gradients(tp, m, opt, b)
	if err != nil {
		return st, err
	}
	return st, update(m, opt, clip, st)
}

// gradients records the forward pass on batch b and its backward pass
// into the parameters' Grad; on error the gradients are zero.
func gradients[T tensor.Float](tp *autograd.Tape[T], m Model[T], opt optim.Optimizer[T], b *data.Batch) (stepStats, error) {
	tp.Reset()
	opt.ZeroGrad()
	logits, err := m.Forward(tp, tp.Const(castImages[T](tp, b.X)))
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
	if c, ok := m.(Counted); ok {
		ns := c.Stats()
		st.fwd, st.bwd = ns.Forward.NFE, ns.Backward.NFE
	}
	return st, nil
}

// update clips the gradients and takes the optimizer's step.
func update[T tensor.Float](m Model[T], opt optim.Optimizer[T], clip float64, st stepStats) error {
	if clip > 0 {
		if _, err := optim.ClipGradNorm(m.Params(), clip); err != nil {
			opt.ZeroGrad()
			return err
		}
	}
	opt.Step()
	opt.ZeroGrad()
	return nil
}

// castImages returns the batch's float32 images as T: themselves for
// float32, a copy in a tape buffer for float64.
func castImages[T tensor.Float](tp *autograd.Tape[T], x *tensor.Tensor[float32]) *tensor.Tensor[T] {
	if y, ok := any(x).(*tensor.Tensor[T]); ok {
		return y
	}
	y := tp.Scratch(x.Shape()...)
	yd := y.Data()
	for i, v := range x.Data() {
		yd[i] = T(v)
	}
	return y
}

// countCorrect counts the rows of logits whose largest entry is at the label.
func countCorrect[T tensor.Float](logits *tensor.Tensor[T], labels []int) int {
	n := 0
	for i, k := range tensor.ArgMax(logits, 1) {
		if k == labels[i] {
			n++
		}
	}
	return n
}

// evalSums are the sums of an evaluation over its batches.
type evalSums struct {
	loss                   float64 // summed over the images
	correct, seen, nfe, nb int
}

// row is the test row of the sums.
func (e evalSums) row(seconds float64) (Row, error) {
	if e.seen == 0 {
		return Row{}, errors.New("no test images")
	}
	return Row{Split: "test", Loss: e.loss / float64(e.seen), Accuracy: float64(e.correct) / float64(e.seen),
		FwdNFE: float64(e.nfe) / float64(e.nb), Seconds: seconds}, nil
}

// evaluate runs m without gradients over the test loader's batches i ≡
// rank (mod size) — all of them for one process — and returns their sums.
func evaluate[T tensor.Float](ctx context.Context, tp *autograd.Tape[T], m Model[T], te *data.Loader, rank, size int) (evalSums, error) {
	var e evalSums
	i := 0
	for b, err := range te.Epoch(ctx, 0) {
		if err != nil {
			return e, err
		}
		if i++; (i-1)%size != rank {
			continue
		}
		tp.Reset()
		logits, err := m.Forward(tp, tp.Const(castImages[T](tp, b.X)))
		if err != nil {
			return e, fmt.Errorf("batch %d: %w", i, err)
		}
		e.loss += float64(layers.SoftmaxCrossEntropy(logits, b.Labels).Item()) * float64(b.Len())
		e.correct += countCorrect(logits.Value(), b.Labels)
		e.seen += b.Len()
		if c, ok := m.(Counted); ok {
			e.nfe += c.Stats().Forward.NFE
		}
		e.nb++
	}
	return e, nil
}
