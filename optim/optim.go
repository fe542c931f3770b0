package optim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Prefix starts the name of every tensor and metadata key of an optimizer's
// state (see StateDict).
const Prefix = "optim."

// Optimizer updates a fixed list of parameters from their gradients.
type Optimizer[T tensor.Float] interface {
	// Step applies one update to every parameter whose Grad is not nil.
	Step()
	// ZeroGrad sets the gradient of every parameter to zero.
	ZeroGrad()
	// LR returns the learning rate the next Step uses.
	LR() float64
	// SetLR sets the learning rate (a schedule calls it each epoch).
	SetLR(lr float64)
	// Params returns the parameters the optimizer updates (its own slice:
	// do not modify it).
	Params() []*autograd.Param[T]
	// StateDict returns the optimizer's state: its buffers by name (its own
	// storage, not copies) and its scalars as strings. See the package
	// documentation for the names.
	StateDict() (tensors map[string]*tensor.Tensor[T], meta map[string]string, err error)
	// LoadStateDict restores a state returned by StateDict (of an optimizer
	// of the same kind over parameters of the same names and shapes),
	// copying the tensors. It checks everything before changing anything:
	// on error the optimizer is unchanged.
	LoadStateDict(tensors map[string]*tensor.Tensor[T], meta map[string]string) error
}

// core is what every optimizer has: the parameters, the learning rate, a
// step count per parameter and named buffers shaped like each parameter.
type core[T tensor.Float] struct {
	kind     string // "sgd", "adam", "adamw", "rmsprop"
	params   []*autograd.Param[T]
	lr       float64
	steps    []int64
	bufNames []string              // e.g. "exp_avg", "exp_avg_sq"
	bufs     [][]*tensor.Tensor[T] // bufs[k][i] is buffer k of parameter i
	hyper    [][2]string           // hyperparameters for the metadata
	dev      device[T]             // the engine's Elementwise, when UseEngine gave one (device.go)
}

func newCore[T tensor.Float](kind string, params []*autograd.Param[T], lr float64, bufNames ...string) core[T] {
	checkLR(kind, lr)
	for i, p := range params {
		if p == nil || p.Value == nil {
			panic(fmt.Sprintf("optim: %s: parameter %d is nil or has no value", kind, i))
		}
	}
	c := core[T]{
		kind:     kind,
		params:   slices.Clone(params),
		lr:       lr,
		steps:    make([]int64, len(params)),
		bufNames: bufNames,
		bufs:     make([][]*tensor.Tensor[T], len(bufNames)),
	}
	for k := range bufNames {
		c.bufs[k] = make([]*tensor.Tensor[T], len(params))
		for i, p := range params {
			c.bufs[k][i] = tensor.New[T](p.Value.Shape()...)
		}
	}
	return c
}

func checkLR(kind string, lr float64) {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		panic(fmt.Sprintf("optim: %s: invalid learning rate %v (want a finite lr ≥ 0)", kind, lr))
	}
}

// names returns the parameters' names, or an error if one is empty or two
// are equal: the state is saved and loaded by name (training needs no
// names).
func (c *core[T]) names() ([]string, error) {
	names := make([]string, len(c.params))
	seen := make(map[string]int, len(c.params))
	for i, p := range c.params {
		if p.Name == "" {
			return nil, fmt.Errorf("optim: %s state: parameter %d has no name (the state is saved by parameter name: name it, or give its module a path with layers.Prefix)", c.kind, i)
		}
		if j, dup := seen[p.Name]; dup {
			return nil, fmt.Errorf("optim: %s state: parameters %d and %d are both named %q (the state is saved by parameter name: give their modules paths with layers.Prefix or a Sequential)", c.kind, j, i, p.Name)
		}
		seen[p.Name] = i
		names[i] = p.Name
	}
	return names, nil
}

// grad returns the value and gradient of parameter i and advances its step
// count, or reports false when its Grad is nil. It panics when the gradient
// or the value no longer fits.
func (c *core[T]) grad(i int) (p, g []T, step int64, ok bool) {
	prm := c.params[i]
	if prm.Grad == nil {
		return nil, nil, 0, false
	}
	c.checkShapes(i)
	c.steps[i]++
	return prm.Value.Data(), prm.Grad.Data(), c.steps[i], true
}

// checkShapes panics unless parameter i's gradient and buffers have its
// value's shape.
func (c *core[T]) checkShapes(i int) {
	prm := c.params[i]
	if !prm.Grad.SameShape(prm.Value) {
		panic(&tensor.ShapeError{Op: "optim." + c.kind, Msg: fmt.Sprintf("parameter %q has value of shape %v but gradient of shape %v", prm.Name, prm.Value.Shape(), prm.Grad.Shape())})
	}
	for k := range c.bufs {
		if b := c.bufs[k][i]; !b.SameShape(prm.Value) {
			panic(&tensor.ShapeError{Op: "optim." + c.kind, Msg: fmt.Sprintf("parameter %q has value of shape %v but the optimizer's %s buffer has shape %v (the value was replaced after the optimizer was made)", prm.Name, prm.Value.Shape(), c.bufNames[k], b.Shape())})
		}
	}
}

// gradTensors is grad for the device path: the value and gradient tensors
// of parameter i (their elements untouched, wherever they are) and its
// step count, advanced.
func (c *core[T]) gradTensors(i int) (p, g *tensor.Tensor[T], step int64, ok bool) {
	prm := c.params[i]
	if prm.Grad == nil {
		return nil, nil, 0, false
	}
	c.checkShapes(i)
	c.steps[i]++
	return prm.Value, prm.Grad, c.steps[i], true
}

// buf returns buffer k of parameter i.
func (c *core[T]) buf(k, i int) []T { return c.bufs[k][i].Data() }

