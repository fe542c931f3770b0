// Package peer is the Go side of the PyTorch comparisons of the examples
// hnn, rnode, cnf and gradpenalty (their PyTorch twins are
// bench/torch_hnn.py, bench/torch_rnode.py, bench/torch_cnf.py and
// bench/torch_gradpenalty.py; bench/compare_models.sh runs both sides):
//
//   - Write writes a check file: a model's initial parameters, its data, the
//     random draws of one training iteration and the loss and gradients Go
//     computes in that iteration; the PyTorch script loads it, runs its own
//     training loop for one iteration on the same numbers and compares.
//   - Compare checks Go's iteration against the reference the PyTorch
//     script wrote from such a file (kept in the example's testdata), so that
//     go test asserts that the two agree without PyTorch installed.
//   - Time times a training loop per iteration and returns the JSON line
//     the comparison script collects.
//
// Everything is float64: the checks ask for agreement to 1e-12.
package peer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	ag "github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// Tol is the agreement asked of a float64 check: the loss's relative error
// and each gradient's largest absolute error over its largest magnitude.
const Tol = 1e-12

// Draw is one random draw of a training iteration, as the PyTorch loop makes
// it: Kind is the torch function whose result it stands for ("randperm",
// "randn", "randn_like", "rand", "randint"), Value the numbers Go drew.
type Draw struct {
	Kind  string
	Value *tensor.Tensor[float64]
}

// Check is one model's first training iteration, as its example runs it,
// with the randomness drawn ahead.
type Check struct {
	Model  string
	Config map[string]any // sizes, tolerances, learning rate: the file's "config" (JSON)
	Params []*ag.Param[float64]
	Data   map[string]*tensor.Tensor[float64] // the training data, by the names the PyTorch script reads
	Draws  []Draw                             // the draws of the iteration, in the order the loop makes them
	// Run runs one training iteration and returns its losses; after it each
	// parameter's Grad holds the gradient of the iteration's last backward
	// pass (the loops zero the gradients before Backward, as PyTorch's).
	Run func() ([]float64, error)
}

// ParamsHash is the SHA-256 of the parameters' values, float64 little
// endian, in order: how a reference names the weights it was computed
// from (bench/models_peer.py computes the same).
func ParamsHash(ps []*ag.Param[float64]) string {
	h := sha256.New()
	var b [8]byte
	for _, p := range ps {
		for _, v := range p.Value.Data() {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Write runs c's iteration and writes the check file: the initial
// parameters (param.I, in order), the data, the draws (draw.I, their kinds
// in the metadata), Go's losses (go.losses) and last gradients (go.grad.I).
func Write(path string, c Check) error {
	cfg, err := json.Marshal(c.Config)
	if err != nil {
		return err
	}
	kinds := make([]string, len(c.Draws))
	for i, d := range c.Draws {
		kinds[i] = d.Kind
	}
	kj, _ := json.Marshal(kinds)
	s := &layers.Safetensors{Metadata: map[string]string{"model": c.Model, "config": string(cfg), "draws": string(kj),
		"params_sha256": ParamsHash(c.Params)}}
	for i, p := range c.Params {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(fmt.Sprintf("param.%d", i), p.Value))
	}
	names := make([]string, 0, len(c.Data))
	for n := range c.Data {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(n, c.Data[n]))
	}
	for i, d := range c.Draws {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(fmt.Sprintf("draw.%d", i), d.Value))
	}
	losses, err := c.Run()
	if err != nil {
		return err
	}
	s.Tensors = append(s.Tensors, layers.RawFromTensor("go.losses", tensor.FromSlice(losses, len(losses))))
	for i, p := range c.Params {
		s.Tensors = append(s.Tensors, layers.RawFromTensor(fmt.Sprintf("go.grad.%d", i), p.Grad))
	}
	return s.WriteFile(path)
}

// Result is a comparison of Go's iteration with a reference.
type Result struct {
	LossRelErr float64 // the largest over the iteration's losses
	GradRelErr float64 // the largest over the parameters
	Worst      int     // the parameter of GradRelErr
	Losses     []float64
}

