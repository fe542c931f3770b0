package data

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadIDX(t *testing.T) {
	imgs := idxImages(3, 4, 5, seqPix)
	lbls := idxLabels(7, 0, 9)
	for _, tc := range []struct {
		name       string
		imgs, lbls []byte
	}{
		{"plain", imgs, lbls},
		{"gzip", gz(imgs), gz(lbls)},
		{"mixed", imgs, gz(lbls)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadIDX(bytes.NewReader(tc.imgs), "i", bytes.NewReader(tc.lbls), "l", MNISTClasses)
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != 3 || d.C != 1 || d.H != 4 || d.W != 5 || d.Classes != 10 {
				t.Fatalf("got %d images of %dx%dx%d with %d classes, want 3 of 1x4x5 with 10",
					d.Len(), d.C, d.H, d.W, d.Classes)
			}
			if !slices.Equal(d.Labels, []int{7, 0, 9}) {
				t.Errorf("labels %v, want [7 0 9]", d.Labels)
			}
			for i := range 3 {
				for j, p := range d.Image(i) {
					if p != seqPix(i, j) {
						t.Fatalf("image %d pixel %d = %d, want %d", i, j, p, seqPix(i, j))
					}
				}
			}
			if err := d.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestReadIDXImagesEmpty(t *testing.T) {
	pix, h, w, err := ReadIDXImages(bytes.NewReader(idxImages(0, 28, 28, seqPix)), "empty")
	if err != nil || len(pix) != 0 || h != 28 || w != 28 {
		t.Fatalf("got %d pixels, %dx%d, %v; want 0, 28x28, nil", len(pix), h, w, err)
	}
}

func TestReadIDXImagesBad(t *testing.T) {
	good := idxImages(3, 28, 28, seqPix)
	payloadEnd := len(good)
	badCRC := gz(good)
	badCRC[len(badCRC)-8] ^= 0xff // the CRC-32 of the gzip trailer
	huge := idxImages(0, 28, 28, seqPix)
	copy(huge[4:], []byte{0xff, 0xff, 0xff, 0xff})
	many := idxImages(0, 1, 1, seqPix)
	copy(many[4:], []byte{0xff, 0xff, 0xff, 0xff})
	for _, tc := range []struct {
		name string
		file []byte
		want []string
	}{
		{"empty file", nil, []string{"byte offset 0:", "truncated header: 0 of 16 bytes"}},
		{"short header", good[:10], []string{"byte offset 10:", "truncated header: 10 of 16 bytes"}},
		{"label magic", idxLabels(1, 2), []string{"byte offset 0:", "bad magic 0x00000801, want 0x00000803", "this is a label file"}},
		{"wrong magic", cat([]byte{0xde, 0xad, 0xbe, 0xef}, good[4:]), []string{"byte offset 0:", "bad magic 0xdeadbeef"}},
		{"zero rows", cat(good[:8], []byte{0, 0, 0, 0}, good[12:]), []string{"byte offset 8:", "image size 0x28 has a zero dimension"}},
		{"truncated", good[:payloadEnd-5], []string{"byte offset 2363:", "truncated: 3 images of 28x28 need 2352 payload bytes", "file has 2347"}},
		{"huge count", huge, []string{"byte offset 4:", "header declares 4294967295 images of 28x28, too large"}},
		{"many images", many, []string{"byte offset 16:", "truncated: 4294967295 images of 1x1 need 4294967295 payload bytes", "file has 0"}},
		{"short magic", []byte{0, 0, 8}, []string{"byte offset 3:", "truncated header: 3 of 16 bytes"}},
		{"trailing", cat(good, []byte{1, 2}), []string{"byte offset 2368:", "unexpected data after the 3 images"}},
		{"gzip truncated", gz(good)[:40], []string{"corrupt or truncated gzip stream", "decompressed byte offset"}},
		{"gzip bad crc", badCRC, []string{"decompressed byte offset 2368:", "corrupt or truncated gzip stream", "checksum"}},
		{"gzip trailing", gz(cat(good, []byte{0})), []string{"decompressed byte offset 2368:", "unexpected data after the 3 images"}},
		{"gzip wrong magic", gz(idxLabels(1)), []string{"decompressed byte offset 0:", "bad magic 0x00000801"}},
		{"bad gzip header", []byte{0x1f, 0x8b, 0, 0}, []string{"byte offset 0:", "bad gzip header"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := ReadIDXImages(bytes.NewReader(tc.file), "imgs.idx")
			checkErr(t, err, append([]string{"data: imgs.idx"}, tc.want...)...)
		})
	}
}

func TestReadIDXLabelsBad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    []byte
		classes int
		want    []string
	}{
		{"out of range", idxLabels(0, 1, 12), 10, []string{"data: lbl: byte offset 10:", "label 12 of example 2 is out of range [0, 10)"}},
		{"out of range gzip", gz(idxLabels(0, 1, 12)), 10, []string{"data: lbl: decompressed byte offset 10:", "label 12"}},
		{"out of range 2 classes", idxLabels(0, 1, 2), 2, []string{"byte offset 10:", "label 2 of example 2 is out of range [0, 2)"}},
		{"image magic", idxImages(1, 2, 2, seqPix), 10, []string{"byte offset 0:", "bad magic 0x00000803, want 0x00000801", "this is an image file"}},
		{"truncated", idxLabels(1, 2, 3)[:10], 10, []string{"byte offset 10:", "truncated: 3 labels need 3 bytes", "file has 2"}},
		{"short header", idxLabels(1)[:5], 10, []string{"byte offset 5:", "truncated header: 5 of 8 bytes"}},
		{"trailing", cat(idxLabels(1, 2), []byte{3}), 10, []string{"byte offset 10:", "unexpected data after the 2 labels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadIDXLabels(bytes.NewReader(tc.file), "lbl", tc.classes)
			checkErr(t, err, tc.want...)
		})
	}
	if ls, err := ReadIDXLabels(bytes.NewReader(idxLabels(255, 0)), "lbl", 256); err != nil || !slices.Equal(ls, []int{255, 0}) {
		t.Errorf("256 classes: got %v, %v; want [255 0], nil", ls, err)
	}
	for _, classes := range []int{0, -1, 257} {
		if _, err := ReadIDXLabels(bytes.NewReader(idxLabels(0)), "lbl", classes); err == nil {
			t.Errorf("classes %d: no error", classes)
		}
	}
}

func TestReadIDXCountMismatch(t *testing.T) {
	imgs := idxImages(3, 2, 2, seqPix)
	_, err := ReadIDX(bytes.NewReader(imgs), "imgs", bytes.NewReader(idxLabels(1, 2)), "lbls", MNISTClasses)
	checkErr(t, err, "data: lbls: byte offset 4:", "holds 2 labels but imgs holds 3 images")
}

// TestLoadMNIST writes the four files under their standard names, some
// compressed and some not, with names that do not match their contents, and
// loads both splits.
func TestLoadMNIST(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "train-images-idx3-ubyte.gz", idxImages(4, 28, 28, seqPix)) // plain data under a .gz name
	writeFile(t, dir, "train-labels-idx1-ubyte", gz(idxLabels(1, 2, 3, 4)))       // gzip data under a plain name
	writeFile(t, dir, "t10k-images-idx3-ubyte", idxImages(2, 28, 28, seqPix))
	writeFile(t, dir, "t10k-labels-idx1-ubyte.gz", gz(idxLabels(9, 8)))
	for _, tc := range []struct {
		split  Split
		labels []int
	}{
		{Train, []int{1, 2, 3, 4}},
		{Test, []int{9, 8}},
	} {
		for name, load := range map[string]func(string, Split) (*Images, error){"MNIST": LoadMNIST, "Fashion-MNIST": LoadFashionMNIST} {
			d, err := load(dir, tc.split)
			if err != nil {
				t.Fatalf("%s %v: %v", name, tc.split, err)
			}
			if !slices.Equal(d.Labels, tc.labels) || d.H != 28 || d.W != 28 || len(d.Pixels) != len(tc.labels)*784 {
				t.Errorf("%s %v: %d labels %v of %dx%d, want %v of 28x28", name, tc.split, d.Len(), d.Labels, d.H, d.W, tc.labels)
			}
		}
	}

	// Wrong image size.
	small := t.TempDir()
	p := writeFile(t, small, "t10k-images-idx3-ubyte", idxImages(2, 27, 28, seqPix))
	writeFile(t, small, "t10k-labels-idx1-ubyte", idxLabels(0, 0))
	_, err := LoadMNIST(small, Test)
	checkErr(t, err, "data: "+p+": byte offset 8:", "images are 27x28, want 28x28 for MNIST")

	// Missing files.
	_, err = LoadMNIST(small, Train)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing files: error %v does not wrap fs.ErrNotExist", err)
	}
	_, err = LoadIDX(filepath.Join(small, "nope"), p, 10)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadIDX of a missing file: error %v does not wrap fs.ErrNotExist", err)
	}

	// A bad file is named by its path.
	bad := t.TempDir()
	p = writeFile(t, bad, "train-images-idx3-ubyte", idxImages(2, 28, 28, seqPix)[:100])
	writeFile(t, bad, "train-labels-idx1-ubyte", idxLabels(0, 0))
	_, err = LoadFashionMNIST(bad, Train)
	checkErr(t, err, "data: "+p+": byte offset 100:", "truncated")
}