// ZeroGrad sets the gradient of every parameter to zero (allocating it if
// nil).
func (c *core[T]) ZeroGrad() {
	if c.dev.el != nil {
		autograd.ZeroGradsOn(c.dev.eng, c.params)
		return
	}
	autograd.ZeroGrads(c.params)
}

// LR returns the learning rate.
func (c *core[T]) LR() float64 { return c.lr }

// SetLR sets the learning rate. It panics if lr is negative, NaN or
// infinite.
func (c *core[T]) SetLR(lr float64) {
	checkLR(c.kind, lr)
	c.lr = lr
}

// Params returns the parameters the optimizer updates.
func (c *core[T]) Params() []*autograd.Param[T] { return c.params }

// Steps returns the number of updates applied to each parameter (indexed
// like Params): torch's per-parameter state["step"].
func (c *core[T]) Steps() []int64 { return slices.Clone(c.steps) }

func (c *core[T]) tensorName(k int, param string) string {
	return Prefix + c.kind + "." + c.bufNames[k] + "." + param
}

func (c *core[T]) metaKey(key string) string { return Prefix + c.kind + "." + key }

// StateDict returns the optimizer's buffers (its own storage, not copies)
// and its learning rate, step counts and hyperparameters as strings; see
// the package documentation for the names. It fails when two parameters
// share a name, or one has none.
func (c *core[T]) StateDict() (map[string]*tensor.Tensor[T], map[string]string, error) {
	names, err := c.names()
	if err != nil {
		return nil, nil, err
	}
	ts := make(map[string]*tensor.Tensor[T], len(c.bufNames)*len(names))
	for k := range c.bufNames {
		for i, n := range names {
			ts[c.tensorName(k, n)] = c.bufs[k][i]
		}
	}
	meta := map[string]string{
		Prefix + "type": c.kind,
		c.metaKey("lr"): strconv.FormatFloat(c.lr, 'g', -1, 64),
	}
	for i, n := range names {
		meta[c.metaKey("step."+n)] = strconv.FormatInt(c.steps[i], 10)
	}
	for _, h := range c.hyper {
		meta[c.metaKey(h[0])] = h[1]
	}
	return ts, meta, nil
}

// LoadStateDict restores the buffers, step counts and learning rate from a
// state returned by StateDict. Tensors whose names do not start with Prefix
// are ignored; metadata keys other than the type, lr and step counts are
// ignored (the hyperparameters stay as made). It returns an error naming the
// tensor or key when the state is of another kind of optimizer, a tensor is
// missing, extra or of the wrong shape, or a count is malformed; the
// optimizer is then unchanged.
func (c *core[T]) LoadStateDict(tensors map[string]*tensor.Tensor[T], meta map[string]string) error {
	names, err := c.names()
	if err != nil {
		return err
	}
	kind, ok := meta[Prefix+"type"]
	switch {
	case !ok:
		return fmt.Errorf("optim: %s state: no %q in the metadata", c.kind, Prefix+"type")
	case kind != c.kind:
		return fmt.Errorf("optim: %s state: the state is of a %q optimizer", c.kind, kind)
	}
	lrKey := c.metaKey("lr")
	lr, err := strconv.ParseFloat(meta[lrKey], 64)
	if err != nil || !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("optim: %s state: metadata %q = %q is not a learning rate", c.kind, lrKey, meta[lrKey])
	}
	steps := make([]int64, len(names))
	for i, n := range names {
		key := c.metaKey("step." + n)
		s, ok := meta[key]
		if !ok {
			return fmt.Errorf("optim: %s state: missing step count %q for parameter %q", c.kind, key, n)
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("optim: %s state: metadata %q = %q is not a step count", c.kind, key, s)
		}
		steps[i] = v
	}
	want := make(map[string]bool, len(c.bufNames)*len(names))
	for k := range c.bufNames {
		for i, n := range names {
			tn := c.tensorName(k, n)
			want[tn] = true
			t, ok := tensors[tn]
			if !ok || t == nil {
				return fmt.Errorf("optim: %s state: missing tensor %q", c.kind, tn)
			}
			if !t.SameShape(c.bufs[k][i]) {
				return fmt.Errorf("optim: %s state: tensor %q has shape %v, parameter %q has shape %v", c.kind, tn, t.Shape(), n, c.bufs[k][i].Shape())
			}
			if err := checkBuffer(c.bufNames[k], t.Data()); err != nil {
				return fmt.Errorf("optim: %s state: tensor %q: %v", c.kind, tn, err)
			}
		}
	}
	var extra []string
	for tn := range tensors {
		if strings.HasPrefix(tn, Prefix) && !want[tn] {
			extra = append(extra, tn)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("optim: %s state: unexpected tensor %q (%d unexpected in all); it names no buffer of this optimizer's parameters", c.kind, extra[0], len(extra))
	}
	for k := range c.bufNames {
		for i, n := range names {
			c.bufs[k][i].Copy(tensors[c.tensorName(k, n)])
		}
	}
	copy(c.steps, steps)
	c.lr = lr
	return nil
}

// checkBuffer reports the first element of an optimizer buffer that no
// run of the optimizer can produce: a NaN or infinity, or a negative
// value in a running average of squares (Adam's exp_avg_sq, RMSprop's
// square_avg), whose square root the step takes.
func checkBuffer[T tensor.Float](name string, data []T) error {
	squares := name == "exp_avg_sq" || name == "square_avg"
	for j, v := range data {
		x := float64(v)
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("element %d is %v", j, x)
		case squares && x < 0:
			return fmt.Errorf("element %d is %v, but a running average of squares is ≥ 0", j, x)
		}
	}
	return nil
}

func formatF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
