package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
)

// IDX magic numbers: two zero bytes, the element type (0x08, unsigned byte)
// and the number of dimensions.
const (
	IDXImagesMagic = 0x00000803 // idx3-ubyte: N images of rows x cols bytes
	IDXLabelsMagic = 0x00000801 // idx1-ubyte: N label bytes
)

// MNIST and Fashion-MNIST image size and class count.
const (
	MNISTSide    = 28 // images are MNISTSide x MNISTSide, one channel
	MNISTClasses = 10 // labels are 0..9
)

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the four gzip-compressed Fashion-MNIST IDX files.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// maxPayload bounds the payload size a header may declare (64 GiB, less on
// 32-bit machines), so that size arithmetic cannot overflow.
const maxPayload = min(1<<36, math.MaxInt)

// ReadIDXImages reads an idx3-ubyte image file (magic 0x00000803) from r,
// plain or gzip-compressed (recognised by its first two bytes, 1f 8b). It
// returns the pixels of all images one after another, row-major, and the
// image height and width; the image count is len(pixels)/(rows*cols).
//
// name is used only in error messages. The header's dimensions must be
// positive and the payload exactly as long as they say: a short file or
// trailing bytes are errors (*FormatError) giving the byte offset.
func ReadIDXImages(r io.Reader, name string) (pixels []uint8, rows, cols int, err error) {
	s, err := newSource(r, name)
	if err != nil {
		return nil, 0, 0, err
	}
	return readIDXImages(s)
}

func readIDXImages(s *source) (pixels []uint8, rows, cols int, err error) {
	var hdr [16]byte
	if err := readHeader(s, hdr[:], IDXImagesMagic, "idx3-ubyte images"); err != nil {
		return nil, 0, 0, err
	}
	n := uint64(binary.BigEndian.Uint32(hdr[4:]))
	h := uint64(binary.BigEndian.Uint32(hdr[8:]))
	w := uint64(binary.BigEndian.Uint32(hdr[12:]))
	if h == 0 || w == 0 {
		return nil, 0, 0, s.errorf(8, "image size %dx%d has a zero dimension", h, w)
	}
	hi, size := bits.Mul64(n, h*w) // h*w < 2^64 since both < 2^32
	if hi != 0 || size > maxPayload {
		return nil, 0, 0, s.errorf(4, "header declares %d images of %dx%d, too large", n, h, w)
	}
	pixels, err = s.readN(int64(size))
	if errors.Is(err, io.EOF) {
		return nil, 0, 0, s.errorf(s.off, "truncated: %d images of %dx%d need %d payload bytes after the 16-byte header, file has %d",
			n, h, w, size, len(pixels))
	}
	if err != nil {
		return nil, 0, 0, s.wrap(err)
	}
	if err := s.expectEOF(fmt.Sprintf("the %d images", n)); err != nil {
		return nil, 0, 0, err
	}
	return pixels, int(h), int(w), nil
}

// ReadIDXLabels reads an idx1-ubyte label file (magic 0x00000801) from r,
// plain or gzip-compressed, and checks that every label is below classes
// (1 to 256). name is used only in error messages.
func ReadIDXLabels(r io.Reader, name string, classes int) ([]int, error) {
	if classes < 1 || classes > 256 {
		return nil, fmt.Errorf("data: %s: class count %d is not in 1..256", name, classes)
	}
	s, err := newSource(r, name)
	if err != nil {
		return nil, err
	}
	return readIDXLabels(s, classes)
}

func readIDXLabels(s *source, classes int) ([]int, error) {
	var hdr [8]byte
	if err := readHeader(s, hdr[:], IDXLabelsMagic, "idx1-ubyte labels"); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[4:]))
	raw, err := s.readN(n)
	if errors.Is(err, io.EOF) {
		return nil, s.errorf(s.off, "truncated: %d labels need %d bytes after the 8-byte header, file has %d", n, n, len(raw))
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	labels := make([]int, len(raw))
	for i, b := range raw {
		if int(b) >= classes {
			return nil, s.errorf(int64(len(hdr)+i), "label %d of example %d is out of range [0, %d)", b, i, classes)
		}
		labels[i] = int(b)
	}
	if err := s.expectEOF(fmt.Sprintf("the %d labels", n)); err != nil {
		return nil, err
	}
	return labels, nil
}

