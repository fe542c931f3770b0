package isa

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestFastest(t *testing.T) {
	all := features{true, true, true, true, true, true, true}
	without := func(f func(*features)) features {
		g := all
		f(&g)
		return g
	}
	for _, c := range []struct {
		name string
		f    features
		want Path
	}{
		{"x86-64-v4", all, AVX512},
		{"none", features{}, SSE2},
		{"no AVX2", without(func(f *features) { f.avx2 = false }), SSE2},
		{"no FMA", without(func(f *features) { f.fma = false }), SSE2},
		{"AVX2 and FMA only", features{avx2: true, fma: true}, AVX2},
		{"no AVX-512F", without(func(f *features) { f.avx512f = false }), AVX2},
		{"no AVX-512CD", without(func(f *features) { f.avx512cd = false }), AVX2},
		{"no AVX-512BW", without(func(f *features) { f.avx512bw = false }), AVX2},
		{"no AVX-512DQ", without(func(f *features) { f.avx512dq = false }), AVX2},
		{"no AVX-512VL", without(func(f *features) { f.avx512vl = false }), AVX2},
		{"AVX-512 without AVX2", without(func(f *features) { f.avx2 = false }), SSE2},
		{"AVX2 without FMA", features{avx2: true}, SSE2},
	} {
		if got := fastest(c.f); got != c.want {
			t.Errorf("%s: fastest = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		value string
		set   bool
		best  Path
		want  Path
		msg   string // a part of the message; "" for none
	}{
		{"", false, AVX512, AVX512, ""},
		{"", true, AVX2, AVX2, ""},
		{"  ", true, AVX2, AVX2, ""},
		{"avx512", true, AVX512, AVX512, ""},
		{"avx2", true, AVX512, AVX2, ""},
		{"generic", true, AVX512, Generic, ""},
		{"generic", true, AVX2, Generic, ""},
		{"generic", true, Generic, Generic, ""},
		{"sse2", true, AVX512, SSE2, ""},
		{"sse2", true, AVX2, SSE2, ""},
		{"SSE2", true, SSE2, SSE2, ""},
		{"generic", true, SSE2, Generic, ""},
		{"avx2", true, SSE2, SSE2, `ADAMNODE_CPU=avx2: this CPU does not run the avx2 kernels: they run sse2`},
		{"avx512", true, SSE2, SSE2, `does not run the avx512 kernels: they run sse2`},
		{"sse2", true, Generic, Generic, `ADAMNODE_CPU=sse2: this CPU does not run the sse2 kernels: they run generic`},
		{"sse2", true, NEON, NEON, `does not run the sse2 kernels: they run neon`},
		{"neon", true, SSE2, SSE2, `does not run the neon kernels: they run sse2`},
		{" AVX2\n", true, AVX512, AVX2, ""},
		{"Generic", true, AVX2, Generic, ""},
		{"avx2", true, AVX2, AVX2, ""},
		{"avx512", true, AVX2, AVX2, `ADAMNODE_CPU=avx512: this CPU does not run the avx512 kernels: they run avx2`},
		{"avx512", true, Generic, Generic, `this CPU does not run the avx512 kernels: they run generic`},
		{"avx2", true, Generic, Generic, `ADAMNODE_CPU=avx2: this CPU does not run the avx2 kernels: they run generic`},
		{"avx-2", true, AVX512, AVX512, `ADAMNODE_CPU="avx-2" is not a kernel path (avx512, avx2, sse2, neon or generic): the kernels run avx512, the fastest this CPU runs`},
		{"go", true, AVX2, AVX2, `"go" is not a kernel path`},
		{"sse4", true, Generic, Generic, `the kernels run generic`},
		{"neon", true, NEON, NEON, ""},
		{"generic", true, NEON, Generic, ""},
		{"neon", true, AVX512, AVX512, `ADAMNODE_CPU=neon: this CPU does not run the neon kernels: they run avx512`},
		{"avx2", true, NEON, NEON, `ADAMNODE_CPU=avx2: this CPU does not run the avx2 kernels: they run neon`},
		{"avx512", true, NEON, NEON, `does not run the avx512 kernels`},
		{"neon", true, Generic, Generic, `does not run the neon kernels: they run generic`},
	} {
		got, msg := decide(c.value, c.set, c.best, "this CPU")
		if got != c.want {
			t.Errorf("decide(%q, %v, %v) = %v, want %v", c.value, c.set, c.best, got, c.want)
		}
		if (msg == "") != (c.msg == "") || !strings.Contains(msg, c.msg) {
			t.Errorf("decide(%q, %v, %v) says %q, want a message containing %q", c.value, c.set, c.best, msg, c.msg)
		}
		if msg != "" && !strings.HasPrefix(msg, "adamnode: ADAMNODE_CPU=") {
			t.Errorf("decide(%q, %v, %v) says %q: not naming the variable first", c.value, c.set, c.best, msg)
		}
	}
}

// TestRuns: a path runs on a CPU whose fastest path is of its own
// architecture and no slower, or is Generic.
func TestRuns(t *testing.T) {
	all := []Path{Generic, SSE2, AVX2, AVX512, NEON}
	want := map[[2]Path]bool{
		{Generic, Generic}: true, {Generic, SSE2}: true, {Generic, AVX2}: true, {Generic, AVX512}: true, {Generic, NEON}: true,
		{SSE2, SSE2}: true, {SSE2, AVX2}: true, {SSE2, AVX512}: true,
		{AVX2, AVX2}: true, {AVX2, AVX512}: true, {AVX512, AVX512}: true, {NEON, NEON}: true,
	}
	for _, p := range all {
		for _, best := range all {
			if got := p.Runs(best); got != want[[2]Path{p, best}] {
				t.Errorf("%v.Runs(%v) = %v", p, best, got)
			}
		}
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct {
		p    Path
		want string
	}{
		{Generic, "generic"}, {SSE2, "sse2"}, {AVX2, "avx2"}, {AVX512, "avx512"}, {NEON, "neon"}, {NEON + 1, "isa.Path(5)"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("Path(%d).String() = %q, want %q", uint8(c.p), got, c.want)
		}
		if p, ok := parse(c.want); ok != (c.p <= NEON) || ok && p != c.p {
			t.Errorf("parse(%q) = %v, %v", c.want, p, ok)
		}
	}
}

// TestCurrent checks the decision against this process's ADAMNODE_CPU
// and the fastest path (the subprocess tests of package tensor check it
// at start-up, for each value).
func TestCurrent(t *testing.T) {
	v, set := os.LookupEnv(EnvVar)
	want, _ := decide(v, set, Best(), limit)
	if Current() != want {
		t.Errorf("Current() = %v with %s=%q and Best() = %v, want %v", Current(), EnvVar, v, Best(), want)
	}
	if !Current().Runs(Best()) {
		t.Errorf("Current() = %v is faster than Best() = %v", Current(), Best())
	}
}

// TestFromEnv: the start-up's decision reads ADAMNODE_CPU and prints a
// notice, one line, only for a value it cannot follow.
func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		want   Path
		notice bool
	}{
		{nil, Best(), false},
		{map[string]string{EnvVar: ""}, Best(), false},
		{map[string]string{EnvVar: "generic"}, Generic, false},
		{map[string]string{"OTHER": "generic"}, Best(), false},
		{map[string]string{EnvVar: "avx-2"}, Best(), true},
	} {
		var w bytes.Buffer
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		if got := fromEnv(lookup, &w); got != c.want {
			t.Errorf("%v: fromEnv = %v, want %v", c.env, got, c.want)
		}
		out := w.String()
		if c.notice != (out != "") || c.notice && (strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "adamnode: "+EnvVar)) {
			t.Errorf("%v: fromEnv printed %q; want a notice: %t", c.env, out, c.notice)
		}
	}
}
