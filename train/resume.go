package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// resumeState is the state of a run that a checkpoint's metadata holds.
type resumeState struct {
	epoch    int          // epochs finished
	rows     []Row        // their CSV rows, one or two per epoch
	progress progressSums // of the next epoch, when the run was interrupted in it
}

// load loads the checkpoint into the model's parameters and the optimizer
// after checking that it belongs to this run and that everything in it is
// in range. found is false when there is no file. Nothing is loaded unless
// every check passes; the errors name the file and the field or tensor.
func (r *run[T, B]) load() (state resumeState, found bool, err error) {
	path := r.res.CheckpointPath
	if r.resumeFrom != "" {
		path = r.resumeFrom // rank 0's checkpoint, received (see shareCheckpoint)
	}
	if r.noCheckpoint {
		return resumeState{}, false, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return resumeState{}, false, nil
	}
	st, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		return resumeState{}, false, err
	}
	if st.Metadata["format"] != checkpointFormat {
		return resumeState{}, false, fmt.Errorf("%s is not a training checkpoint of package train (format %q)", path, st.Metadata["format"])
	}
	if got := st.Metadata["model"]; got != r.cfg.Name {
		return resumeState{}, false, &MismatchError{Msg: fmt.Sprintf("cannot resume %s: it holds model %s, not %s", path, got, r.cfg.Name)}
	}
	if r.cfg.CheckResume != nil {
		if err := r.cfg.CheckResume(path, st.Metadata); err != nil {
			return resumeState{}, false, err
		}
	}
	if err := checkModel(path, st, r.state()); err != nil {
		return resumeState{}, false, err
	}
	if state, err = r.checkMeta(path, st.Metadata); err != nil {
		return resumeState{}, false, err
	}
	if err := checkFiniteParams(path, st, r.state()); err != nil {
		return resumeState{}, false, err
	}
	if _, err = layers.LoadCheckpoint(path, r.state(), r.opt); err != nil {
		return resumeState{}, false, err
	}
	return state, true, nil
}

// checkModel returns a *MismatchError unless the checkpoint st holds the
// parameters and buffers params of the model (what SaveCheckpoint wrote of
// them: its tensors but the optimizer's), by name and shape, in any order:
// a checkpoint of another model. It names the first parameter, in the
// model's order, that the checkpoint lacks or holds in another shape,
// else the checkpoint's first tensor the model lacks; and the counts when
// they differ.
func checkModel[T tensor.Float](path string, st *layers.Safetensors, params []*autograd.Param[T]) error {
	saved := map[string][]int{}
	var extra []string // the checkpoint's tensors the model lacks, in order
	model := map[string]bool{}
	for _, p := range params {
		model[p.Name] = true
	}
	for _, t := range st.Tensors {
		if strings.HasPrefix(t.Name, layers.OptimPrefix) {
			continue
		}
		saved[t.Name] = t.Shape
		if !model[t.Name] {
			extra = append(extra, t.Name)
		}
	}
	e := &MismatchError{CheckpointParams: len(saved), ModelParams: len(params)}
	counts := ""
	if e.CheckpointParams != e.ModelParams {
		counts = fmt.Sprintf("it holds %s, the model has %d; ", plural(e.CheckpointParams, "parameter"), e.ModelParams)
	}
	for _, p := range params {
		shape, ok := saved[p.Name]
		switch {
		case !ok:
			e.Param, e.ModelShape = p.Name, slices.Clone(p.Value.Shape())
			e.Msg = fmt.Sprintf("cannot resume %s: it is a checkpoint of another model: %sthe model's parameter %q %v is not in it", path, counts, p.Name, e.ModelShape)
			if len(extra) > 0 {
				e.Msg += fmt.Sprintf(" (its first tensor the model lacks is %q %v)", extra[0], saved[extra[0]])
			}
			return e
		case !p.Value.HasShape(shape...):
			e.Param, e.CheckpointShape, e.ModelShape = p.Name, slices.Clone(shape), slices.Clone(p.Value.Shape())
			e.Msg = fmt.Sprintf("cannot resume %s: it is a checkpoint of another model: %sparameter %q has shape %v in it, %v in the model", path, counts, p.Name, shape, e.ModelShape)
			return e
		}
	}
	if len(extra) > 0 {
		e.Param, e.CheckpointShape = extra[0], slices.Clone(saved[extra[0]])
		e.Msg = fmt.Sprintf("cannot resume %s: it is a checkpoint of another model: %sits parameter %q %v is not the model's", path, counts, extra[0], e.CheckpointShape)
		return e
	}
	return nil
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// checkFiniteParams returns an error naming the file, the tensor and the
// element when a parameter's value in st is a NaN or infinite: no training
// step produces one (a step that would is an error), so the file is damaged.
// (layers.LoadParams itself loads any value, as safetensors files may hold
// them.) Tensors of the wrong dtype or shape are left to LoadCheckpoint.
func checkFiniteParams[T tensor.Float](path string, st *layers.Safetensors, params []*autograd.Param[T]) error {
	for _, p := range params {
		r, ok := st.Tensor(p.Name)
		if !ok {
			continue
		}
		x, err := layers.ConvertRaw[float64](r)
		if err != nil {
			continue // LoadCheckpoint names what is wrong
		}
		for j, v := range x.Data() {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return &layers.FileError{File: path, Tensor: p.Name, Msg: fmt.Sprintf("element %d is %v: a trained parameter is finite", j, f)}
			}
		}
	}
	return nil
}

