package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/bench/mlpfamily"
	"github.com/adamnode/adamnode/tensor"
)

// TestCheck: each bad command line is named, a good one passes.
func TestCheck(t *testing.T) {
	good := options{name: "x", iters: 1, warmup: 1, reps: 1}
	for _, c := range []struct {
		mod  func(*options)
		want string
	}{
		{func(*options) {}, ""},
		{func(o *options) { o.iters = 0 }, "-iters and -warmup"},
		{func(o *options) { o.warmup = 0 }, "-iters and -warmup"},
		{func(o *options) { o.reps = 0 }, "-replicas"},
		{func(o *options) { o.solves = -1 }, "-shard-solve"},
		{func(o *options) { o.name, o.list = "", true }, ""},
		{func(o *options) { o.name = "" }, "give one of -config and -load"},
		{func(o *options) { o.load = "f" }, "give one of -config and -load"},
		{func(o *options) { o.save = true }, "-save-only needs"},
		{func(o *options) { o.save, o.out, o.name, o.load = true, "d", "", "f" }, "-save-only needs"},
		{func(o *options) { o.save, o.out = true, "d" }, ""},
		{func(o *options) { o.dtype = "float64" }, ""},
		{func(o *options) { o.dtype = "float32" }, ""},
		{func(o *options) { o.dtype = "float16" }, "-dtype"},
	} {
		o := good
		c.mod(&o)
		if got := o.check(); (got == "") != (c.want == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: check = %q, want %q", o, got, c.want)
		}
	}
}

// build is what runConfig does before timing: the configuration of o,
// then its problem in T.
func build[T tensor.Float](o options) (*mlpfamily.ProblemOf[T], error) {
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	return problem[T](o, c)
}

// TestProblem: -config builds the configuration and writes its weights
// into -out, which -load reads back; errors are returned.
func TestProblem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	const name = "adamnode_w64_l2_tanh_b128_adjoint"
	p, err := build[float32](options{name: name, out: dir})
	if err != nil || p.Config.Name != name {
		t.Fatalf("problem: %v", err)
	}
	file := filepath.Join(dir, name+".safetensors")
	q, err := build[float32](options{load: file})
	if err != nil || q.Config != p.Config {
		t.Fatalf("load: %v", err)
	}
	if p, err := build[float32](options{name: name}); err != nil || p == nil {
		t.Errorf("problem without -out: %v", err)
	}
	if _, err := build[float32](options{name: "nonesuch"}); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("unknown configuration: %v", err)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := build[float32](options{name: name, out: filepath.Join(blocker, "sub")}); err == nil {
		t.Error("no error making -out under a file")
	}
}

// TestDType: -dtype picks the configuration's element type, -load takes
// the file's and refuses another, and runConfig times a float64 problem
// and says so.
func TestDType(t *testing.T) {
	dir := t.TempDir()
	const name = "adamnode_w64_l2_tanh_b128_adjoint"
	file := filepath.Join(dir, name+".safetensors")
	one := options{iters: 1, warmup: 1, reps: 1}
	with := func(mod func(*options)) options {
		o := one
		mod(&o)
		return o
	}
	for _, c := range []struct {
		o       options
		want    string // the configuration's dtype
		wantErr string // what config's error says; "" for none
	}{
		{with(func(o *options) { o.name, o.save = name, true }), "float32", ""},
		{with(func(o *options) { o.name, o.dtype, o.save = name, "float32", true }), "float32", ""},
		{with(func(o *options) { o.name, o.dtype, o.out, o.save = name, "float64", dir, true }), "float64", ""},
		{with(func(o *options) { o.load = file }), "float64", ""},
		{with(func(o *options) { o.load, o.dtype = file, "float64" }), "float64", ""},
		{with(func(o *options) { o.load, o.dtype = file, "float32" }), "", "not -dtype float32"},
	} {
		got, err := c.o.config()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%+v: config error %v, want one saying %q", c.o, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.ElemType() != c.want {
			t.Errorf("%+v: config dtype %q (%v), want %q", c.o, got.ElemType(), err, c.want)
		}
		r, err := runConfig(c.o)
		switch {
		case err != nil || (r == nil) != c.o.save:
			t.Fatalf("%+v: runConfig = %+v, %v", c.o, r, err)
		case r != nil && (r.DType != c.want || !(r.LossFirst > 0) || r.FwdNFE == 0):
			t.Errorf("%+v: run %+v, want dtype %s, a loss and evaluations", c.o, r, c.want)
		}
	}
	if _, err := build[float32](options{load: file}); err == nil {
		t.Error("a float64 file loaded as float32: no error")
	}
}
