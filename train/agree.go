package train

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/tensor"
)

// Setting is one named value of a run's configuration that every rank of a
// data-parallel run must have alike (Config.Settings, Agree).
type Setting struct {
	Name  string // as its user knows it: "--lr", "Config.Epochs"
	Value string // as text: compared exactly
}

// SettingsError is the error Agree (and so Run) returns on every rank when
// the ranks were given different settings: the first setting, in rank 0's
// order, on which rank 0 and the first rank that differs from it disagree.
type SettingsError struct {
	Setting   string // the setting's name
	Rank      int    // the first rank whose settings differ from rank 0's
	RootValue string // rank 0's value ("" with RootHas false)
	Value     string // Rank's value ("" with Has false)
	// RootHas and Has report whether rank 0 and Rank have the setting at
	// all (ranks built from different code may not).
	RootHas, Has bool
}

// Error names the setting and both values.
func (e *SettingsError) Error() string {
	val := func(has bool, v string) string {
		if !has {
			return "not set"
		}
		return strconv.Quote(v)
	}
	return fmt.Sprintf("train: the ranks' settings differ: %s is %s on rank 0 but %s on rank %d (every rank must run with the same settings and data)",
		e.Setting, val(e.RootHas, e.RootValue), val(e.Has, e.Value), e.Rank)
}

// digestWords is the number of 32-bit words of a settings digest that the
// ranks exchange (128 bits of SHA-256): each travels exactly in a float64.
const digestWords = 4

// Agree checks that every rank of d was given the same settings, in the
// same order. Every rank calls it with its own, at the same point, before
// any other collective call whose shape depends on them; it returns nil on
// every rank, or the same *SettingsError on every rank, naming the first
// setting that differs and the values of rank 0 and of the first rank that
// differs. It costs one all-reduce of 4·Size+1 numbers (each rank's
// digest of its settings); only on a mismatch do rank 0 and that rank broadcast
// their settings in full. With no d, or one rank, it does nothing.
func Agree(d Distributed, settings []Setting) error {
	_, err := agree(d, settings, false)
	return err
}

// agree is Agree for a rank that may have failed to begin (failed): the
// ranks exchange that with their digests, and when any rank failed they
// compare nothing and every rank returns anyFailed (its own failure is
// more to the point than the settings it could not make alike).
func agree(d Distributed, settings []Setting, failed bool) (anyFailed bool, err error) {
	if d == nil || d.Size() <= 1 {
		return failed, nil
	}
	mine := encodeSettings(settings)
	sum := sha256.Sum256(mine)
	all := make([]float64, digestWords*d.Size()+1)
	for i := range digestWords {
		all[digestWords*d.Rank()+i] = float64(binary.LittleEndian.Uint32(sum[4*i:]))
	}
	all[len(all)-1] = flag(failed)
	if err := d.AllReduce(all); err != nil {
		return false, fmt.Errorf("train: agreeing on the settings: %w", err)
	}
	if all[len(all)-1] > 0 {
		return true, nil
	}
	differs := 0
	for r := 1; r < d.Size() && differs == 0; r++ {
		for i := range digestWords {
			if all[digestWords*r+i] != all[i] {
				differs = r
				break
			}
		}
	}
	if differs == 0 {
		return false, nil
	}
	root, err := broadcastBytes(d, mine, 0)
	if err != nil {
		return false, fmt.Errorf("train: agreeing on the settings: %w", err)
	}
	other, err := broadcastBytes(d, mine, differs)
	if err != nil {
		return false, fmt.Errorf("train: agreeing on the settings: %w", err)
	}
	rs, err0 := decodeSettings(root)
	ds, err1 := decodeSettings(other)
	if err := errors.Join(err0, err1); err != nil {
		return false, fmt.Errorf("train: agreeing on the settings: %w", err)
	}
	return false, settingsDiff(rs, ds, differs)
}

// settingsDiff returns the first difference between rank 0's settings
// root and rank's other: a setting of root that other lacks or has with
// another value, then one that only other has, then a difference of
// order.
func settingsDiff(root, other []Setting, rank int) *SettingsError {
	in := func(ss []Setting) map[string]string {
		m := make(map[string]string, len(ss))
		for _, s := range ss {
			if _, dup := m[s.Name]; !dup {
				m[s.Name] = s.Value
			}
		}
		return m
	}
	rm, om := in(root), in(other)
	for _, s := range root {
		if v, ok := om[s.Name]; !ok || v != rm[s.Name] {
			return &SettingsError{Setting: s.Name, Rank: rank, RootValue: rm[s.Name], RootHas: true, Value: v, Has: ok}
		}
	}
	for _, s := range other {
		if _, ok := rm[s.Name]; !ok {
			return &SettingsError{Setting: s.Name, Rank: rank, Value: s.Value, Has: true}
		}
	}
	for i := range min(len(root), len(other)) {
		if root[i] != other[i] {
			return &SettingsError{Setting: "the settings' order", Rank: rank, RootValue: root[i].Name, RootHas: true, Value: other[i].Name, Has: true}
		}
	}
	// Equal by name, value and order: a repeated name with another value.
	return &SettingsError{Setting: "the settings", Rank: rank, RootValue: fmt.Sprint(root), RootHas: true, Value: fmt.Sprint(other), Has: true}
}

