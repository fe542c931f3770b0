package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFile copies src to dst (tests only).
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRewritesCSV puts an output directory in the state a kill leaves
// between the checkpoint's rename and the CSV's (the checkpoint of epoch
// k, the CSV of epoch k−1 or none), then resumes: the CSV must come back
// complete, the rows of the checkpoint, even when the resumed run has
// nothing left to do or fails at once.
func TestResumeRewritesCSV(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 40, 20)
	base := []string{"train", "--model", "node"}
	// Reference runs: one epoch, and two.
	one, two := t.TempDir(), t.TempDir()
	if code, _, stderr := runCmd(append(append(base, "--epochs", "1"), tinyArgs(dir, one)...)...); code != 0 {
		t.Fatalf("one epoch: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(append(append(base, "--epochs", "2"), tinyArgs(dir, two)...)...); code != 0 {
		t.Fatalf("two epochs: exit %d: %s", code, stderr)
	}
	oneCSV, err := os.ReadFile(filepath.Join(one, "node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	twoCSV, err := os.ReadFile(filepath.Join(two, "node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		ckpt    string // the run whose checkpoint the directory holds
		csv     []byte // the CSV the kill left (nil: none)
		extra   []string
		code    int
		wantCSV []byte // the CSV after resuming
	}{
		{"final epoch, stale CSV", two, oneCSV, []string{"--epochs", "2"}, 0, twoCSV},
		{"final epoch, no CSV", two, nil, []string{"--epochs", "2"}, 0, twoCSV},
		{"only epoch, no CSV", one, nil, []string{"--epochs", "1"}, 0, oneCSV},
		// The resumed run fails in its first batch: the rows of the
		// checkpoint's epochs are on disk all the same.
		{"first of two, no CSV, resumed run fails", one, nil, []string{"--epochs", "2", "--max-steps", "1"}, 1, oneCSV},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			copyFile(t, filepath.Join(c.ckpt, "node.safetensors"), filepath.Join(out, "node.safetensors"))
			csvPath := filepath.Join(out, "node.csv")
			if c.csv != nil {
				if err := os.WriteFile(csvPath, c.csv, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runCmd(append(append(append(base, "--resume"), c.extra...), tinyArgs(dir, out)...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, stderr)
			}
			got, err := os.ReadFile(csvPath)
			if err != nil {
				t.Fatalf("no CSV after resuming: %v", err)
			}
			if !bytes.Equal(got, c.wantCSV) {
				t.Errorf("CSV after resuming:\n%s\nwant:\n%s", got, c.wantCSV)
			}
			if code == 0 && !strings.Contains(stdout, "wrote "+csvPath) {
				t.Errorf("stdout does not report the CSV:\n%s", stdout)
			}
		})
	}
}

// TestWroteOnlyWhatWasWritten checks that resuming a finished run, in train
// and in compare, does not claim to have written the checkpoint it only
// read.
func TestWroteOnlyWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, 40, 20)
	for _, base := range [][]string{
		{"train", "--model", "node", "--epochs", "1"},
		{"compare", "--models", "node", "--epochs", "1"},
	} {
		t.Run(base[0], func(t *testing.T) {
			out := t.TempDir()
			if code, _, stderr := runCmd(append(base, tinyArgs(dir, out)...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			ckpt := filepath.Join(out, "node.safetensors")
			before, err := os.Stat(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCmd(append(append(base, "--resume"), tinyArgs(dir, out)...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			after, err := os.Stat(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(before, after) {
				t.Fatal("resuming a finished run replaced the checkpoint")
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, "wrote ") && (strings.Contains(l, ckpt) || strings.Contains(l, "checkpoint")) &&
					!strings.Contains(l, "from its checkpoint") && !strings.Contains(l, "the rows the checkpoint holds") {
					t.Errorf("stdout claims the checkpoint was written: %q", l)
				}
			}
		})
	}
}
