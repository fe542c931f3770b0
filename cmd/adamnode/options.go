package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/distributed"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/train"
)

// trainFlags are the command-line settings shared by train and compare.
// Zero values of batch, lr and tol mean the paper's setting for the
// dataset.
type trainFlags struct {
	dataset, dataDir string
	method, grad     string
	tol              float64
	maxSteps         int
	epochs           int
	batch, testBatch int
	lr, clip         float64
	seed             uint64
	subset           int
	testSubset       int
	nhid             int
	nhidScale        float64
	out              string
	device           string
	resume, quiet    bool
	distributed      bool // train only: one of mpirun's ranks
	replicas         int  // data-parallel replicas in this process
}

// addTrainFlags defines the shared flags on fs, with defaultOut as --out's
// default.
func addTrainFlags(fs *flag.FlagSet, f *trainFlags, defaultOut string) {
	fs.StringVar(&f.dataset, "dataset", "fashion-mnist", "dataset: fashion-mnist, mnist or cifar10")
	fs.StringVar(&f.dataDir, "data", "", "dataset directory (default for fashion-mnist: "+data.FashionMNISTDir+"; required for mnist and cifar10)")
	fs.StringVar(&f.method, "method", "dopri5", "adaptive ODE solver: "+strings.Join(adaptiveMethods(), ", "))
	fs.Float64Var(&f.tol, "tol", 0, "solver tolerance, rtol = atol, forward and adjoint (0: the paper's, 1e-4 for MNIST shapes, 1e-5 for CIFAR-10)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "at most this many solver steps per solve, else the run fails (0: the solver's default, 10000)")
	fs.StringVar(&f.grad, "grad", "adjoint", "gradient mode: "+strings.Join(odeblock.GradModeNames(), ", "))
	fs.IntVar(&f.epochs, "epochs", 10, "epochs to train (with --resume: the total, counting those already done)")
	fs.IntVar(&f.batch, "batch", 0, "training batch size (0: the paper's, 32 for MNIST shapes, 64 for CIFAR-10)")
	fs.IntVar(&f.testBatch, "test-batch", 0, "evaluation batch size (0: the training batch size)")
	fs.Float64Var(&f.lr, "lr", 0, "Adam learning rate (0: the paper's, 1e-4 for MNIST shapes, 1e-3 for CIFAR-10)")
	fs.Float64Var(&f.clip, "clip", 10, "clip the gradients' global L2 norm to this (0: no clipping)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the initialisation and the per-epoch shuffles")
	fs.IntVar(&f.subset, "subset", 0, "train on the first N training images only (0: all)")
	fs.IntVar(&f.testSubset, "test-subset", 0, "evaluate on the first N test images only (0: all)")
	fs.IntVar(&f.nhid, "nhid", 0, "quick runs: hidden width of every model instead of the paper's (0: the paper's)")
	fs.Float64Var(&f.nhidScale, "nhid-scale", 1, "quick runs: multiply each model's hidden width by this (rounded, at least 1)")
	fs.StringVar(&f.out, "out", defaultOut, "directory for the CSV, checkpoints and (compare) the table and plots")
	fs.BoolVar(&f.resume, "resume", false, "continue from the checkpoint in --out (a finished run is not repeated)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar and no per-epoch lines")
	fs.StringVar(&f.device, "device", "cpu", "where to compute: cpu, or cuda (cuda:N for device N; GEMM on cuBLAS)")
	fs.IntVar(&f.replicas, "replicas", 1, "data-parallel replicas in this process, each on one core and its share of --batch (the global batch); 1: one model whose kernels use every core")
}

// runSettings are trainFlags checked and resolved against the dataset.
type runSettings struct {
	trainFlags
	table   models.Dataset
	backend tensor.Backend // nil: tensor.Default()
	solver  odeblock.Options
	mode    odeblock.GradMode
	comm    *distributed.Comm // --distributed: MPI's world; nil otherwise
	// onBatch, if set, is called after every training batch with the
	// epoch (from 0) and the number of batches done in it (tests use it).
	onBatch func(epoch, batches int)
}

// datasetNames lists the accepted --dataset values.
func datasetNames() []string { return []string{"fashion-mnist", "mnist", "cifar10"} }

// resolve checks the flags and fills in the paper's defaults. Every
// problem is a usage error that says how to fix it.
func (f trainFlags) resolve(cmd string) (runSettings, error) {
	s := runSettings{trainFlags: f}
	bad := func(format string, args ...any) error {
		return usagef("%s: %s", cmd, fmt.Sprintf(format, args...))
	}
	if err := s.paperDefaults(f, bad); err != nil {
		return s, err
	}
	if err := s.parseChoices(f, bad); err != nil {
		return s, err
	}
	if err := s.checkRanges(f, bad); err != nil {
		return s, err
	}
	s.solver = odeblock.Options{Method: f.method, RTol: s.tol, ATol: s.tol, StepControl: odeblock.StepControl{MaxSteps: f.maxSteps}}
	if _, ok := s.mode.(odeblock.Adjoint); ok {
		// The backward solve at the forward's tolerance.
		s.mode = odeblock.Adjoint{RTol: s.tol, ATol: s.tol, MaxSteps: f.maxSteps}
	}
	if f.distributed {
		// Checked last: MPI is initialised only for a command that runs.
		var err error
		if s.comm, err = distributed.Init(); err != nil {
			return s, bad("--distributed: %v", err)
		}
		if n := s.comm.Size(); s.batch%n != 0 {
			return s, bad("--batch %d is the global batch and must be a multiple of the %d ranks", s.batch, n)
		}
	}
	return s, nil
}

// usageFunc makes resolve's usage errors, prefixed with the command.
type usageFunc func(format string, args ...any) error

// paperDefaults sets s's table from the flags f's dataset and fills in the
// paper's setup on it for the batch, learning rate, tolerance and test
// batch the flags leave at 0, and the data directory (the built-in
// Fashion-MNIST's; any other dataset needs --data).
func (s *runSettings) paperDefaults(f trainFlags, bad usageFunc) error {
	switch f.dataset {
	case "fashion-mnist", "mnist":
		s.table = models.MNIST
	case "cifar10":
		s.table = models.CIFAR10
	default:
		return bad("unknown dataset %q (use --dataset %s)", f.dataset, strings.Join(datasetNames(), ", --dataset "))
	}
	paper := models.PaperTraining(s.table)
	if s.batch == 0 {
		s.batch = paper.Batch
	}
	if s.lr == 0 {
		s.lr = paper.LR
	}
	if s.tol == 0 {
		s.tol = paper.Tol
	}
	if s.testBatch == 0 {
		s.testBatch = s.batch
	}
	if s.dataDir == "" {
		if f.dataset != "fashion-mnist" {
			return bad("--dataset %s needs --data DIR, the directory holding its files", f.dataset)
		}
		s.dataDir = data.FashionMNISTDir
	}
	return nil
}

// parseChoices checks the named choices of f (--method, --device, --grad)
// and sets s's backend and gradient mode.
func (s *runSettings) parseChoices(f trainFlags, bad usageFunc) error {
	tb, err := odeblock.Method(f.method)
	if err != nil {
		return bad("unknown --method %q (use one of %s)", f.method, strings.Join(odeblock.MethodNames(), ", "))
	}
	if !tb.Adaptive() || tb.Stiff() {
		return bad("--method %s is not an explicit adaptive method; use one of %s", f.method, strings.Join(adaptiveMethods(), ", "))
	}
	if s.backend, err = parseDevice(f.device); err != nil {
		return bad("--device %s: %v", f.device, err)
	}
	if s.mode, err = odeblock.ParseGradMode(f.grad); err != nil {
		return bad("unknown --grad %q (use %s)", f.grad, strings.Join(odeblock.GradModeNames(), ", "))
	}
	return nil
}

// checkRanges checks the numbers of s (the flags f with the paper's
// defaults filled in) and the combinations of flags.
func (s *runSettings) checkRanges(f trainFlags, bad usageFunc) error {
	switch {
	case !(s.tol > 0 && s.tol < 1):
		return bad("--tol must be in (0, 1), got %g", f.tol)
	case f.maxSteps < 0:
		return bad("--max-steps must be ≥ 0, got %d", f.maxSteps)
	case f.epochs < 1:
		return bad("--epochs must be at least 1, got %d", f.epochs)
	case s.batch < 1:
		return bad("--batch must be at least 1, got %d", f.batch)
	case s.testBatch < 1:
		return bad("--test-batch must be at least 1, got %d", f.testBatch)
	case !(s.lr > 0) || math.IsInf(s.lr, 0):
		return bad("--lr must be positive, got %g", f.lr)
	case !(f.clip >= 0) || math.IsInf(f.clip, 0):
		return bad("--clip must be ≥ 0 (0: no clipping), got %g", f.clip)
	case f.subset < 0 || f.testSubset < 0:
		return bad("--subset and --test-subset must be ≥ 0 (0: all images)")
	case f.nhid < 0:
		return bad("--nhid must be ≥ 0 (0: the paper's widths), got %d", f.nhid)
	case !(f.nhidScale > 0) || math.IsInf(f.nhidScale, 0):
		return bad("--nhid-scale must be positive, got %g", f.nhidScale)
	case f.out == "":
		return bad("--out must name a directory")
	case f.replicas < 1 || f.replicas > 64:
		return bad("--replicas must be from 1 to 64, got %d", f.replicas)
	case s.batch%f.replicas != 0:
		return bad("--batch %d is the global batch and must be a multiple of the %d replicas", s.batch, f.replicas)
	case f.replicas > 1 && f.distributed:
		return bad("--replicas and --distributed cannot be combined: run more MPI ranks instead")
	}
	return nil
}

// modelConfig returns the configuration of model kind k under s: the
// paper's, with the hidden width, solver and gradient mode of the flags.
func (s runSettings) modelConfig(k models.Kind) models.Config {
	cfg := models.Paper(k, s.table)
	if s.nhid > 0 {
		cfg.NHid = s.nhid
	}
	cfg.NHid = max(1, int(math.Round(float64(cfg.NHid)*s.nhidScale)))
	cfg.Solver, cfg.Mode = s.solver, s.mode
	return cfg
}

// setting is one value that fixes a run's numbers, stored in its
// checkpoint's metadata under key.
type setting struct{ key, flag, value string }

// identity returns the settings that fix a run's numbers: a run may be
// resumed only with the same values. The number of epochs, the solver's
// step cap, the evaluation batch size and the display flags may change
// between sessions.
func (s runSettings) identity() []setting {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []setting{
		{"dataset", "--dataset", s.dataset},
		{"method", "--method", s.method},
		{"tol", "--tol", g(s.tol)},
		{"grad", "--grad", s.mode.String()},
		{"batch_size", "--batch", strconv.Itoa(s.batch)},
		{"lr", "--lr", g(s.lr)},
		{"clip", "--clip", g(s.clip)},
		{"seed", "--seed", strconv.FormatUint(s.seed, 10)},
		{"subset", "--subset", strconv.Itoa(s.subset)},
		{"test_subset", "--test-subset", strconv.Itoa(s.testSubset)},
		{"nhid", "--nhid", strconv.Itoa(s.nhid)},
		{"nhid_scale", "--nhid-scale", g(s.nhidScale)},
	}
}

// agreement returns the settings every rank of a distributed run must have
// alike (train.Config.Settings), by flag: those of identity, the model,
// and those a resumed run may change but the ranks must share (--epochs,
// --max-steps, --test-batch, --resume), resolved (--lr 0 and the paper's
// --lr agree). Left out: --data and --out, paths of each rank's own
// (train.Run compares the data's sizes itself), --device, which changes
// only the rounding of a rank's gradients, --quiet, and --replicas,
// which --distributed excludes.
func (s runSettings) agreement(kind models.Kind) []train.Setting {
	out := []train.Setting{{Name: "--model", Value: kind.String()}}
	for _, st := range s.identity() {
		out = append(out, train.Setting{Name: st.flag, Value: st.value})
	}
	return append(out,
		train.Setting{Name: "--epochs", Value: strconv.Itoa(s.epochs)},
		train.Setting{Name: "--max-steps", Value: strconv.Itoa(s.maxSteps)},
		train.Setting{Name: "--test-batch", Value: strconv.Itoa(s.testBatch)},
		train.Setting{Name: "--resume", Value: strconv.FormatBool(s.resume)},
	)
}

// checkIdentity compares a checkpoint's metadata with the settings of the
// run that wants to resume it.
func (s runSettings) checkIdentity(path string, meta map[string]string) error {
	for _, st := range s.identity() {
		if got := meta[st.key]; got != st.value {
			if got == "" {
				got = "(none)"
			}
			return usagef("cannot resume %s: it was written with %s %s, this run has %s %s; use the same flags or drop --resume to start over",
				path, st.flag, got, st.flag, st.value)
		}
	}
	return nil
}

// loadDatasets reads the training and test images of s's dataset. A
// missing directory is a usage error saying how to get the data; a
// missing or malformed file is an error naming the file.
func loadDatasets(s runSettings) (train, test *data.Images, err error) {
	st, err := os.Stat(s.dataDir)
	if err != nil || !st.IsDir() {
		hint := "check the directory given with --data"
		if s.dataset == "fashion-mnist" && s.dataDir == data.FashionMNISTDir {
			hint = "install it with 'apt-get install dataset-fashion-mnist' (Debian) or pass --data DIR"
		}
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil, nil, usagef("%s data directory %s does not exist: %s", s.dataset, s.dataDir, hint)
		}
		return nil, nil, usagef("%s data directory %s: %v: %s", s.dataset, s.dataDir, err, hint)
	}
	load := data.LoadFashionMNIST
	switch s.dataset {
	case "mnist":
		load = data.LoadMNIST
	case "cifar10":
		load = data.LoadCIFAR10
	}
	if train, err = load(s.dataDir, data.Train); err != nil {
		return nil, nil, err
	}
	if test, err = load(s.dataDir, data.Test); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// newLoaders returns the shuffled training loader and the ordered test
// loader of s. CIFAR-10 is standardised per channel with the training
// set's statistics; MNIST shapes stay in [0, 1].
func newLoaders(s runSettings, train, test *data.Images) (tr, te *data.Loader, err error) {
	opts := data.LoaderOptions{BatchSize: s.batch, Shuffle: true, Seed: s.seed, Subset: s.subset, Prefetch: 1}
	switch {
	case s.comm != nil && s.comm.Size() > 1:
		// --batch is the global batch; each rank takes its share.
		opts.BatchSize, opts.Shard, opts.Shards = s.batch/s.comm.Size(), s.comm.Rank(), s.comm.Size()
	case s.replicas > 1:
		// Replica 0's; trainModel makes the others' (WithShard).
		opts.BatchSize, opts.Shards = s.batch/s.replicas, s.replicas
	}
	if s.table == models.CIFAR10 {
		opts.Mean, opts.Std = train.ChannelStats()
	}
	if tr, err = data.NewLoader(train, opts); err != nil {
		return nil, nil, err
	}
	topts := data.LoaderOptions{BatchSize: s.testBatch, Subset: s.testSubset, Prefetch: 1, Mean: opts.Mean, Std: opts.Std}
	if te, err = data.NewLoader(test, topts); err != nil {
		return nil, nil, err
	}
	return tr, te, nil
}

// adaptiveMethods returns the names of odeblock's adaptive methods.
func adaptiveMethods() []string {
	var out []string
	for _, n := range odeblock.MethodNames() {
		// The stiff methods form a dense Jacobian of the state: not for
		// image models' states of hundreds of thousands of numbers.
		if tb, err := odeblock.Method(n); err == nil && tb.Adaptive() && !tb.Stiff() {
			out = append(out, n)
		}
	}
	return out
}
