package serve

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
)

// CheckpointOptions change how LoadCheckpoint serves a checkpoint.
type CheckpointOptions struct {
	// Name is the model's name in requests (default: the checkpoint's
	// model, e.g. "adamnode").
	Name string
	// Method, Tol and MaxSteps override the solver the model was trained
	// with (empty or 0: the checkpoint's method and tolerance, the
	// solver's default step cap).
	Method   string
	Tol      float64
	MaxSteps int
	// Replicas is the number of forward passes that run at once, each on
	// a replica of the model with its own work buffers, the parameters
	// shared (infer.Options.Replicas; 0: GOMAXPROCS, each replica then
	// computing on one core).
	Replicas int
	// Model, Dataset and NHid describe the model for a file without
	// train's metadata, or override it: a PyTorch state_dict saved as
	// safetensors under this module's parameter names (f.conv1.weight,
	// head.weight, ode.r1, ...). Model is node, anode, sonode, hbnode,
	// ghbnode or adamnode; Dataset fashion-mnist, mnist or cifar10; NHid
	// the hidden width (0: the checkpoint's, else the paper's).
	Model, Dataset string
	NHid           int
	// Rows is how a batched request's answer is kept independent of the
	// requests batched with it (infer.Options.Rows; the zero value,
	// infer.RowErrors, controls each row's error separately).
	Rows infer.Rows
}

// LoadCheckpoint returns the classifier saved in the checkpoint at path, a
// MODEL.safetensors written by adamnode train, ready to serve. The
// model's configuration comes from the checkpoint's own metadata, which
// train writes: the model (node, anode, sonode, hbnode, ghbnode or
// adamnode), the dataset (fashion-mnist, mnist or cifar10: the input
// shape, [1, 28, 28] or [3, 32, 32], and the paper's widths), nhid and
// nhid_scale (the hidden width as train's --nhid and --nhid-scale set
// it), method and tol (the solver). The parameters are loaded by name and
// shape; the optimizer's state in the file is ignored. Inputs are what
// the model was trained on: MNIST-shaped images in [0, 1], CIFAR-10
// images standardised per channel with the training set's statistics.
// Errors name the file and the key or tensor that is wrong.
func LoadCheckpoint(path string, o CheckpointOptions) (Model[float32], error) {
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		return Model[float32]{}, err
	}
	cfg, err := checkpointConfig(path, st.Metadata, o)
	if err != nil {
		return Model[float32]{}, err
	}
	build := func() (*models.Classifier[float32], error) {
		return models.New[float32](rand.New(rand.NewPCG(1, 0)), cfg)
	}
	trained, err := build()
	if err != nil {
		return Model[float32]{}, fmt.Errorf("%s: %v", path, err)
	}
	if _, err := layers.LoadParams(path, trained.Params()); err != nil {
		return Model[float32]{}, err
	}
	if o.Replicas < 0 {
		return Model[float32]{}, fmt.Errorf("serve: CheckpointOptions.Replicas must be ≥ 0, got %d", o.Replicas)
	}
	pool, err := infer.New[float32](trained, build, infer.Options{Replicas: o.Replicas, Rows: o.Rows})
	if err != nil {
		return Model[float32]{}, fmt.Errorf("%s: %w", path, err)
	}
	name := o.Name
	if name == "" {
		name = cfg.Kind.String()
	}
	return Model[float32]{Name: name, Input: pool.Input(), Predictor: pool}, nil
}

// checkpointConfig rebuilds the model configuration of a checkpoint of
// adamnode train from its metadata meta, as the command built it (the
// paper's configuration, the hidden width of --nhid and --nhid-scale, the
// solver of --method and --tol), with o's solver overrides.
func checkpointConfig(path string, meta map[string]string, o CheckpointOptions) (models.Config, error) {
	m := ckptMeta{path: path, m: maps.Clone(meta)}
	if m.m == nil {
		m.m = map[string]string{}
	}
	for key, v := range map[string]string{"model": o.Model, "dataset": o.Dataset} {
		if v != "" {
			m.m[key] = v
		}
	}
	if o.NHid != 0 {
		m.m["nhid"], m.m["nhid_scale"] = strconv.Itoa(o.NHid), "1"
	}
	kind, err := models.ParseKind(m.m["model"])
	if err != nil {
		return models.Config{}, m.bad("model", "%q is not one of node, anode, sonode, hbnode, ghbnode, adamnode", m.m["model"])
	}
	var table models.Dataset
	switch m.m["dataset"] {
	case "fashion-mnist", "mnist":
		table = models.MNIST
	case "cifar10":
		table = models.CIFAR10
	default:
		return models.Config{}, m.bad("dataset", "%q is not one of fashion-mnist, mnist, cifar10", m.m["dataset"])
	}
	cfg := models.Paper(kind, table)
	if err := m.width(&cfg); err != nil {
		return cfg, err
	}
	return cfg, m.solver(&cfg, o)
}

// ckptMeta is a checkpoint's metadata (with the options' overrides) as
// checkpointConfig reads it.
type ckptMeta struct {
	path string
	m    map[string]string
}

// bad is the error for the value of key.
func (m ckptMeta) bad(key, format string, args ...any) error {
	return fmt.Errorf("%s: metadata %q: %s (is it a checkpoint written by adamnode train? For another file, give the model, dataset and width: CheckpointOptions, adamnode serve --model --dataset --nhid)", m.path, key, fmt.Sprintf(format, args...))
}

// num returns key's value as a finite number, def when it is absent.
func (m ckptMeta) num(key string, def float64) (float64, error) {
	v, ok := m.m[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, m.bad(key, "%q is not a number", v)
	}
	return f, nil
}

// width sets cfg.NHid from nhid (0: the paper's) times nhid_scale.
func (m ckptMeta) width(cfg *models.Config) error {
	nhid, err := m.num("nhid", 0)
	if err != nil {
		return err
	}
	scale, err := m.num("nhid_scale", 1)
	if err != nil {
		return err
	}
	if nhid < 0 || nhid != math.Trunc(nhid) || !(scale > 0) {
		return m.bad("nhid", "nhid %v and nhid_scale %v do not make a width", nhid, scale)
	}
	if nhid > 0 {
		cfg.NHid = int(nhid)
	}
	cfg.NHid = max(1, int(math.Round(float64(cfg.NHid)*scale)))
	return nil
}

// solver sets cfg's solver from the metadata's method and tol, then the
// options' overrides, and checks the result.
func (m ckptMeta) solver(cfg *models.Config, o CheckpointOptions) error {
	if method := m.m["method"]; method != "" {
		cfg.Solver.Method = method
	}
	tol, err := m.num("tol", cfg.Solver.RTol)
	if err != nil {
		return err
	}
	cfg.Solver.RTol, cfg.Solver.ATol = tol, tol
	if o.Method != "" {
		cfg.Solver.Method = o.Method
	}
	if o.Tol != 0 {
		cfg.Solver.RTol, cfg.Solver.ATol = o.Tol, o.Tol
	}
	if o.MaxSteps != 0 {
		cfg.Solver.MaxSteps = o.MaxSteps
	}
	if _, err := odeblock.Method(cfg.Solver.Method); err != nil {
		return fmt.Errorf("%s: solver method %q: %v", m.path, cfg.Solver.Method, err)
	}
	if !(cfg.Solver.RTol > 0 && cfg.Solver.RTol < 1) || o.MaxSteps < 0 {
		return fmt.Errorf("%s: the tolerance must be in (0, 1) and the step cap ≥ 0, got %g and %d", m.path, cfg.Solver.RTol, o.MaxSteps)
	}
	return nil
}
