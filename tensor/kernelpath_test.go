package tensor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/adamnode/adamnode/tensor/internal/dgemm"
	"github.com/adamnode/adamnode/tensor/internal/isa"
	"github.com/adamnode/adamnode/tensor/internal/sgemm"
)

// childEnv marks a test binary that TestKernelPathForced started: its
// TestKernelPathFromEnv prints what it found on standard output.
const childEnv = "ADAMNODE_TEST_KERNELPATH_CHILD"

// kernelSites returns what each of this package's dispatch sites runs, as
// one line of name=value fields: every site follows the one decision of
// package isa.
func kernelSites() string {
	return fmt.Sprintf("kernelpath=%s vec=%s vec64=%s axpy=%s wino=%s sgemm=%t dgemm=%t",
		KernelPath(), vec.name, vec64.name, axpySite(), winoKern, sgemm.Enabled(), dgemm.Enabled())
}

// axpySite names the slice kernels that the dispatch flags select (the
// flags, not axpyKernels, which they are derived from), and fails on flags
// that contradict axpyKernels.
func axpySite() string {
	name := "go"
	switch {
	case axpy512 && axpyAVX:
		name = "avx512"
	case axpy512:
		name = "avx512 without the slice kernels"
	case axpyAVX:
		name = "avx2"
	}
	if name != axpyKernels {
		return name + "(axpyKernels=" + axpyKernels + ")"
	}
	return name
}

// wantSites returns kernelSites's line for the kernel path p ("*" would
// match any value): the GEMMs and the slice kernels have kernels on avx2
// and avx512 (axpy names which), and so do Winograd's transforms (wino),
// which have kernels on sse2 too.
func wantSites(p isa.Path) string {
	vecName := map[isa.Path]string{isa.Generic: "go", isa.SSE2: "go", isa.AVX2: "avx2", isa.AVX512: "avx512", isa.NEON: "neon"}[p]
	wino := map[isa.Path]string{isa.Generic: "go", isa.SSE2: "sse2", isa.AVX2: "avx2", isa.AVX512: "avx512", isa.NEON: "go"}[p]
	axpy := map[isa.Path]string{isa.Generic: "go", isa.SSE2: "go", isa.AVX2: "avx2", isa.AVX512: "avx512", isa.NEON: "go"}[p]
	gemm := fmt.Sprint(p != isa.Generic) // the GEMMs have kernels on every path but generic
	return fmt.Sprintf("kernelpath=%s vec=%s vec64=%s axpy=%s wino=%s sgemm=%s dgemm=%s",
		p, vecName, vecName, axpy, wino, gemm, gemm)
}

// sitesMatch reports whether the line got is the line want, whose fields
// "*" match any value.
func sitesMatch(got, want string) bool {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return false
	}
	for i := range w {
		k, v, _ := strings.Cut(w[i], "=")
		if g[i] != w[i] && (v != "*" || !strings.HasPrefix(g[i], k+"=")) {
			return false
		}
	}
	return true
}

// childSites returns the line of kernelSites in a child's output, "" if
// it printed none.
func childSites(out string) string {
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "kernelpath=") {
			return strings.TrimSuffix(l, "\n")
		}
	}
	return ""
}

// pathNames are the values of ADAMNODE_CPU, as the package doc lists them.
var pathNames = map[string]isa.Path{"generic": isa.Generic, "sse2": isa.SSE2, "avx2": isa.AVX2, "avx512": isa.AVX512, "neon": isa.NEON}

// followed returns the path that ADAMNODE_CPU naming p gives on a CPU
// whose fastest path is best: p where the CPU runs it, else best.
func followed(p, best isa.Path) isa.Path {
	if p.Runs(best) {
		return p
	}
	return best
}

// TestKernelPathFromEnv checks this process's kernel path against its
// ADAMNODE_CPU (make test runs the tests once more with each slower path
// forced): the path asked for, or the fastest this CPU runs where it
// cannot run that one; every dispatch site of the package following it.
// It fails when ADAMNODE_CPU names no path, so that a mistyped value does
// not pass for a forced run.
func TestKernelPathFromEnv(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		fmt.Println(kernelSites())
	}
	want := isa.Best()
	if v := strings.ToLower(strings.TrimSpace(os.Getenv(isa.EnvVar))); v != "" {
		p, ok := pathNames[v]
		if !ok {
			t.Fatalf("%s=%q names no kernel path: want avx512, avx2, sse2, neon or generic", isa.EnvVar, os.Getenv(isa.EnvVar))
		}
		want = followed(p, isa.Best())
	}
	if got, w := kernelSites(), wantSites(want); !sitesMatch(got, w) {
		t.Errorf("with %s=%q on a CPU whose fastest path is %v:\n got %s\nwant %s", isa.EnvVar, os.Getenv(isa.EnvVar), isa.Best(), got, w)
	}
	if a := isa.Best(); runtime.GOARCH == "arm64" && a != isa.NEON && a != isa.Generic ||
		runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" && a != isa.Generic {
		t.Errorf("GOARCH=%s: fastest path %v", runtime.GOARCH, a)
	}
}

