package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoFromCleanCopy runs `make demo`, the README's set-up command, on
// small settings in a copy of the repository's tracked files, in a
// directory with nothing beside it: the demo must need nothing outside the
// repository and Debian's packages. It needs git, make and Debian's
// Fashion-MNIST (installed by .ci/run); without them it is skipped, except
// under CI.
func TestDemoFromCleanCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs the demo: not in -short")
	}
	need := func(what string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v", what, err)
		}
		t.Skipf("%s: %v", what, err)
	}
	_, err := exec.LookPath("make")
	need("make", err)
	_, err = os.Stat("/usr/share/datasets/fashion-mnist")
	need("Fashion-MNIST (apt-get install dataset-fashion-mnist)", err)
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	need("git checkout", err)
	root := strings.TrimSpace(string(top))
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	need("git ls-files", err)

	clone := filepath.Join(t.TempDir(), "adamnode")
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src := filepath.Join(root, f)
		b, err := os.ReadFile(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing beside the copy: whatever the demo reads comes from it or
	// from Debian's packages.
	if beside, err := os.ReadDir(filepath.Dir(clone)); err != nil || len(beside) != 1 {
		t.Fatalf("the copy is not alone in its directory: %v %v", beside, err)
	}

	cmd := exec.Command("make", "demo",
		"DEMO_COMPARE=--subset 32 --test-subset 32 --epochs 1 --batch 16 --nhid 4 --quiet",
		"DEMO_SILVERBOX=--inits 2 --steps 8",
		"DEMO_TRAJECTORIES=--samples 20 --tol 1e-5",
	)
	cmd.Dir = clone
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make demo in a clean copy: %v\n%s", err, out.String())
	}
	for _, f := range []string{
		"compare/table.md", "compare/loss.png",
		"silverbox/table.md", "silverbox/state_norm.png", "silverbox/h_norm.png",
		"trajectories/table.md", "trajectories/rosenbrock.png",
	} {
		if st, err := os.Stat(filepath.Join(clone, "out", "demo", f)); err != nil || st.Size() == 0 {
			t.Errorf("make demo did not write out/demo/%s: %v\n%s", f, err, out.String())
		}
	}
}
