package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/layers"
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
// which the rows' NFE columns show: NFE returns the evaluations of the
// dynamics in the last forward and backward passes. odeblock.Block,
// odeblock.BlockStats and models.Classifier are Counted.
type Counted interface {
	NFE() (forward, backward int)
}

// Config is what Run does besides the model and the data.
type Config struct {
	// Name names the model in the rows, the messages and the files
	// NAME.csv and NAME.safetensors.
	Name string
	// Dir is the directory of the files; "" writes none (nor resumes).
	// Fit makes it when it is missing and, before the first batch, checks
	// that a file can be made in it.
	Dir string
	// Epochs is the number of epochs to have trained when Run returns
	// (counting those a resumed checkpoint holds).
	Epochs int
	// Clip, if positive, clips the gradients' global norm to it before
	// each step.
	Clip float64
	// SkipNonFinite skips, instead of failing on, a step whose gradients
	// are not finite (a NaN or ±Inf in some parameter's gradient, with a
	// finite loss): the batch counts in the epoch's sums, but the
	// optimizer does not step and its gradients are zeroed. Each skip is
	// logged, reported to OnStep (Step.Skipped) and counted in
	// Result.Skipped. Without it such a step ends the run with a
	// *NonFiniteError, before anything is stepped or written.
	SkipNonFinite bool
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
	// An optimizer with UseEngine (optim's SGD, Adam, AdamW, RMSprop) is given its
	// engine, so that on a GPU backend its updates run on the device.
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
	// OnStep, if set, is called after every training batch too, with the
	// epoch (from 0), the batches done in it and that batch's numbers (in
	// a distributed run the global batch's): a loss curve per batch.
	OnStep func(epoch, batches int, s Step)
	// OnEpoch, if set, is called after each epoch's files are written,
	// with its training and test rows; returning ErrStop ends the run
	// there (early stopping), another error ends it with that error.
	OnEpoch func(train, test Row) error
}

// ErrStop, returned by Config.OnEpoch, ends a run after the epoch.
var ErrStop = errors.New("train: stop")