// TestKernelPathForced starts this test binary again with ADAMNODE_CPU
// set to each path, and to values that cannot be followed, and checks
// the path chosen at start-up, where every dispatch site goes, and what
// the start-up says on standard error.
func TestKernelPathForced(t *testing.T) {
	best := isa.Best()
	type tc struct {
		value  string
		env    []string // more of the environment
		want   isa.Path
		notice string // a part of the message on stderr; "" for none
		fails  string // a part of TestKernelPathFromEnv's failure; "" when it passes
	}
	cases := []tc{
		{value: "", want: best},
		{value: "generic", want: isa.Generic},
		{value: "sse2", want: followed(isa.SSE2, best)},
		{value: "avx2", want: followed(isa.AVX2, best)},
		{value: "avx512", want: followed(isa.AVX512, best)},
		{value: "neon", want: followed(isa.NEON, best)},
		{value: " AVX2 ", want: followed(isa.AVX2, best)},
		{value: "avx-512", want: best, notice: `ADAMNODE_CPU="avx-512" is not a kernel path (avx512, avx2, sse2, neon or generic): the kernels run ` + best.String(),
			fails: `ADAMNODE_CPU="avx-512" names no kernel path`},
	}
	// A path this CPU does not run (on an AVX2-only CPU, on arm64, in the
	// purego build) gives the fastest it runs, and a notice.
	for i := range cases {
		if p, ok := pathNames[strings.TrimSpace(strings.ToLower(cases[i].value))]; ok && !p.Runs(best) {
			cases[i].notice = fmt.Sprintf("ADAMNODE_CPU=%s: ", cases[i].value)
		}
	}
	if best == isa.AVX512 && runtime.GOARCH == "amd64" {
		// A CPU without AVX-512, as golang.org/x/sys/cpu lets one pretend.
		cases = append(cases, tc{value: "avx512", env: []string{"GODEBUG=cpu.avx512f=off"}, want: isa.AVX2,
			notice: "ADAMNODE_CPU=avx512: this CPU does not run the avx512 kernels: they run avx2"})
	}
	for _, c := range cases {
		name := fmt.Sprintf("%q%v", c.value, c.env)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelPathFromEnv$", "-test.v", "-test.count=1")
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, isa.EnvVar+"=") || strings.HasPrefix(kv, "GODEBUG=")
		})
		cmd.Env = append(append(cmd.Env, childEnv+"=1", isa.EnvVar+"="+c.value), c.env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if errors.Is(err, syscall.ENOEXEC) {
			// Under user-mode emulation (qemu-aarch64-static through go
			// test -exec) without binfmt_misc, the test binary cannot
			// start itself: TestKernelPathFromEnv still checks this
			// process's path.
			t.Skipf("cannot start the test binary again (%v): emulated without binfmt_misc", err)
		}
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s: %v", name, err)
		}
		out := stdout.String()
		if got, want := childSites(out), wantSites(c.want); !sitesMatch(got, want) {
			t.Errorf("%s: the child printed\n%s\nwant the line %s", name, out, want)
		}
		if c.fails == "" && err != nil {
			t.Errorf("%s: the child failed (%v):\n%s\n%s", name, err, out, stderr.String())
		}
		if c.fails != "" && (err == nil || !strings.Contains(out, c.fails)) {
			t.Errorf("%s: the child ended with %v, printing\n%s\nwant a failure saying %q", name, err, out, c.fails)
		}
		// The notice, once, and nothing else (the test output is on stdout).
		notices := strings.Count(stderr.String(), "adamnode: ")
		if c.notice == "" && stderr.Len() > 0 {
			t.Errorf("%s: the child said on stderr %q, want nothing", name, stderr.String())
		}
		if c.notice != "" && (notices != 1 || !strings.Contains(stderr.String(), c.notice)) {
			t.Errorf("%s: the child said on stderr %q, want one notice containing %q", name, stderr.String(), c.notice)
		}
	}
}

func TestSitesMatch(t *testing.T) {
	for _, c := range []struct {
		got, want string
		match     bool
	}{
		{"a=1 b=2", "a=1 b=2", true},
		{"a=1 b=2", "a=1 b=*", true},
		{"a=1 b=2", "a=1 b=3", false},
		{"a=1 c=2", "a=1 b=*", false},
		{"a=1", "a=1 b=*", false},
		{"", "a=*", false},
	} {
		if got := sitesMatch(c.got, c.want); got != c.match {
			t.Errorf("sitesMatch(%q, %q) = %t", c.got, c.want, got)
		}
	}
}