// metaError is a metadata field of a checkpoint out of range.
func metaError(path, key, value, format string, args ...any) error {
	if len(value) > 60 {
		value = value[:57] + "..."
	}
	return fmt.Errorf("checkpoint %s: metadata %q = %q: %s", path, key, value, fmt.Sprintf(format, args...))
}

// finiteNonNeg reports whether v is a finite number ≥ 0.
func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// checkMeta parses and range-checks the training state in a checkpoint's
// metadata: the epochs finished (at most Config.Epochs), the batches done
// of the next one (at most an epoch's) and their sums, the CSV rows (two
// per finished epoch, in order, of this model, with losses, accuracies,
// NFEs and times in range), the parameter count and the optimizer's
// scalars (its type and hyperparameters those of the run's optimizer as
// made, its step counts at most the training iterations done).
func (r *run[T, B]) checkMeta(path string, meta map[string]string) (resumeState, error) {
	var st resumeState
	whole := func(key string) (int, error) {
		v, ok := meta[key]
		if !ok {
			return 0, fmt.Errorf("checkpoint %s: metadata %q is missing", path, key)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, metaError(path, key, v, "want a whole number ≥ 0")
		}
		return n, nil
	}
	var err error
	if st.epoch, err = whole("epoch"); err != nil {
		return st, err
	}
	if st.epoch > r.cfg.Epochs {
		return st, &MismatchError{Msg: fmt.Sprintf("cannot resume %s: its metadata \"epoch\" = %d epochs finished, more than the %d epochs asked for; ask for %d or more",
			path, st.epoch, r.cfg.Epochs, st.epoch)}
	}
	batch, err := whole("batch")
	if err != nil {
		return st, err
	}
	if batch > r.nb {
		return st, metaError(path, "batch", meta["batch"], "more than the %d batches of an epoch", r.nb)
	}
	if st.progress, err = r.checkProgress(path, meta, batch); err != nil {
		return st, err
	}
	if st.rows, err = r.checkRows(path, meta, st.epoch); err != nil {
		return st, err
	}
	n, err := whole("parameters")
	if err != nil {
		return st, err
	}
	if nparams := numel(r.task.Params()); n != nparams {
		return st, metaError(path, "parameters", meta["parameters"], "the model has %d", nparams)
	}
	return st, r.checkOptimMeta(path, meta, float64(st.epoch)*float64(r.nb)+float64(batch))
}

// checkProgress parses and range-checks the progress of the epoch under
// way (batch batches done) in a checkpoint's metadata.
func (r *run[T, B]) checkProgress(path string, meta map[string]string, batch int) (progressSums, error) {
	var p progressSums
	batchSize := math.MaxInt // unknown: a task's batches may be of any size
	if bs, ok := r.task.(interface{ batchSize() int }); ok {
		batchSize = bs.batchSize()
		if r.distributed() {
			batchSize *= r.cfg.Distributed.Size() // the global batch
		}
	}
	pv, ok := meta["progress"]
	if !ok {
		return p, fmt.Errorf("checkpoint %s: metadata %q is missing", path, "progress")
	}
	if err := decodeExact([]byte(pv), &p); err != nil {
		return p, metaError(path, "progress", pv, "%v", err)
	}
	badP := func(field string, v any, want string) error {
		return metaError(path, "progress", pv, "field %q = %v: %s", field, v, want)
	}
	switch {
	case p.Batches != batch:
		return p, badP("batches", p.Batches, fmt.Sprintf("want %d, the metadata \"batch\"", batch))
	case p.Seen < p.Batches || float64(p.Seen) > float64(p.Batches)*float64(batchSize):
		return p, badP("seen", p.Seen, fmt.Sprintf("want between %d and %d×%d (batches × batch size)", p.Batches, p.Batches, batchSize))
	case p.Correct < 0 || p.Correct > p.Seen:
		return p, badP("correct", p.Correct, fmt.Sprintf("want between 0 and %d (seen)", p.Seen))
	case !finiteNonNeg(p.LossSum) || p.Seen == 0 && p.LossSum != 0:
		return p, badP("loss_sum", p.LossSum, "want a finite number ≥ 0 (0 when no batch is done)")
	case p.FwdNFE < 0 || p.Seen == 0 && p.FwdNFE != 0:
		return p, badP("fwd_nfe", p.FwdNFE, "want a whole number ≥ 0 (0 when no batch is done)")
	case p.BwdNFE < 0 || p.Seen == 0 && p.BwdNFE != 0:
		return p, badP("bwd_nfe", p.BwdNFE, "want a whole number ≥ 0 (0 when no batch is done)")
	case !finiteNonNeg(p.Seconds):
		return p, badP("seconds", p.Seconds, "want a finite number ≥ 0")
	}
	return p, nil
}