// Result is what a run did.
type Result struct {
	Rows                      []Row  // every row so far: per epoch, training then (an Evaluator's) test
	CSVPath, CheckpointPath   string // "" without Config.Dir
	Ran                       bool   // false when a resumed run had nothing left to do
	WroteCSV, WroteCheckpoint bool
	// Distributed runs: the training steps' all-reduces on this rank —
	// how many, their time (waiting for the slowest rank included) and
	// the numbers each carried.
	AllReduces       int
	AllReduceSeconds float64
	AllReduceLen     int
	// Skipped counts the steps this call skipped for gradients that were
	// not finite (Config.SkipNonFinite); a resumed run counts its own.
	Skipped int
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

// NonFiniteError is a training step refused because the gradients are not
// finite (the loss was): the first parameter whose gradient has a NaN or
// an infinite element, which element and its value. Nothing was stepped:
// the parameters and the optimizer's state are those before the batch,
// and no file was written. The run's error wraps it with the model, the
// epoch and the batch; it wraps optim.ErrNonFinite.
type NonFiniteError struct {
	// Param names the parameter; "" when every element is finite and
	// only their global norm overflows (Norm is +Inf).
	Param string
	Index int     // the element, row-major, in Param's gradient
	Value float64 // the element: NaN, +Inf or −Inf
	Norm  float64 // the gradients' global norm (NaN or +Inf)
}

func (e *NonFiniteError) Error() string {
	if e.Param == "" {
		return fmt.Sprintf("the gradients' global norm is %v, though every element is finite: no step taken", e.Norm)
	}
	return fmt.Sprintf("the gradient of parameter %q is not finite (element %d is %v; global norm %v): no step taken", e.Param, e.Index, e.Value, e.Norm)
}

// Unwrap returns optim.ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return optim.ErrNonFinite }

// MismatchError is a checkpoint this run cannot continue as configured:
// one of another model, or with more epochs finished than Config.Epochs
// (for a command line, a usage error).
//
// For a checkpoint whose parameters (and buffers) are not the model's,
// Param names the first that differs and CheckpointShape and ModelShape
// are its shapes (nil on the side that lacks it); CheckpointParams and
// ModelParams are the numbers of tensors each has. They are zero for the
// other mismatches.
type MismatchError struct {
	Msg string

	Param                         string
	CheckpointShape, ModelShape   []int
	CheckpointParams, ModelParams int
}

func (e *MismatchError) Error() string { return e.Msg }

// validate returns an error naming the first setting Fit cannot work with.
func (cfg Config) validate(task, opt any) error {
	switch {
	case cfg.Epochs < 1:
		return fmt.Errorf("train: Config.Epochs is %d, want at least 1", cfg.Epochs)
	case !(cfg.Clip >= 0) || math.IsInf(cfg.Clip, 0):
		return fmt.Errorf("train: Config.Clip is %g, want a finite number ≥ 0 (0: no clipping)", cfg.Clip)
	case cfg.Name == "" || strings.ContainsAny(cfg.Name, `/\`):
		return fmt.Errorf("train: Config.Name %q must name the model (and its files: no path separators)", cfg.Name)
	case cfg.Resume && cfg.Dir == "":
		return fmt.Errorf("train: Config.Resume needs Config.Dir, where the checkpoint is")
	}
	if v, ok := task.(interface{ validate(opt any) error }); ok {
		return v.validate(opt)
	}
	if isNil(task) || isNil(opt) {
		return fmt.Errorf("train: Fit needs a task and an optimizer")
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

// run is one call of Fit.
type run[T tensor.Float, B any] struct {
	ctx     context.Context
	loopCtx context.Context // the loaders' context: ctx, or none when distributed
	// resumeFrom, if set, is the file a rank other than 0 resumes from: a
	// copy of rank 0's checkpoint (shareCheckpoint).
	resumeFrom   string
	noCheckpoint bool // rank 0 has none: nor has this rank
	cfg          Config
	task         Task[T, B]
	opt          optim.Optimizer[T]
	res          *Result
	nb           int // training batches per epoch
	tp, evalT    *autograd.Tape[T]
	bar          *progress
	showAccuracy bool // the task reports accuracies
}

// Run trains the classifier m with opt on tr, evaluating on te after every
// epoch, as cfg says (see the package documentation): Fit of the task whose
// loss is the softmax cross-entropy of m's class scores on tr's batches.
func Run[T tensor.Float](ctx context.Context, cfg Config, m Model[T], opt optim.Optimizer[T], tr, te *data.Loader) (*Result, error) {
	return Fit[T, *data.Batch](ctx, cfg, classifier[T]{m: m, tr: tr, te: te}, opt)
}

// Fit trains task with opt as cfg says (see the package documentation):
// epochs of steps, each the gradient of the task's loss on one batch, then
// its evaluation if it is an Evaluator. A failure leaves the files of the
// last finished epoch as they were and returns an error naming the model,
// the epoch and the batch.
func Fit[T tensor.Float, B any](ctx context.Context, cfg Config, task Task[T, B], opt optim.Optimizer[T]) (*Result, error) {
	err := cfg.validate(task, opt)
	if sc, ok := task.(interface{ checkShards(Config) error }); ok && err == nil {
		err = sc.checkShards(cfg)
	}
	if err != nil && !cfg.distributed() {
		return nil, err
	}
	r := newRun(ctx, cfg, task, opt, err == nil)
	start, p, err := r.prepare(err)
	if err != nil || start >= cfg.Epochs {
		return r.res, err
	}
	r.res.Ran = true
	return r.res, r.epochs(start, p)
}

// newRun returns the run of Fit; valid reports whether its task and
// configuration passed the checks (a distributed rank goes on without,
// to tell the others).
func newRun[T tensor.Float, B any](ctx context.Context, cfg Config, task Task[T, B], opt optim.Optimizer[T], valid bool) *run[T, B] {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	r := &run[T, B]{ctx: ctx, loopCtx: ctx, cfg: cfg, task: task, opt: opt, res: &Result{}}
	if a, ok := task.(interface{ hasAccuracy() bool }); ok {
		r.showAccuracy = a.hasAccuracy()
	}
	if valid {
		r.nb = task.NumBatches()
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
	return r
}

// prepare agrees with the other ranks on the settings (distributed), then
// resumes (begin): it returns the epoch to run next and its progress. err
// is this rank's failure so far: a rank that cannot begin, or fails to
// resume, still takes part in agreeing, so that the others learn of it
// and stop too.
func (r *run[T, B]) prepare(err error) (start int, p progressSums, _ error) {
	cfg := r.cfg
	if r.distributed() {
		// First, before any call whose shape depends on the settings
		// (sharing the checkpoint, the number of epochs).
		anyFailed, aerr := agree(cfg.Distributed, runSettings(cfg, r.task, r.opt), err != nil)
		switch {
		case aerr != nil:
			return 0, p, aerr
		case err != nil:
			return 0, p, fmt.Errorf("rank %d: %w", cfg.Distributed.Rank(), err)
		case anyFailed:
			return 0, p, remote("to begin")
		}
	}
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
	return start, p, err
}

// epochs trains the epochs from start, the first from the progress p.
func (r *run[T, B]) epochs(start int, p progressSums) error {
	be := r.cfg.Backend
	if be == nil {
		be = tensor.Default()
	}
	eng := tensor.EngineFor[T](be)
	if o, ok := r.opt.(interface{ UseEngine(tensor.Engine[T]) }); ok {
		o.UseEngine(eng) // a GPU engine's updates run on the device (optim.UseEngine)
	}
	r.tp, r.evalT = autograd.NewTape(eng), autograd.NewTape(eng)
	r.evalT.SetNoGrad(true)
	defer r.tp.Release()
	defer r.evalT.Release()
	r.bar = newProgress(r.cfg.Quiet)
	for epoch := start; epoch < r.cfg.Epochs; epoch++ {
		if epoch > start {
			p = progressSums{}
		}
		if stop, err := r.epoch(epoch, p); err != nil || stop {
			return err
		}
	}
	return nil
}

// begin makes Config.Dir if it is missing and checks that it is
// writable, removes the temporary files of interrupted saves and,
// resuming, loads the checkpoint: the epoch to run next and its progress.
func (r *run[T, B]) begin() (start int, p progressSums, err error) {
	cfg, res := r.cfg, r.res
	if cfg.Dir == "" {
		return 0, p, nil
	}
	if r.writer() {
		if err := checkDir(cfg.Dir, res.CheckpointPath); err != nil {
			return 0, p, fmt.Errorf("train %s: %w", cfg.Name, err)
		}
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

// checkDir makes dir, the directory of the checkpoint path, if it is
// missing, and checks that a file can be made in it (one of path's
// temporary files, which RemoveTemporaries removes if a kill leaves it):
// before the first batch, not at the first save, an epoch later.
func checkDir(dir, path string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("Config.Dir %q: cannot make the directory: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, layers.TempPattern(path))
	if err != nil {
		return fmt.Errorf("Config.Dir %q: not writable: %w", dir, err)
	}
	if err := errors.Join(f.Close(), os.Remove(f.Name())); err != nil {
		return fmt.Errorf("Config.Dir %q: removing a file made there: %w", dir, err)
	}
	return nil
}

// save writes the checkpoint after epoch epochs and the batches of p.
func (r *run[T, B]) save(epoch int, p progressSums) error {
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
	meta["parameters"] = strconv.Itoa(numel(r.task.Params()))
	return layers.SaveCheckpoint(r.res.CheckpointPath, r.state(), r.opt, meta)
}

// interrupted saves the partial epoch and returns the error saying so.
func (r *run[T, B]) interrupted(epoch int, p progressSums) error {
	if err := r.save(epoch, p); err != nil {
		return fmt.Errorf("train %s: interrupted, and saving the checkpoint failed: %w", r.cfg.Name, err)
	}
	return &InterruptedError{Name: r.cfg.Name, Epoch: epoch, Batch: p.Batches, Batches: r.nb, Checkpoint: r.res.CheckpointPath}
}

// state is what the checkpoint holds of the model: its parameters, then
// its buffers (layers.Buffered: BatchNorm's running statistics).
func (r *run[T, B]) state() []*autograd.Param[T] {
	return append(slices.Clone(r.task.Params()), layers.Buffers[T](r.task)...)
}

// setTraining puts the task in training or evaluation mode if it has
// modes (layers.Trainable: Dropout, BatchNorm).
func (r *run[T, B]) setTraining(training bool) {
	if tm, ok := r.task.(layers.Trainable); ok {
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
func (r *run[T, B]) epoch(epoch int, p progressSums) (stop bool, err error) {
	cfg, res := r.cfg, r.res
	if p, err = r.trainBatches(epoch, p); err != nil {
		return false, err
	}
	if p.Batches == 0 {
		return false, fmt.Errorf("train %s: no training batches", cfg.Name)
	}
	ev, err := r.evaluate()
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
	res.Rows = append(res.Rows, trainRow)
	if r.evaluates() {
		ev.Model, ev.Epoch, ev.Elapsed = cfg.Name, epoch+1, trainRow.Elapsed+ev.Seconds
		res.Rows = append(res.Rows, ev)
	}
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

// evaluates reports whether the task has an evaluation (a test row).
func (r *run[T, B]) evaluates() bool {
	_, ok := r.task.(Evaluator[T])
	return ok
}

// evaluate runs the task's evaluation, if it has one, on this rank's share
// of it, and returns its row (its sums over the ranks when distributed).
func (r *run[T, B]) evaluate() (Row, error) {
	e, ok := r.task.(Evaluator[T])
	if !ok {
		return Row{}, nil
	}
	rank, size := 0, 1
	if r.distributed() {
		rank, size = r.cfg.Distributed.Rank(), r.cfg.Distributed.Size()
	}
	t0 := time.Now()
	r.setTraining(false)
	sums, err := e.Evaluate(r.loopCtx, r.evalT, rank, size)
	r.setTraining(true)
	if r.distributed() {
		sums, err = r.reduceEvaluation(sums, err)
	}
	if err != nil {
		return Row{}, err
	}
	return sums.row(time.Since(t0).Seconds())
}

// onEpoch reports the epoch's rows and calls Config.OnEpoch.
func (r *run[T, B]) onEpoch(trainRow, ev Row) (stop bool, err error) {
	cfg := r.cfg
	if !cfg.Quiet {
		fmt.Fprintln(cfg.Log, r.epochLine(trainRow, ev))
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

// epochLine is the log's line of an epoch: its numbers, the accuracy only
// for a task that reports it, the test numbers only for an Evaluator, the
// NFE only when some were counted.
func (r *run[T, B]) epochLine(trainRow, ev Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s epoch %d/%d: train loss %.4g", r.cfg.Name, trainRow.Epoch, r.cfg.Epochs, trainRow.Loss)
	if r.showAccuracy {
		fmt.Fprintf(&b, " acc %.2f%%", 100*trainRow.Accuracy)
	}
	if r.evaluates() {
		fmt.Fprintf(&b, " | test loss %.4g", ev.Loss)
		if r.showAccuracy {
			fmt.Fprintf(&b, " acc %.2f%%", 100*ev.Accuracy)
		}
	}
	if counted := trainRow.FwdNFE > 0 || trainRow.BwdNFE > 0 || ev.FwdNFE > 0; counted {
		fmt.Fprintf(&b, " | NFE fwd %.1f bwd %.1f", trainRow.FwdNFE, trainRow.BwdNFE)
		if r.evaluates() {
			fmt.Fprintf(&b, " (test %.1f)", ev.FwdNFE)
		}
	}
	fmt.Fprintf(&b, " | %.1f s", trainRow.Seconds+ev.Seconds)
	return b.String()
}

// writeFiles saves the checkpoint after epoch epoch+1 and then the CSV
// (each through a temporary file renamed into place; rank 0 only).
func (r *run[T, B]) writeFiles(epoch int) error {
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
func (r *run[T, B]) trainBatches(epoch int, p progressSums) (progressSums, error) {
	cfg := r.cfg
	if p.Batches >= r.nb {
		return p, nil
	}
	r.bar.start(r.nb, p.Batches)
	defer r.bar.finish()
	i := 0
	for b, err := range r.task.Batches(r.loopCtx, epoch) {
		if err != nil {
			if r.loopCtx.Err() != nil {
				return p, r.interrupted(epoch, p)
			}
			return p, fmt.Errorf("train %s: epoch %d, batch %d of %d: %w", cfg.Name, epoch+1, i+1, r.nb, err)
		}
		if i++; i <= p.Batches {
			continue // done before the checkpoint this run resumed from
		}
		if i > r.nb {
			return p, fmt.Errorf("train %s: epoch %d: the task yielded more than its %d batches (NumBatches)", cfg.Name, epoch+1, r.nb)
		}
		t0 := time.Now()
		st, stop, err := r.step(b)
		if err != nil {
			return p, fmt.Errorf("train %s: epoch %d, batch %d of %d: %w", cfg.Name, epoch+1, i, r.nb, err)
		}
		secs := time.Since(t0).Seconds()
		if st.skipped != nil {
			r.res.Skipped++
			fmt.Fprintf(cfg.Log, "%s: epoch %d, batch %d of %d: step skipped (Config.SkipNonFinite): %v\n", cfg.Name, epoch+1, i, r.nb, st.skipped)
		}
		p.add(st, secs)
		r.bar.set(p.Batches, r.barText(epoch, p))
		if cfg.OnBatch != nil {
			cfg.OnBatch(epoch, p.Batches)
		}
		if cfg.OnStep != nil {
			cfg.OnStep(epoch, p.Batches, st.public(secs))
		}
		if stop && p.Batches < r.nb {
			return p, r.interrupted(epoch, p)
		}
	}
	if p.Batches != r.nb {
		return p, fmt.Errorf("train %s: epoch %d: the task yielded %d batches, not the %d of NumBatches", cfg.Name, epoch+1, p.Batches, r.nb)
	}
	return p, nil
}

// barText is the progress bar's description after the batches of p.
func (r *run[T, B]) barText(epoch int, p progressSums) string {
	acc := ""
	if r.showAccuracy {
		acc = fmt.Sprintf(" acc %5.1f%%", 100*float64(p.Correct)/float64(p.Seen))
	}
	nfe := ""
	if p.FwdNFE > 0 || p.BwdNFE > 0 {
		nfe = fmt.Sprintf(" NFE %.0f+%.0f", float64(p.FwdNFE)/float64(p.Batches), float64(p.BwdNFE)/float64(p.Batches))
	}
	return fmt.Sprintf("%s %d/%d loss %.4g%s%s", r.cfg.Name, epoch+1, r.cfg.Epochs, p.LossSum/float64(p.Seen), acc, nfe)
}

// Step is what Config.OnStep reports of a training batch.
type Step struct {
	Loss           float64 // the batch's mean loss
	N, Correct     int     // its examples, and those predicted right
	FwdNFE, BwdNFE int     // the ODE block's evaluations (Counted tasks)
	Seconds        float64 // the step's wall time
	// Skipped: the gradients were not finite and Config.SkipNonFinite
	// skipped the optimizer's step.
	Skipped bool
}

// public returns the step's numbers as Config.OnStep reports them.
func (st stepStats) public(seconds float64) Step {
	return Step{Loss: st.loss / float64(st.seen), N: st.seen, Correct: st.correct, FwdNFE: st.fwd, BwdNFE: st.bwd, Seconds: seconds,
		Skipped: st.skipped != nil}
}

// stepStats are the numbers of one training iteration.
type stepStats struct {
	loss     float64 // batch-mean loss (a step's result: its sum over the examples)
	correct  int
	seen     int
	fwd, bwd int
	skipped  error // the step was skipped for this (Config.SkipNonFinite)
}

// step runs one training iteration on batch b and returns its numbers
// (summed over the ranks when distributed) and whether the run is to stop
// after it (its context, or any rank's, is done).
func (r *run[T, B]) step(b B) (stepStats, bool, error) {
	if r.cfg.Distributed == nil || r.cfg.Distributed.Size() <= 1 {
		st, err := gradients(r.tp, r.task, r.opt, b)
		if err == nil {
			err = update(r.tp.Engine(), r.task.Params(), r.opt, r.cfg.Clip)
			if r.skip(err) {
				st.skipped, err = err, nil
			}
		}
		st.loss *= float64(st.seen)
		return st, r.ctx.Err() != nil, err
	}
	return r.distributedStep(b)
}

// gradients records the task's loss on batch b and its backward pass into
// the parameters' Grad; on error the gradients are zero.
func gradients[T tensor.Float, B any](tp *autograd.Tape[T], task Task[T, B], opt optim.Optimizer[T], b B) (stepStats, error) {
	tp.Reset()
	opt.ZeroGrad()
	l, err := task.Loss(tp, b)
	if err != nil {
		return stepStats{}, err
	}
	st := stepStats{correct: l.Correct, seen: max(l.N, 1)}
	switch {
	case l.Value.IsZero() || l.Value.Len() != 1:
		return st, fmt.Errorf("the task's loss is %s, want a scalar", describeLoss(l.Value))
	case l.N < 0 || l.Correct < 0 || l.Correct > st.seen:
		return st, fmt.Errorf("the task's loss has N %d and Correct %d, want 0 ≤ Correct ≤ N", l.N, l.Correct)
	}
	st.loss = float64(l.Value.Item())
	if math.IsNaN(st.loss) || math.IsInf(st.loss, 0) {
		return st, fmt.Errorf("the loss is %v", st.loss)
	}
	if err := tp.Backward(l.Value); err != nil {
		opt.ZeroGrad()
		return st, err
	}
	if c, ok := task.(Counted); ok {
		st.fwd, st.bwd = c.NFE()
	}
	return st, nil
}

// describeLoss says what a loss that is no scalar is.
func describeLoss[T tensor.Float](v autograd.Var[T]) string {
	if v.IsZero() {
		return "the zero Var"
	}
	return fmt.Sprintf("of shape %v", v.Shape())
}

// update checks that the gradients of ps are finite, clips them (with e's
// Elementwise where it has one) and takes the optimizer's step. Gradients
// that are not finite are a *NonFiniteError, with nothing stepped.
//
// The check is the gradients' global norm, NaN or infinite exactly when
// some element is (or, all finite, when it overflows): with clipping, the
// norm the clipping forms anyway (no extra pass); without, GradNormOn,
// one pass over the gradients — on the host a read of each, on a device
// engine one number per parameter to the host, as clipping costs (the
// gradients stay on the device). Only a failing step reads the gradients
// themselves, to name the parameter.
func update[T tensor.Float](e tensor.Engine[T], ps []*autograd.Param[T], opt optim.Optimizer[T], clip float64) error {
	var n float64
	var err error
	if clip > 0 {
		n, err = optim.ClipGradNormOn(e, ps, clip)
	} else {
		n = optim.GradNormOn(e, ps)
	}
	if math.IsNaN(n) || math.IsInf(n, 0) {
		err = nonFinite(ps, n)
	}
	if err != nil {
		opt.ZeroGrad()
		return err
	}
	opt.Step()
	opt.ZeroGrad()
	return nil
}

// nonFinite returns the error of gradients whose global norm n is not
// finite: the first parameter with a NaN or infinite element.
func nonFinite[T tensor.Float](ps []*autograd.Param[T], n float64) *NonFiniteError {
	for _, p := range ps {
		if p.Grad == nil {
			continue
		}
		for i, v := range p.Grad.ReadData() {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return &NonFiniteError{Param: p.Name, Index: i, Value: f, Norm: n}
			}
		}
	}
	return &NonFiniteError{Norm: n}
}

// skip reports whether err is a step to skip (Config.SkipNonFinite).
func (r *run[T, B]) skip(err error) bool {
	var nf *NonFiniteError
	return r.cfg.SkipNonFinite && errors.As(err, &nf)
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

// countCorrect counts the rows of logits whose largest entry is at the
// label, with e's ArgMaxer where the logits are on e's device (only the
// indices come to the host: tensor.ArgMaxOn).
func countCorrect[T tensor.Float](e tensor.Engine[T], logits *tensor.Tensor[T], labels []int) int {
	n := 0
	for i, k := range tensor.ArgMaxOn(e, logits, 1) {
		if k == labels[i] {
			n++
		}
	}
	return n
}
