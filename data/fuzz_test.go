package data

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// The fuzz targets feed arbitrary bytes to each reader. A reader must not
// panic; it either fails with a *FormatError that names the file and a
// position, or succeeds with consistent results, which for plain (not gzip)
// input must re-encode to exactly the bytes read.

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == gzipID1 && b[1] == gzipID2 }

// checkFuzzErr fails unless err is a *FormatError naming file and a position.
func checkFuzzErr(t *testing.T, err error, file string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %q (%T) is not a *FormatError", err, err)
	}
	if fe.File != file || !strings.HasPrefix(err.Error(), "data: "+file) {
		t.Fatalf("error %q does not name %s", err, file)
	}
	if fe.Offset < 0 && fe.Line <= 0 {
		t.Fatalf("error %q has no position", err)
	}
}

func FuzzIDXImages(f *testing.F) {
	good := idxImages(3, 2, 5, seqPix)
	for _, b := range [][]byte{
		good, gz(good), idxImages(0, 28, 28, seqPix), idxImages(1, 28, 28, seqPix),
		good[:20], good[:16], good[:3], cat(good, []byte{0}), idxLabels(1, 2, 3), gz(good)[:30], nil,
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pix, rows, cols, err := ReadIDXImages(bytes.NewReader(b), "fuzz.idx")
		if err != nil {
			checkFuzzErr(t, err, "fuzz.idx")
			return
		}
		if rows <= 0 || cols <= 0 || len(pix)%(rows*cols) != 0 {
			t.Fatalf("%d pixels of %dx%d images", len(pix), rows, cols)
		}
		if !isGzip(b) {
			if re := idxImages(len(pix)/(rows*cols), rows, cols, func(i, j int) byte { return pix[i*rows*cols+j] }); !bytes.Equal(re, b) {
				t.Fatalf("re-encoding differs from the input")
			}
		}
	})
}

func FuzzIDXLabels(f *testing.F) {
	good := idxLabels(0, 9, 3, 4)
	for _, b := range [][]byte{good, gz(good), idxLabels(), idxLabels(10), good[:9], cat(good, []byte{1}), idxImages(1, 1, 1, seqPix), nil} {
		f.Add(b, uint8(9))
	}
	f.Add(idxLabels(255), uint8(255))
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		classes := int(c) + 1
		labels, err := ReadIDXLabels(bytes.NewReader(b), "fuzz.idx", classes)
		if err != nil {
			checkFuzzErr(t, err, "fuzz.idx")
			return
		}
		raw := make([]byte, len(labels))
		for i, l := range labels {
			if l < 0 || l >= classes {
				t.Fatalf("label %d outside [0, %d)", l, classes)
			}
			raw[i] = byte(l)
		}
		if !isGzip(b) && !bytes.Equal(idxLabels(raw...), b) {
			t.Fatalf("re-encoding differs from the input")
		}
	})
}

func FuzzCIFAR10(f *testing.F) {
	good := cifarRecords([]byte{1, 9}, cifarPix)
	for _, b := range [][]byte{good, gz(good), good[:3073], good[:100], cifarRecords([]byte{10}, cifarPix), {5}, nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ReadCIFAR10(bytes.NewReader(b), "fuzz.bin")
		if err != nil {
			checkFuzzErr(t, err, "fuzz.bin")
			return
		}
		if err := d.Validate(); err != nil || d.Len() == 0 || d.C != 3 || d.H != 32 || d.W != 32 {
			t.Fatalf("%d images of %dx%dx%d: %v", d.Len(), d.C, d.H, d.W, err)
		}
		if !isGzip(b) {
			raw := make([]byte, d.Len())
			for i, l := range d.Labels {
				raw[i] = byte(l)
			}
			if re := cifarRecords(raw, func(i, j int) byte { return d.Image(i)[j] }); !bytes.Equal(re, b) {
				t.Fatalf("re-encoding differs from the input")
			}
		}
	})
}

func FuzzSilverbox(f *testing.F) {
	for _, s := range []string{
		"\"V1\",\"V2\",\n0.0057756,0.0093978,\n0.0066102,0.012971,\n0.0096732,-0.0072247,",
		"V1,V2\n1,2\n", "V1,V2,\r\n1e3,-2.5e-3,\r\n", "\"V1\",\"V2\",\n", "", "V1,V2,\n1,x,\n",
		"V1,V2,\n,\n", "V1,V2,\n1,2,3\n", "V1,V2,\n\n1,2,\n", "V1,V2,\n1e308,-1e308,\n1e308,1,\n", "\"V1\",\"V2\",\n0x1p-2,Inf,", "V1,V2\n1e308,0\n-1e308,0\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Add(gz([]byte("V1,V2,\n1,2,\n")), true)
	f.Fuzz(func(t *testing.T, b []byte, reference bool) {
		var opts SilverboxOptions
		if reference {
			opts = SilverboxReference()
		}
		sb, err := ReadSilverbox(bytes.NewReader(b), "fuzz.csv", opts)
		if err != nil {
			checkFuzzErr(t, err, "fuzz.csv")
			return
		}
		if sb.Len() == 0 || len(sb.V2) != sb.Len() {
			t.Fatalf("%d and %d samples", sb.Len(), len(sb.V2))
		}
		for i := range sb.V1 {
			if math.IsNaN(sb.V1[i]) || math.IsInf(sb.V1[i], 0) || math.IsNaN(sb.V2[i]) || math.IsInf(sb.V2[i], 0) {
				t.Fatalf("sample %d is (%v, %v)", i, sb.V1[i], sb.V2[i])
			}
		}
		lo, hi := slicesMinMax(sb.V1)
		for _, tt := range []float64{-1, 0, 0.5, float64(sb.Len()) / 2, float64(sb.Len())} {
			if v := sb.Input(tt); !(v >= lo && v <= hi) {
				t.Fatalf("Input(%v) = %v outside the samples' range [%v, %v]", tt, v, lo, hi)
			}
		}
	})
}

func slicesMinMax(xs []float64) (lo, hi float64) {
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