// Compare runs c's iteration and compares it with the reference file ref
// written by the PyTorch script (torch.losses, torch.grad.I, and in the
// metadata the hash of the parameters it started from). A reference made
// from other weights is an error.
func Compare(ref string, c Check) (Result, error) {
	var r Result
	s, err := layers.ReadSafetensorsFile(ref)
	if err != nil {
		return r, err
	}
	if h := ParamsHash(c.Params); s.Metadata["params_sha256"] != h {
		return r, fmt.Errorf("%s was computed from other initial weights (sha256 %.12s…, these %.12s…): regenerate it (bench/compare_models.sh -u)",
			ref, s.Metadata["params_sha256"], h)
	}
	get := func(name string) (*tensor.Tensor[float64], error) {
		raw, ok := s.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("%s: no tensor %s", ref, name)
		}
		return layers.TensorFromRaw[float64](raw)
	}
	want, err := get("torch.losses")
	if err != nil {
		return r, err
	}
	if r.Losses, err = c.Run(); err != nil {
		return r, err
	}
	if len(r.Losses) != want.Len() {
		return r, fmt.Errorf("%d losses, the reference %d", len(r.Losses), want.Len())
	}
	for i, l := range r.Losses {
		r.LossRelErr = max(r.LossRelErr, math.Abs(l-want.Data()[i])/math.Abs(want.Data()[i]))
	}
	for i, p := range c.Params {
		g, err := get(fmt.Sprintf("torch.grad.%d", i))
		if err != nil {
			return r, err
		}
		if e := RelErr(p.Grad, g); e > r.GradRelErr || math.IsNaN(e) {
			r.GradRelErr, r.Worst = e, i
		}
	}
	return r, nil
}

// RelErr is max |a − b| / max |b|: a gradient's error relative to its scale.
func RelErr(a, b *tensor.Tensor[float64]) float64 {
	if a == nil || !a.SameShape(b) {
		return math.Inf(1)
	}
	var d, m float64
	for i, v := range b.Data() {
		d = max(d, math.Abs(a.Data()[i]-v))
		m = max(m, math.Abs(v))
	}
	if d == 0 {
		return 0
	}
	return d / m
}

// Timing is the JSON line of a timed run; bench/models_peer.py prints the
// same fields for PyTorch.
type Timing struct {
	Side        string  `json:"side"`
	Model       string  `json:"model"`
	Mode        string  `json:"mode"`
	Build       string  `json:"build"`        // the Go build: openblas or gonum
	IterSeconds float64 `json:"iter_seconds"` // the median over the chunks of a chunk's seconds per iteration
	SpreadPct   float64 `json:"spread_pct"`   // (slowest − fastest chunk) / median, %
	FwdNFE      float64 `json:"fwd_nfe"`      // per iteration, the means over the timed chunks
	BwdNFE      float64 `json:"bwd_nfe"`
	PeakRSSMB   float64 `json:"peak_rss_mb"` // VmHWM
	Threads     int     `json:"threads"`     // GOMAXPROCS
	Iters       int     `json:"iters"`       // per chunk
	Chunks      int     `json:"chunks"`
	LossFirst   float64 `json:"loss_first"`
	LossLast    float64 `json:"loss_last"`
}

// Time runs train for warmup iterations, then for chunks calls of iters
// iterations each, timing each call: train is the example's training loop
// as it runs (a fresh optimizer each call), on a data set of one batch.
// The blocks' NFE are averaged over the timed iterations.
func Time(model, mode string, warmup, chunks, iters int, train func(iters int) ([]float64, error), blocks ...*odeblock.Block[float64]) (Timing, error) {
	r := Timing{Side: "adamnode", Model: model, Mode: mode, Build: Build, Threads: runtime.GOMAXPROCS(0), Iters: iters, Chunks: chunks}
	if warmup > 0 {
		losses, err := train(warmup)
		if err != nil {
			return r, err
		}
		r.LossFirst = losses[0]
	}
	for _, b := range blocks {
		b.ResetStats()
	}
	secs := make([]float64, chunks)
	for i := range chunks {
		start := time.Now()
		losses, err := train(iters)
		if err != nil {
			return r, err
		}
		secs[i] = time.Since(start).Seconds() / float64(iters)
		if warmup == 0 && i == 0 {
			r.LossFirst = losses[0]
		}
		r.LossLast = losses[len(losses)-1]
	}
	for _, b := range blocks {
		st, _ := b.TotalStats()
		r.FwdNFE += float64(st.Forward.NFE) / float64(chunks*iters)
		r.BwdNFE += float64(st.Backward.NFE) / float64(chunks*iters)
	}
	slices.Sort(secs)
	r.IterSeconds = (secs[(chunks-1)/2] + secs[chunks/2]) / 2
	r.SpreadPct = 100 * (secs[chunks-1] - secs[0]) / r.IterSeconds
	r.PeakRSSMB = PeakRSSMB()
	return r, nil
}

// PeakRSSMB returns VmHWM from /proc/self/status in MiB (0 where there is
// none).
func PeakRSSMB() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// Print writes t as one JSON line on standard output.
func Print(t Timing) {
	b, _ := json.Marshal(t)
	fmt.Println(string(b))
}
