package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	} {
		o := good
		c.mod(&o)
		if got := o.check(); (got == "") != (c.want == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: check = %q, want %q", o, got, c.want)
		}
	}
}

// TestProblem: -config builds the configuration and writes its weights
// into -out, which -load reads back; errors are returned.
func TestProblem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	const name = "adamnode_w64_l2_tanh_b128_adjoint"
	p, err := options{name: name, out: dir}.problem()
	if err != nil || p.Config.Name != name {
		t.Fatalf("problem: %v", err)
	}
	file := filepath.Join(dir, name+".safetensors")
	q, err := options{load: file}.problem()
	if err != nil || q.Config != p.Config {
		t.Fatalf("load: %v", err)
	}
	if p, err := (options{name: name}).problem(); err != nil || p == nil {
		t.Errorf("problem without -out: %v", err)
	}
	if _, err := (options{name: "nonesuch"}).problem(); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("unknown configuration: %v", err)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (options{name: name, out: filepath.Join(blocker, "sub")}).problem(); err == nil {
		t.Error("no error making -out under a file")
	}
}
