package data

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CIFAR-10 image size and class count.
const (
	CIFAR10Side     = 32 // images are CIFAR10Side x CIFAR10Side
	CIFAR10Channels = 3  // red, green, blue planes
	CIFAR10Classes  = 10 // labels are 0..9
)

// cifarRecord is the size of one record of a CIFAR-10 binary batch: a label
// byte, then the red, green and blue 32x32 planes, each row-major.
const cifarRecord = 1 + CIFAR10Channels*CIFAR10Side*CIFAR10Side

// CIFAR10ClassNames returns the names of the ten CIFAR-10 classes, by label.
func CIFAR10ClassNames() []string {
	return []string{"airplane", "automobile", "bird", "cat", "deer",
		"dog", "frog", "horse", "ship", "truck"}
}

// ReadCIFAR10 reads one CIFAR-10 binary batch file (data_batch_N.bin or
// test_batch.bin of the "binary version") from r: a sequence of 3073-byte
// records, each a label byte (0..9) followed by 3x32x32 channel-major pixels.
// A gzip-compressed batch (first bytes 1f 8b) is decompressed. name is used
// only in error messages; an empty file, a partial last record or a label
// above 9 is a *FormatError with the byte offset of the bad record.
func ReadCIFAR10(r io.Reader, name string) (*Images, error) {
	s, err := newSource(r, name)
	if err != nil {
		return nil, err
	}
	d := newCIFAR10(0)
	if err := readCIFAR10(s, d); err != nil {
		return nil, err
	}
	return d, nil
}

// newCIFAR10 returns an empty CIFAR-10 set with room for n images.
func newCIFAR10(n int) *Images {
	return &Images{
		Pixels: make([]uint8, 0, n*(cifarRecord-1)),
		Labels: make([]int, 0, n),
		C:      CIFAR10Channels, H: CIFAR10Side, W: CIFAR10Side, Classes: CIFAR10Classes,
	}
}

// readCIFAR10 appends the records of s to d.
func readCIFAR10(s *source, d *Images) error {
	var rec [cifarRecord]byte
	for first := d.Len(); ; {
		i := d.Len() - first
		start := s.off
		n, err := s.fill(rec[:])
		if errors.Is(err, io.EOF) {
			if n > 0 {
				return s.errorf(start, "truncated record %d: %d of %d bytes", i, n, cifarRecord)
			}
			if i == 0 {
				return s.errorf(0, "no records")
			}
			return nil
		}
		if err != nil {
			return s.wrap(err)
		}
		if rec[0] >= CIFAR10Classes {
			return s.errorf(start, "label %d of record %d is out of range [0, %d)", rec[0], i, CIFAR10Classes)
		}
		d.Labels = append(d.Labels, int(rec[0]))
		d.Pixels = append(d.Pixels, rec[1:]...)
	}
}

// LoadCIFAR10 reads the training part (data_batch_1.bin .. data_batch_5.bin,
// in that order) or the test part (test_batch.bin) of CIFAR-10 from dir. If
// the files are not in dir itself but in dir/cifar-10-batches-bin (where the
// binary tarball extracts to), that folder is used. A missing file is an
// error wrapping fs.ErrNotExist.
func LoadCIFAR10(dir string, split Split) (*Images, error) {
	var names []string
	switch split {
	case Train:
		for i := 1; i <= 5; i++ {
			names = append(names, fmt.Sprintf("data_batch_%d.bin", i))
		}
	case Test:
		names = []string{"test_batch.bin"}
	default:
		return nil, fmt.Errorf("data: CIFAR-10: unknown split %v", split)
	}
	if _, err := os.Stat(filepath.Join(dir, names[0])); errors.Is(err, fs.ErrNotExist) {
		sub := filepath.Join(dir, "cifar-10-batches-bin")
		if _, err := os.Stat(filepath.Join(sub, names[0])); err == nil {
			dir = sub
		}
	}
	// Reserve room for what the files hold when stored plain (a real
	// batch holds 10000 images), so the pixels are not copied as they grow.
	var total int64
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			total += fi.Size()
		}
	}
	d := newCIFAR10(int(min(total, maxPayload) / cifarRecord))
	for _, name := range names {
		if err := loadCIFAR10File(filepath.Join(dir, name), d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func loadCIFAR10File(path string, d *Images) error {
	f, err := openFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := newSource(f, path)
	if err != nil {
		return err
	}
	return readCIFAR10(s, d)
}
