package data

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// cifarPix gives each record, channel, row and column a distinct pattern, so
// that a layout mistake (channel-major versus pixel-major) shows.
func cifarPix(i, j int) byte {
	c, y, x := j/1024, j%1024/32, j%32
	return byte(i*31 + c*85 + y*3 + x)
}

// writeCIFAR10 writes the six batch files of CIFAR-10's binary version in
// dir, with perFile records in each, and returns the labels of the training
// files (in order) and of the test file.
func writeCIFAR10(t *testing.T, dir string, perFile int) (train, test []int) {
	t.Helper()
	names := []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}
	for f, name := range names {
		labels := make([]byte, perFile)
		for i := range labels {
			labels[i] = byte((f*perFile + i) % 10)
		}
		offset := f * perFile
		b := cifarRecords(labels, func(i, j int) byte { return cifarPix(offset+i, j) })
		if f == 2 {
			b = gz(b) // compressed data is recognised whatever the name
		}
		writeFile(t, dir, name, b)
		for _, l := range labels {
			if name == "test_batch.bin" {
				test = append(test, int(l))
			} else {
				train = append(train, int(l))
			}
		}
	}
	return train, test
}

func TestLoadCIFAR10(t *testing.T) {
	const perFile = 7
	root := t.TempDir()
	dir := filepath.Join(root, "cifar-10-batches-bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	train, test := writeCIFAR10(t, dir, perFile)
	for where, label := range map[string]string{dir: "batches-dir", root: "parent-dir"} {
		for _, tc := range []struct {
			split  Split
			labels []int
			first  int // index of the first record across all six files
		}{
			{Train, train, 0},
			{Test, test, 5 * perFile},
		} {
			t.Run(fmt.Sprintf("%s/%v", label, tc.split), func(t *testing.T) {
				d, err := LoadCIFAR10(where, tc.split)
				if err != nil {
					t.Fatal(err)
				}
				if d.C != 3 || d.H != 32 || d.W != 32 || d.Classes != 10 || len(d.Pixels) != len(tc.labels)*3072 {
					t.Fatalf("%d images of %dx%dx%d with %d classes, want %d of 3x32x32 with 10", d.Len(), d.C, d.H, d.W, d.Classes, len(tc.labels))
				}
				if !slices.Equal(d.Labels, tc.labels) {
					t.Errorf("labels %v, want %v", d.Labels, tc.labels)
				}
				for i := range d.Len() {
					for j, p := range d.Image(i) {
						if want := cifarPix(tc.first+i, j); p != want {
							t.Fatalf("image %d pixel %d = %d, want %d", i, j, p, want)
						}
					}
				}
			})
		}
	}

	os.Remove(filepath.Join(dir, "data_batch_4.bin"))
	if _, err := LoadCIFAR10(dir, Train); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing batch: error %v does not wrap fs.ErrNotExist", err)
	}
	p := writeFile(t, dir, "data_batch_4.bin", cifarRecords([]byte{1, 10}, cifarPix))
	_, err := LoadCIFAR10(dir, Train)
	checkErr(t, err, "data: "+p+": byte offset 3073:", "label 10 of record 1 is out of range [0, 10)")
}

func TestReadCIFAR10Bad(t *testing.T) {
	good := cifarRecords([]byte{3, 4, 5}, cifarPix)
	for _, tc := range []struct {
		name string
		file []byte
		want []string
	}{
		{"empty", nil, []string{"byte offset 0:", "no records"}},
		{"truncated", good[:len(good)-1], []string{"byte offset 6146:", "truncated record 2: 3072 of 3073 bytes"}},
		{"one byte", good[:1], []string{"byte offset 0:", "truncated record 0: 1 of 3073 bytes"}},
		{"label out of range", cat(good, cifarRecords([]byte{255}, cifarPix)), []string{"byte offset 9219:", "label 255 of record 3 is out of range [0, 10)"}},
		{"gzip truncated", gz(good)[:50], []string{"decompressed byte offset", "corrupt or truncated gzip stream"}},
		{"gzip label", gz(cifarRecords([]byte{1, 99}, cifarPix)), []string{"decompressed byte offset 3073:", "label 99 of record 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCIFAR10(bytes.NewReader(tc.file), "batch.bin")
			checkErr(t, err, append([]string{"data: batch.bin"}, tc.want...)...)
		})
	}
}