// encodeSettings returns the settings as bytes: each name and value
// preceded by its length (a uvarint), so that no two lists encode alike.
func encodeSettings(settings []Setting) []byte {
	var b []byte
	for _, s := range settings {
		b = binary.AppendUvarint(b, uint64(len(s.Name)))
		b = append(b, s.Name...)
		b = binary.AppendUvarint(b, uint64(len(s.Value)))
		b = append(b, s.Value...)
	}
	return b
}

// decodeSettings is the inverse of encodeSettings.
func decodeSettings(b []byte) ([]Setting, error) {
	var out []Setting
	field := func() (string, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", errors.New("malformed settings from another rank")
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, nil
	}
	for len(b) > 0 {
		name, err := field()
		if err != nil {
			return nil, err
		}
		value, err := field()
		if err != nil {
			return nil, err
		}
		out = append(out, Setting{name, value})
	}
	return out, nil
}

// broadcastBytes returns root's b on every rank (b is read on root only):
// its length, then its bytes six to a float64 (exact below 2⁵³).
func broadcastBytes(d Distributed, b []byte, root int) ([]byte, error) {
	head := []float64{float64(len(b))}
	if err := d.Broadcast(head, root); err != nil {
		return nil, err
	}
	n := int(head[0])
	var buf []float64
	if d.Rank() == root {
		buf = packBytes(b)
	} else {
		buf = make([]float64, (n+5)/6)
	}
	if err := d.Broadcast(buf, root); err != nil {
		return nil, err
	}
	if d.Rank() == root {
		return b, nil
	}
	return unpackBytes(buf, n), nil
}

// packBytes packs b six bytes to a float64 (little-endian in each),
// exactly.
func packBytes(b []byte) []float64 {
	buf := make([]float64, (len(b)+5)/6)
	for i := range buf {
		var v uint64
		for j := range 6 {
			if k := 6*i + j; k < len(b) {
				v |= uint64(b[k]) << (8 * j)
			}
		}
		buf[i] = float64(v)
	}
	return buf
}

// unpackBytes returns the n bytes packed into buf by packBytes.
func unpackBytes(buf []float64, n int) []byte {
	b := make([]byte, n)
	for i, f := range buf {
		v := uint64(f)
		for j := range 6 {
			if k := 6*i + j; k < n {
				b[k] = byte(v >> (8 * j))
			}
		}
	}
	return b
}

// runSettings returns what Fit has every rank agree on: cfg.Settings,
// then Fit's own settings that change what is trained (the Config's
// epochs, clipping, name and resuming), the task's (Run's: the loaders'
// sizes, batch sizes and the training shuffle of epoch 0, which a loader's
// seed fixes, and the model's size; another task's: its batches per epoch
// and its parameters' size) and the optimizer's kind and hyperparameters.
// The Backend is left out: it changes only the rounding of each rank's
// gradients, which are averaged before every rank takes the same step.
func runSettings[T tensor.Float, B any](cfg Config, task Task[T, B], opt optim.Optimizer[T]) []Setting {
	s := append([]Setting(nil), cfg.Settings...)
	add := func(name string, format string, args ...any) {
		s = append(s, Setting{name, fmt.Sprintf(format, args...)})
	}
	add("Config.Name", "%s", cfg.Name)
	add("Config.Epochs", "%d", cfg.Epochs)
	add("Config.Clip", "%s", strconv.FormatFloat(cfg.Clip, 'g', -1, 64))
	add("Config.Resume", "%t", cfg.Resume)
	add("Config.Dir given", "%t", cfg.Dir != "")
	add("Config.SkipNonFinite", "%t", cfg.SkipNonFinite)
	if c, ok := any(task).(classifier[T]); ok {
		s = c.settings(s)
	} else if !isNil(task) {
		add("training batches per epoch", "%d", task.NumBatches())
		ps := task.Params()
		add("model parameters", "%d tensors of %d numbers", len(ps), numel(ps))
	}
	if !isNil(opt) {
		// The kind, learning rate and hyperparameters, from the state's
		// metadata (its step counts left out).
		_, meta, err := opt.StateDict()
		if err != nil {
			meta = map[string]string{optim.Prefix + "type": fmt.Sprintf("%T", opt), "lr": strconv.FormatFloat(opt.LR(), 'g', -1, 64)}
		}
		add("optimizer", "%s", meta[optim.Prefix+"type"])
		var keys []string
		for k := range meta {
			if k != optim.Prefix+"type" && !strings.Contains(k, ".step.") {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			add("optimizer "+strings.TrimPrefix(k, optim.Prefix), "%s", meta[k])
		}
	}
	return s
}

// settings appends the loaders' and the model's settings to s.
func (c classifier[T]) settings(s []Setting) []Setting {
	add := func(name string, format string, args ...any) {
		s = append(s, Setting{name, fmt.Sprintf(format, args...)})
	}
	if tr := c.tr; !isNil(tr) {
		add("training images", "%d", tr.Len())
		add("training batch per rank", "%d", tr.BatchSize())
		if full, err := tr.WithShard(0, 1); err == nil {
			order := full.Order(0)
			b := make([]byte, 0, 8*len(order))
			for _, i := range order {
				b = binary.LittleEndian.AppendUint64(b, uint64(i))
			}
			sum := sha256.Sum256(b)
			add("training order of epoch 0 (the loader's seed)", "%x", sum[:8])
		}
	}
	if te := c.te; !isNil(te) {
		add("test images", "%d", te.Len())
		add("test batch", "%d", te.BatchSize())
	}
	if !isNil(c.m) {
		ps := c.m.Params()
		add("model parameters", "%d tensors of %d numbers", len(ps), numel(ps))
	}
	return s
}
