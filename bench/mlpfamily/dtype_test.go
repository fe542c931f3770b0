package mlpfamily

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/tensor"
)

// TestConfigJSONDType: a configuration's JSON carries its dtype and reads
// back to the same configuration; a JSON without one (a file written before
// the axis) reads as float32.
func TestConfigJSONDType(t *testing.T) {
	for _, c := range []struct {
		dtype, wantJSON, wantElem string
	}{
		{"float32", `"dtype":"float32"`, "float32"},
		{"float64", `"dtype":"float64"`, "float64"},
		{"", `"dtype":""`, "float32"},
	} {
		in := Base().WithDType(c.dtype)
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.wantJSON) {
			t.Errorf("dtype %q: JSON %s lacks %s", c.dtype, b, c.wantJSON)
		}
		var out Config
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(in, out); d != "" {
			t.Errorf("dtype %q: round trip (-sent +read):\n%s", c.dtype, d)
		}
		if got := out.ElemType(); got != c.wantElem || out.Float64() != (c.wantElem == "float64") {
			t.Errorf("dtype %q: ElemType %q, Float64 %v; want %q", c.dtype, got, out.Float64(), c.wantElem)
		}
	}
	var old Config
	if err := json.Unmarshal([]byte(`{"name":"x","family":"node"}`), &old); err != nil || old.ElemType() != "float32" {
		t.Errorf("a JSON without a dtype reads as %q (%v), want float32", old.ElemType(), err)
	}
}

// TestDTypeOf: the names of the element types, and the builders refusing a
// type other than the configuration's.
func TestDTypeOf(t *testing.T) {
	if a, b := DTypeOf[float32](), DTypeOf[float64](); a != "float32" || b != "float64" {
		t.Errorf("DTypeOf: %q, %q", a, b)
	}
	c := small(Base())
	if _, err := NewOf[float64](c); err == nil || !strings.Contains(err.Error(), "dtype float32 built as float64") {
		t.Errorf("NewOf[float64] of a float32 configuration: %v", err)
	}
	if _, err := NewOf[float32](c.WithDType("float64")); err == nil {
		t.Error("NewOf[float32] of a float64 configuration: no error")
	}
}

// TestFloat64Trains: each family's base configuration in float64 trains:
// five steps, every loss finite and the last below the first, parameters
// and gradients finite.
func TestFloat64Trains(t *testing.T) {
	oneWorker(t)
	for _, fam := range Families {
		t.Run(fam, func(t *testing.T) {
			c := Base().WithDType("float64")
			c.Family, c.Batch = fam, 64
			p, err := NewOf[float64](c)
			if err != nil {
				t.Fatal(err)
			}
			var losses []float64
			for range 5 {
				st, err := p.Step()
				if err != nil {
					t.Fatal(err)
				}
				if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) || st.FwdNFE < 8 || st.BwdNFE <= 0 {
					t.Fatalf("step %d: %+v", len(losses), st)
				}
				losses = append(losses, st.Loss)
			}
			if !(losses[4] < losses[0]) {
				t.Errorf("losses %v: the last not below the first", losses)
			}
			for _, q := range p.Params {
				if !allFiniteOf(q.Value.Data()) || !allFiniteOf(q.Grad.Data()) {
					t.Errorf("parameter %s or its gradient not finite", q.Name)
				}
			}
		})
	}
}

// allFiniteOf reports whether every element of x is finite.
func allFiniteOf[T tensor.Float](x []T) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// copyInto gives q p's weights and data (float32 to float64 is exact).
func copyInto(q *ProblemOf[float64], p *Problem) {
	set := func(dst *tensor.Tensor[float64], src *tensor.Tensor[float32]) {
		copy(dst.Data(), widen(src.Data()))
	}
	for i := range p.Params {
		set(q.Params[i].Value, p.Params[i].Value)
	}
	set(q.H0, p.H0)
	set(q.M0, p.M0)
	set(q.Target, p.Target)
}

