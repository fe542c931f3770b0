package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

func TestBelow(t *testing.T) {
	for _, c := range []struct {
		p    string
		want []string
	}{
		{"avx512", []string{"avx2", "sse2", "generic"}},
		{"avx2", []string{"sse2", "generic"}},
		{"sse2", []string{"generic"}},
		{"generic", []string{}},
	} {
		if got := below(c.p); !slices.Equal(got, c.want) {
			t.Errorf("below(%q) = %q, want %q", c.p, got, c.want)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"sse"`) {
			t.Errorf("below(\"sse\") panicked with %v, want a message naming the path", r)
		}
	}()
	below("sse")
}

func TestRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, tensor.KernelPath() + "\n"},
		{[]string{"-below"}, strings.Join(append(below(tensor.KernelPath()), ""), "\n")},
	} {
		var b bytes.Buffer
		if err := run(&b, c.args); err != nil || b.String() != c.want {
			t.Errorf("run(%q) printed %q, %v; want %q", c.args, b.String(), err, c.want)
		}
	}
	if err := run(new(bytes.Buffer), []string{"-x"}); err == nil {
		t.Error("run(-x): no error")
	}
}