// checkRows parses and range-checks the CSV rows of the epochs finished
// in a checkpoint's metadata: per epoch, a training row and, for an
// Evaluator, a test row, in order, of this model.
func (r *run[T, B]) checkRows(path string, meta map[string]string, epochs int) ([]Row, error) {
	rv, ok := meta["rows"]
	if !ok {
		return nil, fmt.Errorf("checkpoint %s: metadata %q is missing", path, "rows")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(rv), &raw); err != nil {
		return nil, metaError(path, "rows", rv, "%v", err)
	}
	splits := []string{"train"}
	if r.evaluates() {
		splits = append(splits, "test")
	}
	per := len(splits)
	if len(raw) != per*epochs {
		return nil, metaError(path, "rows", rv, "%d rows, want %d for each of the %d epochs of \"epoch\"", len(raw), per, epochs)
	}
	rows := make([]Row, len(raw))
	for i, b := range raw {
		row := &rows[i]
		if err := decodeExact(b, row); err != nil {
			return nil, metaError(path, "rows", rv, "row %d: %v", i+1, err)
		}
		split, epoch := splits[i%per], i/per+1
		bad := func(field string, v any, want string) error {
			return metaError(path, "rows", rv, "row %d (epoch %d, %s): field %q = %v: %s", i+1, epoch, split, field, v, want)
		}
		switch {
		case row.Model != r.cfg.Name:
			return nil, bad("model", strconv.Quote(row.Model), "want "+strconv.Quote(r.cfg.Name))
		case row.Split != split:
			return nil, bad("split", strconv.Quote(row.Split), "want "+strconv.Quote(split))
		case row.Epoch != epoch:
			return nil, bad("epoch", row.Epoch, fmt.Sprintf("want %d", epoch))
		case !finiteNonNeg(row.Loss):
			return nil, bad("loss", row.Loss, "want a finite number ≥ 0")
		case !(row.Accuracy >= 0 && row.Accuracy <= 1):
			return nil, bad("accuracy", row.Accuracy, "want a number in [0, 1]")
		case !finiteNonNeg(row.FwdNFE):
			return nil, bad("forward_nfe", row.FwdNFE, "want a finite number ≥ 0")
		case !finiteNonNeg(row.BwdNFE):
			return nil, bad("backward_nfe", row.BwdNFE, "want a finite number ≥ 0")
		case !finiteNonNeg(row.Seconds):
			return nil, bad("seconds", row.Seconds, "want a finite number ≥ 0")
		case !finiteNonNeg(row.Elapsed):
			return nil, bad("elapsed", row.Elapsed, "want a finite number ≥ 0")
		}
	}
	return rows, nil
}

// checkOptimMeta checks the optimizer's scalars in a checkpoint's
// metadata: its type and hyperparameters are those of the run's optimizer
// as made, and no parameter took more steps than iters.
func (r *run[T, B]) checkOptimMeta(path string, meta map[string]string, iters float64) error {
	_, want, err := r.opt.StateDict()
	if err != nil {
		return err
	}
	kind := want[optim.Prefix+"type"]
	stepPrefix := optim.Prefix + kind + ".step."
	for k, v := range meta {
		if !strings.HasPrefix(k, optim.Prefix) {
			continue
		}
		if _, ok := want[k]; !ok {
			return metaError(path, k, v, "not a key of this run's %s state", kind)
		}
	}
	for k, w := range want {
		v, ok := meta[k]
		switch {
		case !ok:
			return fmt.Errorf("checkpoint %s: metadata %q is missing", path, k)
		case strings.HasPrefix(k, stepPrefix):
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || float64(n) > iters {
				return metaError(path, k, v, "want a step count between 0 and %.0f, the training iterations done", iters)
			}
		case v != w:
			return metaError(path, k, v, "this run's %s has %s", kind, w)
		}
	}
	return nil
}

// decodeExact decodes the JSON object b into v, a pointer to a struct,
// requiring every field of the struct and no other.
func decodeExact(b []byte, v any) error {
	var got, fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		return err
	}
	if got == nil {
		return errors.New("want a JSON object")
	}
	all, err := json.Marshal(v) // v's zero value, with every field
	if err != nil {
		return err
	}
	if err := json.Unmarshal(all, &fields); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if _, ok := got[k]; !ok {
			return fmt.Errorf("field %q is missing", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := fields[k]; !ok {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	return json.Unmarshal(b, v)
}
