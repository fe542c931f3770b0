// Package pngtest checks the PNG files that examples and commands write,
// for their tests.
package pngtest

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Check fails t unless path is a PNG image at least minW × minH pixels
// and the directory holds none of the temporary files (".name.tmp-…") the
// atomic write goes through.
func Check(t testing.TB, path string, minW, minH int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < minW || b.Dy() < minH {
		t.Errorf("%s is %v, want at least %d × %d", path, b, minW, minH)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp-*")); len(tmp) != 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}
