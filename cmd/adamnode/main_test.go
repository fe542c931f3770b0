package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadCommandLines checks that each bad command line exits with code 2
// and one line on standard error that names the problem.
func TestBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 8, 8)
	data := []string{"--dataset", "mnist", "--data", dir, "--out", t.TempDir()}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"train", "--model", "resnet"}, `unknown --model "resnet"`},
		{[]string{"train", "--dataset", "svhn"}, `unknown dataset "svhn"`},
		{[]string{"train", "--dataset", "mnist"}, "needs --data DIR"},
		{[]string{"train", "--dataset", "cifar10", "--data", filepath.Join(dir, "nope")}, "does not exist"},
		{[]string{"train", "--data", filepath.Join(dir, "missing")}, "does not exist"},
		{append([]string{"train", "--epochs", "0"}, data...), "--epochs must be at least 1"},
		{append([]string{"train", "--tol", "2"}, data...), "--tol must be in (0, 1)"},
		{append([]string{"train", "--tol", "NaN"}, data...), "--tol must be in (0, 1)"},
		{append([]string{"train", "--grad", "magic"}, data...), `unknown --grad "magic"`},
		{append([]string{"train", "--method", "rk4"}, data...), "not an explicit adaptive method"},
		{append([]string{"train", "--method", "rosenbrock23"}, data...), "not an explicit adaptive method"},
		{append([]string{"train", "--method", "bdf"}, data...), "not an explicit adaptive method"},
		{append([]string{"train", "--method", "nope"}, data...), `unknown --method "nope"`},
		{append([]string{"train", "--batch", "x"}, data...), "invalid value"},
		{append([]string{"train", "--batch", "-3"}, data...), "--batch must be at least 1"},
		{append([]string{"train", "--test-batch", "-1"}, data...), "--test-batch must be at least 1"},
		{append([]string{"train", "--lr", "-1"}, data...), "--lr must be positive"},
		{append([]string{"train", "--clip", "-1"}, data...), "--clip must be ≥ 0"},
		{append([]string{"train", "--subset", "-1"}, data...), "--subset"},
		{append([]string{"train", "--nhid-scale", "0"}, data...), "--nhid-scale must be positive"},
		{append([]string{"train", "--nhid", "-1"}, data...), "--nhid must be ≥ 0"},
		{append(append([]string{"train"}, data...), "--out", ""), "--out must name a directory"},
		{append([]string{"train", "--replicas", "2", "--distributed"}, data...), "cannot be combined"},
		{append([]string{"train", "--max-steps", "-1"}, data...), "--max-steps"},
		{append([]string{"train", "--device", "tpu"}, data...), "--device tpu: want cpu, cuda or cuda:N"},
		{append([]string{"train", "--device", "cuda:x"}, data...), "--device cuda:x"},
		{append([]string{"train", "--no-such-flag"}, data...), "flag provided but not defined"},
		{append([]string{"train", "extra"}, data...), `unexpected argument "extra"`},
		{append([]string{"compare", "--models", "node,foo"}, data...), `unknown model "foo"`},
		{append([]string{"compare", "--epochs", "-2"}, data...), "--epochs"},
	}
	for _, c := range cases {
		code, _, stderr := runCmd(c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, stderr)
			continue
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q does not mention %q", c.args, stderr, c.want)
		}
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasPrefix(stderr, "adamnode: ") {
			t.Errorf("%v: want one line starting \"adamnode: \", got %q", c.args, stderr)
		}
	}
	if code, stdout, _ := runCmd(); code != 2 || !strings.Contains(stdout, "usage:") {
		t.Errorf("no arguments: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := runCmd("train", "-h"); code != 0 || !strings.Contains(stdout, "-nhid-scale") {
		t.Errorf("train -h: exit %d, %q", code, stdout)
	}
}

// TestMissingFashionMNISTSaysHowToInstall checks the hint for Debian's
// package when the default directory is missing (skipped where it exists).
func TestMissingFashionMNISTSaysHowToInstall(t *testing.T) {
	s, _, err := parseTrain([]string{"--out", t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dataDir); err == nil {
		t.Skipf("%s exists", s.dataDir)
	}
	code, _, stderr := runCmd("train", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "apt-get install dataset-fashion-mnist") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestDataErrorNamesFile checks that a malformed data file is an error
// (exit 1) that names the file.
func TestDataErrorNamesFile(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 8, 8)
	bad := filepath.Join(dir, "train-labels-idx1-ubyte")
	if err := os.WriteFile(bad, []byte{0, 0, 8, 1, 0, 0, 0, 8, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd("train", "--dataset", "mnist", "--data", dir, "--out", t.TempDir(), "--quiet")
	if code != 1 || !strings.Contains(stderr, "train-labels-idx1-ubyte") {
		t.Errorf("exit %d, stderr %q: want 1 and the file's name", code, stderr)
	}
	writeIDX(t, dir, 8, 8) // good files again, then one missing
	if err := os.Remove(filepath.Join(dir, "t10k-images-idx3-ubyte")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd("train", "--dataset", "mnist", "--data", dir, "--out", t.TempDir(), "--quiet")
	if code != 1 || !strings.Contains(stderr, "t10k-images-idx3-ubyte") {
		t.Errorf("missing file: exit %d, stderr %q: want 1 and the file's name", code, stderr)
	}
}

// TestBadFlagsCreateNothing runs every subcommand with one bad flag and an
// output directory that does not exist yet: each must exit 2 and leave no
// directory behind.
func TestBadFlagsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 8, 8)
	data := []string{"--dataset", "mnist", "--data", dir}
	for _, args := range [][]string{
		{"trajectories", "--horizon", "inf"},
		{"trajectories", "--horizon", "-inf"},
		{"trajectories", "--horizon", "NaN"},
		{"trajectories", "--horizon", "-1"},
		{"trajectories", "--tol", "0"},
		{"trajectories", "--samples", "1"},
		{"silverbox", "--inits", "0"},
		{"silverbox", "--tol", "inf"},
		{"silverbox", "--steps", "1"},
		{"silverbox", "--setting", "other"},
		append([]string{"train", "--epochs", "0"}, data...),
		append([]string{"train", "--lr", "inf"}, data...),
		append([]string{"compare", "--models", "node,foo"}, data...),
		append([]string{"compare", "--tol", "NaN"}, data...),
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := runCmd(append(args, "--out", out)...)
		if code != 2 || strings.Contains(stderr, "not defined") {
			t.Errorf("%v: exit %d, want 2 for the bad value (stderr %q)", args, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: made the output directory %s", args, out)
		}
	}
}
