package layers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// OptimPrefix starts the name of every tensor and metadata key that belongs
// to an optimizer's state in a checkpoint (optim.adam.exp_avg.f.conv2.weight,
// optim.adam.step.f.conv2.weight, ...). Parameter names and user metadata
// keys must not start with it.
const OptimPrefix = "optim."

// Stateful is an object whose state is saved with the parameters in a
// checkpoint: the optimizers of package optim. StateDict returns its tensors
// and metadata, all named with OptimPrefix; LoadStateDict restores them,
// changing nothing on error.
type Stateful[T tensor.Float] interface {
	StateDict() (tensors map[string]*tensor.Tensor[T], meta map[string]string, err error)
	LoadStateDict(tensors map[string]*tensor.Tensor[T], meta map[string]string) error
}

// SaveParams writes params to a safetensors file at path, atomically, each
// tensor named by its Param.Name (a module path such as f.conv2.weight) and
// laid out in the order of params, with meta as the file's metadata. It is
// SaveCheckpoint without an optimizer.
func SaveParams[T tensor.Float](path string, params []*autograd.Param[T], meta map[string]string) error {
	return SaveCheckpoint[T](path, params, nil, meta)
}

// LoadParams reads the safetensors file at path into params: every
// parameter must be in the file under its name, with the dtype of T and the
// parameter's shape, and every tensor of the file must be a parameter, except
// optimizer state (names starting with OptimPrefix), which is ignored. It
// returns the file's metadata without the optimizer's keys. Nothing is
// changed unless everything fits. Errors are *FileError values naming the
// file and the tensor.
func LoadParams[T tensor.Float](path string, params []*autograd.Param[T]) (map[string]string, error) {
	return LoadCheckpoint[T](path, params, nil)
}

// SaveCheckpoint writes params and the state of opt (if not nil) to a
// safetensors file at path, atomically (see Safetensors.WriteFile). The
// parameters come first, in the order of params, each named by its
// Param.Name; then the optimizer's tensors, sorted by name. The file's
// metadata is meta merged with the optimizer's. Parameter names must be
// non-empty, unique and not start with OptimPrefix; meta's keys must not
// start with OptimPrefix.
func SaveCheckpoint[T tensor.Float](path string, params []*autograd.Param[T], opt Stateful[T], meta map[string]string) error {
	if err := checkParamNames(path, params); err != nil {
		return err
	}
	s := &Safetensors{Metadata: make(map[string]string, len(meta))}
	for k, v := range meta {
		if strings.HasPrefix(k, OptimPrefix) {
			return &FileError{File: path, Msg: fmt.Sprintf("metadata key %q: the prefix %q is reserved for optimizer state", k, OptimPrefix)}
		}
		s.Metadata[k] = v
	}
	for _, p := range params {
		s.Tensors = append(s.Tensors, RawFromTensor(p.Name, p.Value))
	}
	if opt != nil {
		ts, om, err := opt.StateDict()
		if err != nil {
			return &FileError{File: path, Msg: "optimizer state", Err: err}
		}
		names := make([]string, 0, len(ts))
		for n := range ts {
			if !strings.HasPrefix(n, OptimPrefix) {
				return &FileError{File: path, Tensor: n, Msg: fmt.Sprintf("optimizer state tensor lacks the prefix %q", OptimPrefix)}
			}
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			s.Tensors = append(s.Tensors, RawFromTensor(n, ts[n]))
		}
		for k, v := range om {
			if !strings.HasPrefix(k, OptimPrefix) {
				return &FileError{File: path, Msg: fmt.Sprintf("optimizer metadata key %q lacks the prefix %q", k, OptimPrefix)}
			}
			s.Metadata[k] = v
		}
	}
	if len(s.Metadata) == 0 {
		s.Metadata = nil
	}
	return s.WriteFile(path)
}

// LoadCheckpoint reads the safetensors file at path into params and, if opt
// is not nil, the optimizer state into opt. The parameters are checked as by
// LoadParams; the tensors and metadata keys starting with OptimPrefix go to
// opt.LoadStateDict (after a dtype check), which checks their names and
// shapes. It returns the file's metadata without the optimizer's keys.
// Nothing is changed unless everything fits. Errors are *FileError values
// naming the file and, when one is concerned, the tensor (an optimizer's
// error is wrapped).
func LoadCheckpoint[T tensor.Float](path string, params []*autograd.Param[T], opt Stateful[T]) (map[string]string, error) {
	return LoadCheckpointWith(path, params, opt, LoadOptions{})
}

