package train_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
)

// TestFitDirCheckedFirst: a Config.Dir that is missing is made (its
// parents too) and the run writes its files there; one that cannot be
// made (under a regular file, or a regular file itself) or is not
// writable is an error naming it before any batch is trained — not at
// the first checkpoint, an epoch later.
func TestFitDirCheckedFirst(t *testing.T) {
	fit := func(dir string) (batches int, err error) {
		task, _ := regression(9, 0, 1)
		cfg := train.Config{Name: "line", Dir: dir, Epochs: 1, Quiet: true, OnBatch: func(int, int) { batches++ }}
		_, err = train.Fit(context.Background(), cfg, task, optim.NewSGD(task.Params(), optim.SGDConfig{LR: 0.1}))
		return batches, err
	}
	missing := filepath.Join(t.TempDir(), "a", "b")
	if _, err := fit(missing); err != nil {
		t.Fatalf("a missing Dir: %v", err)
	}
	for _, f := range []string{"line.csv", "line.safetensors"} {
		if _, err := os.Stat(filepath.Join(missing, f)); err != nil {
			t.Errorf("a missing Dir: %v", err)
		}
	}
	if entries, _ := os.ReadDir(missing); len(entries) != 2 {
		t.Errorf("a missing Dir holds %d files after the run, want the CSV and the checkpoint only", len(entries))
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	type bad struct{ name, dir, says string }
	cases := []bad{
		{"under a regular file", filepath.Join(file, "sub"), "cannot make the directory"},
		{"a regular file", file, "cannot make the directory"},
	}
	switch {
	case os.Geteuid() != 0:
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		cases = append(cases, bad{"read-only", ro, "not writable"})
	case runtime.GOOS == "linux":
		// Root writes through a directory's mode: /proc takes no files.
		if f, err := os.CreateTemp("/proc", ".probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
		} else {
			cases = append(cases, bad{"read-only (/proc)", "/proc", "not writable"})
		}
	}
	for _, c := range cases {
		batches, err := fit(c.dir)
		if err == nil || !strings.Contains(err.Error(), "train line: Config.Dir "+strconv.Quote(c.dir)+": "+c.says) {
			t.Errorf("%s: %v, want an error saying Config.Dir %q %s", c.name, err, c.dir, c.says)
		}
		if batches != 0 {
			t.Errorf("%s: %d batches trained before the error, want none", c.name, batches)
		}
	}
	if len(cases) < 3 {
		t.Log("no read-only directory to try (root, and no /proc)")
	}
}