// TestFashionMNIST reads the real dataset installed by Debian's
// dataset-fashion-mnist package.
func TestFashionMNIST(t *testing.T) {
	requireData(t, filepath.Join(FashionMNISTDir, "t10k-labels-idx1-ubyte.gz"))
	for _, tc := range []struct {
		split      Split
		n          int
		firstLabel []int // the first labels of the split, from the files
	}{
		{Train, 60000, []int{9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9}},
		{Test, 10000, []int{9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5}},
	} {
		t.Run(tc.split.String(), func(t *testing.T) {
			d, err := LoadFashionMNIST(FashionMNISTDir, tc.split)
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != tc.n || d.C != 1 || d.H != 28 || d.W != 28 || len(d.Pixels) != tc.n*784 {
				t.Fatalf("%d images of %dx%dx%d, %d pixels; want %d of 1x28x28", d.Len(), d.C, d.H, d.W, len(d.Pixels), tc.n)
			}
			for c, k := range d.ClassCounts() {
				if k != tc.n/10 {
					t.Errorf("class %d (%s) has %d images, want %d", c, FashionMNISTClassNames()[c], k, tc.n/10)
				}
			}
			if got := d.Labels[:len(tc.firstLabel)]; !slices.Equal(got, tc.firstLabel) {
				t.Errorf("first labels %v, want %v", got, tc.firstLabel)
			}
			if tc.split == Train {
				// Pixel sums computed independently from the file.
				var first, all int
				for _, p := range d.Image(0) {
					first += int(p)
				}
				for _, p := range d.Pixels {
					all += int(p)
				}
				if first != 76247 || all != 3431114169 {
					t.Errorf("pixel sums: first image %d, all %d; want 76247, 3431114169", first, all)
				}
			}
		})
	}
}

func TestFindFilePrefersGzip(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "x", nil)
	writeFile(t, dir, "x.gz", nil)
	p, err := findFile(dir, "x", "test")
	if err != nil || p != filepath.Join(dir, "x.gz") {
		t.Errorf("findFile = %q, %v; want x.gz", p, err)
	}
	os.Remove(filepath.Join(dir, "x.gz"))
	p, err = findFile(dir, "x", "test")
	if err != nil || p != filepath.Join(dir, "x") {
		t.Errorf("findFile = %q, %v; want x", p, err)
	}
}
