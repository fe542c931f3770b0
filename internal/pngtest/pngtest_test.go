package pngtest

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records whether the check failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }
func (r *recorder) Helper()               {}

// check runs Check on path and reports whether it failed.
func check(t *testing.T, path string, minW, minH int) (failed bool) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	Check(r, path, minW, minH)
	return r.failed
}

// TestCheck: a PNG of the size passes, one too small, a file that is not a
// PNG, a missing file and a leftover temporary file fail.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, w, h int) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.png", 40, 20)
	small := write("small.png", 10, 20)
	notPNG := filepath.Join(dir, "x.png")
	if err := os.WriteFile(notPNG, []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		fail bool
	}{{ok, false}, {small, true}, {notPNG, true}, {filepath.Join(dir, "missing.png"), true}} {
		if got := check(t, c.path, 40, 20); got != c.fail {
			t.Errorf("%s: failed %v, want %v", filepath.Base(c.path), got, c.fail)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".ok.png.tmp-1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !check(t, ok, 40, 20) {
		t.Error("a leftover temporary file passed")
	}
}
