package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Silverbox is the Silverbox benchmark recording: an electronic circuit that
// mimics a nonlinear mass-spring-damper, driven by the input voltage V1 and
// observed through the output voltage V2, sampled at a fixed rate (about
// 610 Hz). Sample i of each signal is at time t = i; the real recording has
// 131072 samples.
type Silverbox struct {
	V1, V2 []float64 // input and output, after the preprocessing in Mean and Scale

	// The preprocessing applied when reading: the recorded values x became
	// (x - Mean[k]) * Scale, k = 0 for V1 and 1 for V2. Mean is zero unless
	// mean removal was asked for; Scale is 1 unless set.
	Mean  [2]float64
	Scale float64
}

// SilverboxOptions selects the preprocessing ReadSilverbox applies.
type SilverboxOptions struct {
	// RemoveMean subtracts from each of V1 and V2 its own mean over the
	// recording.
	RemoveMean bool
	// Scale multiplies both signals (after mean removal). Zero means 1; it
	// must be finite and positive otherwise.
	Scale float64
}

// SilverboxReference returns the preprocessing of the paper's reference
// code: the mean of each signal removed, then both multiplied by 100.
func SilverboxReference() SilverboxOptions {
	return SilverboxOptions{RemoveMean: true, Scale: 100}
}

// LoadSilverbox reads the Silverbox CSV file at path (see ReadSilverbox).
func LoadSilverbox(path string, opts SilverboxOptions) (*Silverbox, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSilverbox(f, path, opts)
}

// maxLine is the longest CSV line ReadSilverbox accepts.
const maxLine = 1 << 12

// ReadSilverbox reads a Silverbox recording in CSV form from r and applies
// opts. The format is that of the published sb.csv: a header row naming the
// columns V1 and V2 (quoted or not), then one row of two numbers per sample.
// Every row may end with a trailing comma, lines may end in \n or \r\n, and
// the last line may lack its newline; a UTF-8 byte order mark is skipped.
// Anything else (an empty line, a missing or extra field, a field that is
// not a finite number, no data rows) is a *FormatError naming the file (name)
// and the 1-based line. A gzip-compressed file (first bytes 1f 8b) is
// decompressed.
func ReadSilverbox(r io.Reader, name string, opts SilverboxOptions) (*Silverbox, error) {
	scale := opts.Scale
	if scale == 0 {
		scale = 1
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("data: %s: Silverbox scale %v is not finite and positive", name, opts.Scale)
	}
	src, err := newSource(r, name)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(src.r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	lineErr := func(line int, format string, args ...any) error {
		return &FormatError{File: name, Offset: -1, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	sb := &Silverbox{Scale: scale}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		fields, ok := splitRow(text)
		if !ok {
			return nil, lineErr(line, "found %d comma-separated fields, want 2 (V1,V2) with an optional trailing comma", len(fields))
		}
		if line == 1 {
			h1, h2 := unquote(fields[0]), unquote(fields[1])
			if string(h1) != "V1" || string(h2) != "V2" {
				return nil, lineErr(line, "header names columns %q and %q, want V1 and V2", h1, h2)
			}
			continue
		}
		var v [2]float64
		for k, f := range fields {
			f = bytes.TrimSpace(f)
			if len(f) == 0 {
				return nil, lineErr(line, "V%d is empty", k+1)
			}
			x, err := strconv.ParseFloat(string(f), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, lineErr(line, "V%d value %q is not a finite number", k+1, f)
			}
			v[k] = x
		}
		sb.V1 = append(sb.V1, v[0])
		sb.V2 = append(sb.V2, v[1])
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, lineErr(line+1, "line longer than %d bytes", maxLine)
		}
		e := src.wrap(err)
		e.Offset, e.Line = -1, line+1
		return nil, e
	}
	switch line {
	case 0:
		return nil, lineErr(1, "empty file, want a V1,V2 header")
	case 1:
		return nil, lineErr(2, "no data rows after the header")
	}
	if opts.RemoveMean {
		sb.Mean = [2]float64{mean(sb.V1), mean(sb.V2)}
	}
	for i := range sb.V1 {
		sb.V1[i] = (sb.V1[i] - sb.Mean[0]) * scale
		sb.V2[i] = (sb.V2[i] - sb.Mean[1]) * scale
		if math.IsInf(sb.V1[i], 0) || math.IsInf(sb.V2[i], 0) || math.IsNaN(sb.V1[i]+sb.V2[i]) {
			return nil, lineErr(i+2, "values overflow after mean removal and scaling by %g", scale)
		}
	}
	return sb, nil
}

// splitRow splits a CSV row into its two fields, dropping one empty trailing
// field (the trailing comma). ok is false unless exactly two fields remain;
// fields is then what was found.
func splitRow(text []byte) (fields [][]byte, ok bool) {
	fields = bytes.Split(text, []byte(","))
	if n := len(fields); n == 3 && len(bytes.TrimSpace(fields[2])) == 0 {
		fields = fields[:2]
	}
	if len(fields) == 1 && len(bytes.TrimSpace(fields[0])) == 0 {
		fields = nil // an empty line has no fields
	}
	return fields, len(fields) == 2
}

// unquote trims spaces and one pair of double quotes around a header field.
func unquote(f []byte) []byte {
	f = bytes.TrimSpace(f)
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		f = f[1 : len(f)-1]
	}
	return f
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Len returns the number of samples.
func (s *Silverbox) Len() int { return len(s.V1) }

// Input returns the input signal V1 at time t (in samples: t = 0 is the first
// row), linearly interpolated between samples. Outside [0, Len()-1] it is
// clamped: the first or last sample is returned, so an ODE solver stepping a
// hair past the end of the recording sees a constant input. A NaN t gives NaN.
func (s *Silverbox) Input(t float64) float64 { return interpolate(s.V1, t) }

// Output returns the output signal V2 at time t, interpolated and clamped as
// Input is.
func (s *Silverbox) Output(t float64) float64 { return interpolate(s.V2, t) }

// interpolate returns xs linearly interpolated at t, clamped to the ends;
// NaN for an empty xs or a NaN t.
func interpolate(xs []float64, t float64) float64 {
	n := len(xs)
	switch {
	case n == 0 || math.IsNaN(t):
		return math.NaN()
	case t <= 0:
		return xs[0]
	case t >= float64(n-1):
		return xs[n-1]
	}
	i := int(t)
	f := t - float64(i)
	a, b := xs[i], xs[i+1]
	d := b - a
	if math.IsInf(d, 0) { // a and b near the float64 range's ends
		return (1-f)*a + f*b
	}
	// Clamp against rounding, so the result lies between the samples.
	return min(max(a+f*d, min(a, b)), max(a, b))
}