// maxPartErr returns the largest over the P parts of max |got − want| /
// max |want|.
func maxPartErr(got, want []float64, parts int) float64 {
	n := len(want) / parts
	worst := 0.0
	for k := range parts {
		var scale, diff float64
		for i := k * n; i < (k+1)*n; i++ {
			scale = math.Max(scale, math.Abs(want[i]))
			diff = math.Max(diff, math.Abs(got[i]-want[i]))
		}
		worst = math.Max(worst, diff/scale)
	}
	return worst
}

// TestFloat64RHS: for every family and activation, the float64 problem
// drawn from the seed holds the float32 one's numbers before rounding; at
// the same (float32) weights its right-hand side agrees with the float32
// one to float32 rounding (1e-5 of each part's largest value) and with the
// equations computed by hand to float64 rounding (1e-12), which a float32
// computation could not meet.
func TestFloat64RHS(t *testing.T) {
	oneWorker(t)
	for _, fam := range Families {
		for _, act := range Activations {
			c := Base()
			c.Family, c.Act, c.Batch, c.Width = fam, act, 7, 24
			c.Name = c.defaultName()
			p32, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			p64, err := NewOf[float64](c.WithDType("float64"))
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range p64.Params {
				for j, v := range q.Value.Data() {
					if float32(v) != p32.Params[i].Value.Data()[j] {
						t.Fatalf("%s: %s[%d] = %g in float64, %g in float32", c.Name, q.Name, j, v, p32.Params[i].Value.Data()[j])
					}
				}
			}
			copyInto(p64, p32)
			for _, tt := range []float64{0, 0.5} {
				got64, got32 := p64.RHS(tt).Data(), widen(p32.RHS(tt).Data())
				if e := maxPartErr(got32, got64, c.Parts()); !(e <= 1e-5) {
					t.Errorf("%s: t = %g: float32 F differs from float64 F by %.3g (relative)", c.Name, tt, e)
				}
				if e := maxPartErr(got64, rhsByHand(p64, tt), c.Parts()); !(e <= 1e-12) {
					t.Errorf("%s: t = %g: float64 F differs from the equations by %.3g (relative)", c.Name, tt, e)
				}
			}
		}
	}
}

// TestSaveLoadFloat64: a float64 problem's weights file holds F64 tensors,
// a float64 configuration and every digit of the reference loss, and loads
// back bit for bit as float64 only.
func TestSaveLoadFloat64(t *testing.T) {
	oneWorker(t)
	c := small(Base()).WithDType("float64")
	p, err := NewOf[float64](c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.safetensors")
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	s, err := layers.ReadSafetensorsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Tensors {
		if r.DType != layers.F64 {
			t.Errorf("tensor %s stored as %s, want F64", r.Name, r.DType)
		}
	}
	loss, _, err := p.ForwardLoss()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := strconv.ParseFloat(s.Metadata["check.loss"], 64); err != nil || got != loss {
		t.Errorf("check.loss %q (%v), want every digit of %v", s.Metadata["check.loss"], err, loss)
	}
	if got, err := ReadConfig(path); err != nil || cmp.Diff(c, got) != "" {
		t.Errorf("ReadConfig: %v; diff (-saved +read):\n%s", err, cmp.Diff(c, got))
	}
	q, err := LoadOf[float64](path)
	if err != nil {
		t.Fatal(err)
	}
	values := func(p *ProblemOf[float64]) map[string][]float64 {
		m := map[string][]float64{"h0": p.H0.Data(), "m0": p.M0.Data(), "target": p.Target.Data()}
		for _, q := range p.Params {
			m[q.Name] = q.Value.Data()
		}
		return m
	}
	if d := cmp.Diff(values(p), values(q)); d != "" {
		t.Errorf("values after the round trip (-saved +loaded):\n%s", d)
	}
	if _, err := Load(path); err == nil {
		t.Error("a float64 file loaded as float32: no error")
	}
}
