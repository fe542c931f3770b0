package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
)

func runTrain(ctx context.Context, args []string, out io.Writer) error {
	s, kind, err := parseTrain(args, out)
	if err != nil {
		return err
	}
	return trainOne(ctx, s, kind, out, "adamnode train "+strings.Join(args, " "))
}

// parseTrain reads train's command line.
func parseTrain(args []string, out io.Writer) (runSettings, models.Kind, error) {
	fs := newFlags("train")
	var f trainFlags
	model := fs.String("model", "adamnode", "model: node, anode, sonode, hbnode, ghbnode or adamnode")
	addTrainFlags(fs, &f, "out/train")
	fs.BoolVar(&f.distributed, "distributed", false, "data-parallel on MPI's ranks: launch with mpirun -np N (needs a build with -tags mpi); --batch is the global batch")
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

// trainDistributed is trainOne on one of MPI's ranks: rank 0 reports and
// writes the files, the others train quietly; every rank learns of a
// rank's failure to load its data (and stops), and MPI is finalised.
func trainDistributed(ctx context.Context, s runSettings, kind models.Kind, out io.Writer, command string) error {
	c := s.comm
	if c.Rank() > 0 {
		out, s.quiet = io.Discard, true
	}
	tr, te, err := prepare(s)
	flags := []float64{0}
	if err != nil {
		flags[0] = 1
	}
	if rerr := c.AllReduce(flags); rerr != nil {
		c.Abort(1) // the ranks can no longer agree: stop them all
		return rerr
	}
	switch {
	case err != nil:
		err = fmt.Errorf("rank %d: %w", c.Rank(), err)
	case flags[0] > 0:
		err = errors.New("another rank failed to load its data (its error is in its output)")
	default:
		fmt.Fprintf(out, "%s on %s, %d ranks: %d training images in global batches of %d, %d test images; %s\n",
			kind.Title(), s.dataset, c.Size(), tr.Len(), s.batch, te.Len(), s.describe())
		var r *trainResult
		if r, err = trainModel(ctx, s, kind, tr, te, out, command, trainHooks{}); err == nil {
			fmt.Fprintln(out, r.Wrote())
			if r.AllReduces > 0 {
				fmt.Fprintf(out, "all-reduce of %d numbers: %.2f ms per step over %d steps (rank 0; waiting for the slowest rank included)\n",
					r.AllReduceLen, 1e3*r.AllReduceSeconds/float64(r.AllReduces), r.AllReduces)
			}
		}
	}
	if ferr := c.Finalize(); err == nil {
		err = ferr
	}
	return err
}

// trainOne loads the data and trains one model.
func trainOne(ctx context.Context, s runSettings, kind models.Kind, out io.Writer, command string) error {
	if s.comm != nil {
		return trainDistributed(ctx, s, kind, out, command)
	}
	tr, te, err := prepare(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s on %s: %d training images in batches of %d, %d test images; %s\n",
		kind.Title(), s.dataset, tr.Len(), s.batch, te.Len(), s.describe())
	r, err := trainModel(ctx, s, kind, tr, te, out, command, trainHooks{})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, r.Wrote())
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

// trainResult is what a finished training run reports to compare.
type trainResult struct {
	*train.Result
	kind   models.Kind
	counts models.ParamCounts
}

// trainHooks are what a caller of trainModel may watch besides the result:
// every training batch (train.Config.OnStep) and every epoch's rows, after
// its files are written (train.Config.OnEpoch); nil ones are not called.
type trainHooks struct {
	onStep  func(epoch, batches int, st train.Step)
	onEpoch func(train, test train.Row) error
}

// trainModel trains model kind under s with package train, writing its
// CSV and checkpoint into s.out after every epoch (and the checkpoint on
// Ctrl-C). A checkpoint this run cannot continue (another model, more
// epochs than --epochs) is a usage error.
func trainModel(ctx context.Context, s runSettings, kind models.Kind, tr, te *data.Loader, out io.Writer, command string, hooks trainHooks) (*trainResult, error) {
	// The model and its optimizer (one per replica: identical, from the seed).
	build := func() (*models.Classifier[float32], optim.Optimizer[float32], error) {
		m, err := models.New[float32](rand.New(rand.NewPCG(s.seed, 0)), s.modelConfig(kind))
		if err != nil {
			return nil, nil, usagef("train %v: %v", kind, err)
		}
		return m, optim.NewAdam(m.Params(), optim.AdamConfig{LR: s.lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}), nil
	}
	m, opt, err := build()
	if err != nil {
		return nil, err
	}
	meta := map[string]string{"command": command}
	for _, st := range s.identity() {
		meta[st.key] = st.value
	}
	cfg := train.Config{Name: kind.String(), Dir: s.out, Epochs: s.epochs, Clip: s.clip, Resume: s.resume,
		Meta: meta, CheckResume: s.checkIdentity, Log: out, Quiet: s.quiet, OnBatch: s.onBatch, Backend: s.backend,
		Settings: s.agreement(kind), OnStep: hooks.onStep, OnEpoch: hooks.onEpoch}
	if s.comm != nil {
		cfg.Distributed = s.comm
	}
	var r *train.Result
	if s.replicas > 1 {
		r, err = train.RunReplicas[float32](ctx, cfg, s.replicas, func(i int) (train.Replica[float32], error) {
			if i == 0 {
				return train.Replica[float32]{Model: m, Optimizer: opt, Train: tr, Test: te}, nil
			}
			mi, opti, err := build()
			if err != nil {
				return train.Replica[float32]{}, err
			}
			tri, err := tr.WithShard(i, s.replicas)
			return train.Replica[float32]{Model: mi, Optimizer: opti, Train: tri, Test: te}, err
		})
	} else {
		r, err = train.Run[float32](ctx, cfg, m, opt, tr, te)
	}
	var me *train.MismatchError
	var ie *train.InterruptedError
	var se *train.SettingsError
	switch {
	case errors.As(err, &me) && me.Param == "" && me.CheckpointParams == 0 && strings.Contains(me.Msg, "epochs finished"):
		return nil, usagef("%s (--epochs sets the epochs)", me.Msg)
	case errors.As(err, &me):
		return nil, usagef("%s", me.Msg)
	case errors.As(err, &se):
		return nil, usagef("%v", se)
	case errors.As(err, &ie):
		return nil, fmt.Errorf("%w; to continue, run the same command with --resume", err)
	case errors.Is(err, odeblock.ErrAdjointDrift):
		return nil, fmt.Errorf("%w (--grad interpolated or --grad checkpoint do not reconstruct the state backward)", err)
	}
	if err != nil {
		return nil, err
	}
	return &trainResult{Result: r, kind: kind, counts: m.Counts()}, nil
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
