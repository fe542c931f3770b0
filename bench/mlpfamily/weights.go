package mlpfamily

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// Format is the value of the weights file's "format" metadata.
const Format = "adamnode-mlpfamily/1"

// The weights file (safetensors, every tensor in the run's dtype: F32 for
// float32, F64 for float64) holds
//
//	f.K.weight, f.K.bias   f's Linear layers, K their positions in the
//	                       Sequential (1, 3, 5, ...; position 0 is the time
//	                       concatenation), weight [out, in] as nn.Linear
//	gamma | r1, r2         the family's raw scalars [1] (HBNODE | AdamNODE)
//	h0, m0, target         [B, D]
//	check.rhs0             F(0, z0) at these weights, [P·B, D]
//	check.rhs_mid          F(T1/2, z0)
//
// and the metadata
//
//	format          Format
//	config          the Config as JSON (its dtype the tensors')
//	check.loss      the loss of a forward solve from z0 at these weights
//	                (9 significant digits in float32, all in float64)
//	check.fwd_nfe   that solve's number of evaluations
const (
	keyRHS0   = "check.rhs0"
	keyRHSMid = "check.rhs_mid"
)

// Save writes the problem's current weights, data, configuration and
// reference values (the right-hand side at z0 at t = 0 and T1/2, the loss
// and forward NFE of a forward solve) to a safetensors file at path.
func (p *ProblemOf[T]) Save(path string) error {
	loss, nfe, err := p.ForwardLoss()
	if err != nil {
		return fmt.Errorf("mlpfamily: %s: reference solve: %w", p.Config.Name, err)
	}
	cfg, err := json.Marshal(p.Config)
	if err != nil {
		return err
	}
	digits := 9 // float32's loss to float32 precision, as before the dtype axis
	if p.Config.Float64() {
		digits = -1 // every digit: nothing of a float64 loss rounded away
	}
	s := &layers.Safetensors{Metadata: map[string]string{
		"format":        Format,
		"config":        string(cfg),
		"check.loss":    strconv.FormatFloat(loss, 'g', digits, 64),
		"check.fwd_nfe": strconv.Itoa(nfe),
	}}
	for _, q := range p.Params {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(q.Name, q.Value))
	}
	s.Tensors = append(s.Tensors,
		layers.RawFromTensor("h0", p.H0),
		layers.RawFromTensor("m0", p.M0),
		layers.RawFromTensor("target", p.Target),
		layers.RawFromTensor(keyRHS0, p.RHS(0)),
		layers.RawFromTensor(keyRHSMid, p.RHS(p.Config.T1/2)),
	)
	return s.WriteFile(path)
}

// Load reads a float32 weights file written by Save (LoadOf[float32]).
func Load(path string) (*Problem, error) { return LoadOf[float32](path) }

// ReadConfig returns the configuration a weights file written by Save
// holds, so that a caller can pick the element type to load it in.
func ReadConfig(path string) (Config, error) {
	_, c, err := readFile(path)
	return c, err
}

// readFile reads a weights file and its configuration.
func readFile(path string) (*layers.Safetensors, Config, error) {
	var c Config
	s, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		return nil, c, err
	}
	if f := s.Metadata["format"]; f != Format {
		return nil, c, fmt.Errorf("mlpfamily: %s: format %q, want %q", path, f, Format)
	}
	if err := json.Unmarshal([]byte(s.Metadata["config"]), &c); err != nil {
		return nil, c, fmt.Errorf("mlpfamily: %s: config: %w", path, err)
	}
	return s, c, nil
}

// LoadOf reads a weights file written by Save and returns its problem in T,
// which must be the file's dtype, with the file's weights and data (the
// Adam state is fresh).
func LoadOf[T tensor.Float](path string) (*ProblemOf[T], error) {
	s, c, err := readFile(path)
	if err != nil {
		return nil, err
	}
	p, err := NewOf[T](c)
	if err != nil {
		return nil, fmt.Errorf("mlpfamily: %s: %w", path, err)
	}
	set := func(name string, dst *tensor.Tensor[T]) error {
		r, ok := s.Tensor(name)
		if !ok {
			return fmt.Errorf("mlpfamily: %s: no tensor %q", path, name)
		}
		t, err := layers.TensorFromRaw[T](r)
		if err != nil {
			return fmt.Errorf("mlpfamily: %s: tensor %q: %w", path, name, err)
		}
		if !slices.Equal(t.Shape(), dst.Shape()) {
			return fmt.Errorf("mlpfamily: %s: tensor %q has shape %v, want %v", path, name, t.Shape(), dst.Shape())
		}
		copy(dst.Data(), t.Data())
		return nil
	}
	for _, q := range p.Params {
		if err := set(q.Name, q.Value); err != nil {
			return nil, err
		}
	}
	for name, t := range map[string]*tensor.Tensor[T]{"h0": p.H0, "m0": p.M0, "target": p.Target} {
		if err := set(name, t); err != nil {
			return nil, err
		}
	}
	return p, nil
}