// readHeader fills hdr, an IDX header, checking its magic number as soon
// as it has been read. what describes the expected file.
func readHeader(s *source, hdr []byte, magic uint32, what string) error {
	n, err := s.fill(hdr[:4])
	if err == nil {
		if m := binary.BigEndian.Uint32(hdr); m != magic {
			e := s.errorf(0, "bad magic 0x%08x, want 0x%08x (%s)", m, magic, what)
			switch m {
			case IDXImagesMagic:
				e.Msg += "; this is an image file"
			case IDXLabelsMagic:
				e.Msg += "; this is a label file"
			}
			return e
		}
		var m int
		m, err = s.fill(hdr[4:])
		n += m
	}
	switch {
	case errors.Is(err, io.EOF):
		return s.errorf(int64(n), "truncated header: %d of %d bytes", n, len(hdr))
	case err != nil:
		return s.wrap(err)
	}
	return nil
}

// ReadIDX reads an image file and its label file (see ReadIDXImages and
// ReadIDXLabels) into one-channel Images and checks that they hold the same
// number of examples.
func ReadIDX(images io.Reader, imagesName string, labels io.Reader, labelsName string, classes int) (*Images, error) {
	pixels, rows, cols, err := ReadIDXImages(images, imagesName)
	if err != nil {
		return nil, err
	}
	ls, err := ReadIDXLabels(labels, labelsName, classes)
	if err != nil {
		return nil, err
	}
	if n := len(pixels) / (rows * cols); n != len(ls) {
		return nil, &FormatError{File: labelsName, Offset: 4,
			Msg: fmt.Sprintf("holds %d labels but %s holds %d images", len(ls), imagesName, n)}
	}
	return &Images{Pixels: pixels, Labels: ls, C: 1, H: rows, W: cols, Classes: classes}, nil
}

// LoadIDX reads the IDX image and label files at the given paths, each plain
// or gzip-compressed whatever its name. Errors name the file.
func LoadIDX(imagesPath, labelsPath string, classes int) (*Images, error) {
	fi, err := openFile(imagesPath)
	if err != nil {
		return nil, err
	}
	defer fi.Close()
	fl, err := openFile(labelsPath)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	return ReadIDX(fi, imagesPath, fl, labelsPath, classes)
}

// Split selects the training or the test part of a dataset.
type Split int

// The two parts of the datasets this package reads.
const (
	Train Split = iota
	Test
)

// String returns "train" or "test".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Test:
		return "test"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// LoadMNIST reads the training or test part of MNIST from dir, which holds
// the files under their standard names: train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte,
// each with or without a .gz suffix (the .gz name is tried first; either may
// hold plain or compressed data). Images must be 28x28 with labels 0..9.
// If a file is missing under both names the error wraps fs.ErrNotExist.
func LoadMNIST(dir string, split Split) (*Images, error) {
	return loadMNISTLike(dir, split, "MNIST")
}

// LoadFashionMNIST reads the training or test part of Fashion-MNIST from dir,
// under the same file names and with the same checks as LoadMNIST. Pass
// FashionMNISTDir for the files of Debian's dataset-fashion-mnist package.
// FashionMNISTClassNames names the ten labels.
func LoadFashionMNIST(dir string, split Split) (*Images, error) {
	return loadMNISTLike(dir, split, "Fashion-MNIST")
}

// FashionMNISTClassNames returns the names of the ten Fashion-MNIST classes, by
// label.
func FashionMNISTClassNames() []string {
	return []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
		"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}
}

func loadMNISTLike(dir string, split Split, dataset string) (*Images, error) {
	var prefix string
	switch split {
	case Train:
		prefix = "train"
	case Test:
		prefix = "t10k"
	default:
		return nil, fmt.Errorf("data: %s: unknown split %v", dataset, split)
	}
	imgPath, err := findFile(dir, prefix+"-images-idx3-ubyte", dataset)
	if err != nil {
		return nil, err
	}
	lblPath, err := findFile(dir, prefix+"-labels-idx1-ubyte", dataset)
	if err != nil {
		return nil, err
	}
	d, err := LoadIDX(imgPath, lblPath, MNISTClasses)
	if err != nil {
		return nil, err
	}
	if d.H != MNISTSide || d.W != MNISTSide {
		return nil, &FormatError{File: imgPath, Offset: 8,
			Msg: fmt.Sprintf("images are %dx%d, want %dx%d for %s", d.H, d.W, MNISTSide, MNISTSide, dataset)}
	}
	return d, nil
}

// findFile returns the path of base+".gz" or base in dir, whichever exists,
// preferring the .gz name.
func findFile(dir, base, dataset string) (string, error) {
	for _, name := range []string{base + ".gz", base} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("data: %w", err)
		}
	}
	return "", fmt.Errorf("data: %s: no %s or %s.gz in %s: %w", dataset, base, base, dir, fs.ErrNotExist)
}
