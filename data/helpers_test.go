package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireData skips the test when path is missing, except under CI
// (CI=true), where the data must be installed and a missing file fails.
func requireData(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("data file missing under CI: %v", err)
		}
		t.Skipf("data file missing (not CI): %v", err)
	}
}

// idxImages returns an idx3-ubyte file of n images of h x w pixels, with
// pixel j of image i set to pix(i, j).
func idxImages(n, h, w int, pix func(i, j int) byte) []byte {
	b := make([]byte, 16, 16+n*h*w)
	binary.BigEndian.PutUint32(b[0:], IDXImagesMagic)
	binary.BigEndian.PutUint32(b[4:], uint32(n))
	binary.BigEndian.PutUint32(b[8:], uint32(h))
	binary.BigEndian.PutUint32(b[12:], uint32(w))
	for i := range n {
		for j := range h * w {
			b = append(b, pix(i, j))
		}
	}
	return b
}

// idxLabels returns an idx1-ubyte file holding labels.
func idxLabels(labels ...byte) []byte {
	b := make([]byte, 8, 8+len(labels))
	binary.BigEndian.PutUint32(b[0:], IDXLabelsMagic)
	binary.BigEndian.PutUint32(b[4:], uint32(len(labels)))
	return append(b, labels...)
}

// cifarRecords returns a CIFAR-10 batch holding one record per label, with
// pixel j of record i set to pix(i, j).
func cifarRecords(labels []byte, pix func(i, j int) byte) []byte {
	var b []byte
	for i, l := range labels {
		b = append(b, l)
		for j := range cifarRecord - 1 {
			b = append(b, pix(i, j))
		}
	}
	return b
}

// gz returns b gzip-compressed.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// cat returns the concatenation of its arguments in a new slice.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// writeFile writes b to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkErr fails unless err is a *FormatError whose message contains every
// one of want.
func checkErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("error %q (%T) is not a *FormatError", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// seqPix is a pixel pattern that differs between images and positions.
func seqPix(i, j int) byte { return byte(i*7 + j) }