// LoadCheckpointWith is LoadCheckpoint with options: refusing narrowing
// conversions, or skipping the file's tensors that are not parameters.
// Every floating-point tensor (F16, BF16, F32, F64) is converted to T.
func LoadCheckpointWith[T tensor.Float](path string, params []*autograd.Param[T], opt Stateful[T], lo LoadOptions) (map[string]string, error) {
	if err := checkParamNames(path, params); err != nil {
		return nil, err
	}
	s, err := ReadSafetensorsFile(path)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(s.Tensors)) // indices into s.Tensors: a file of many tensors is not copied again
	for i, t := range s.Tensors {
		byName[t.Name] = i
	}
	isParam := make(map[string]bool, len(params))
	for _, p := range params {
		isParam[p.Name] = true
		i, ok := byName[p.Name]
		if !ok {
			return nil, &FileError{File: path, Tensor: p.Name, Msg: "missing: the parameter is not in the file"}
		}
		t := s.Tensors[i]
		if err := checkConvertible[T](t.DType, lo); err != nil {
			return nil, &FileError{File: path, Tensor: p.Name, Msg: err.Error()}
		}
		if !p.Value.HasShape(t.Shape...) {
			return nil, &FileError{File: path, Tensor: p.Name, Msg: fmt.Sprintf("shape %v in the file, the parameter has shape %v", t.Shape, p.Value.Shape())}
		}
	}
	optTensors := make(map[string]*tensor.Tensor[T])
	for _, t := range s.Tensors {
		switch {
		case isParam[t.Name]:
		case strings.HasPrefix(t.Name, OptimPrefix):
			if opt == nil {
				continue
			}
			if err := checkConvertible[T](t.DType, lo); err != nil {
				return nil, &FileError{File: path, Tensor: t.Name, Msg: "optimizer state: " + err.Error()}
			}
			x := tensor.New[T](t.Shape...)
			decodeAs(x.Data(), t.DType, t.Data)
			optTensors[t.Name] = x
		case lo.IgnoreUnknown:
		default:
			return nil, &FileError{File: path, Tensor: t.Name, Msg: fmt.Sprintf("unexpected: not among the %d parameters loaded (LoadOptions.IgnoreUnknown skips such tensors)", len(params))}
		}
	}
	user := make(map[string]string)
	optMeta := make(map[string]string)
	for k, v := range s.Metadata {
		if strings.HasPrefix(k, OptimPrefix) {
			optMeta[k] = v
		} else {
			user[k] = v
		}
	}
	if opt != nil {
		if err := opt.LoadStateDict(optTensors, optMeta); err != nil {
			return nil, &FileError{File: path, Msg: "optimizer state", Err: err}
		}
	}
	for _, p := range params {
		t := s.Tensors[byName[p.Name]]
		decodeAs(p.Value.Data(), t.DType, t.Data)
	}
	return user, nil
}

// checkParamNames returns an error unless the parameters' names are
// non-empty, unique and free of OptimPrefix.
func checkParamNames[T tensor.Float](path string, params []*autograd.Param[T]) error {
	seen := make(map[string]bool, len(params))
	for i, p := range params {
		switch {
		case p == nil || p.Value == nil:
			return &FileError{File: path, Msg: fmt.Sprintf("parameter %d is nil or has no value", i)}
		case p.Name == "":
			return &FileError{File: path, Msg: fmt.Sprintf("parameter %d has no name", i)}
		case seen[p.Name]:
			return &FileError{File: path, Tensor: p.Name, Msg: "two parameters have this name"}
		case strings.HasPrefix(p.Name, OptimPrefix):
			return &FileError{File: path, Tensor: p.Name, Msg: fmt.Sprintf("parameter name starts with %q, which is reserved for optimizer state", OptimPrefix)}
		}
		seen[p.Name] = true
	}
	return nil
}
