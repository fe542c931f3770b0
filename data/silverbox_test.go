package data

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// silverboxPath is the real recording, gzip-compressed, as the repository
// holds it (package silverboxdata embeds the same file).
const silverboxPath = "silverboxdata/sb.csv.gz"

func TestSilverboxReal(t *testing.T) {
	// Expected values read from the file with head and tail.
	const (
		rows            = 131072
		first1, first2  = 0.0057756, 0.0093978
		last1, last2    = 0.0096732, -0.0072247
		mean1, mean2    = 0.006181705792333908, 0.0008159986080217743 // computed independently
		row1000, row100 = 0.00905, 0.0065651                          // V1 of rows 1000 and 1001
	)
	raw, err := LoadSilverbox(silverboxPath, SilverboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Len() != rows || len(raw.V2) != rows {
		t.Fatalf("%d and %d samples, want %d", raw.Len(), len(raw.V2), rows)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"V1[0]", raw.V1[0], first1},
		{"V2[0]", raw.V2[0], first2},
		{"V1[last]", raw.V1[rows-1], last1},
		{"V2[last]", raw.V2[rows-1], last2},
		{"Input(0)", raw.Input(0), first1},
		{"Input(1000.25)", raw.Input(1000.25), row1000 + 0.25*(row100-row1000)},
		{"Input(-1)", raw.Input(-1), first1},
		{"Input(1e9)", raw.Input(1e9), last1},
		{"Output(131071)", raw.Output(rows - 1), last2},
		{"Scale", raw.Scale, 1},
	} {
		if c.got != c.want && math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	ref, err := LoadSilverbox(silverboxPath, SilverboxReference())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Mean[0]", ref.Mean[0], mean1},
		{"Mean[1]", ref.Mean[1], mean2},
		{"Scale", ref.Scale, 100},
		{"V1[0]", ref.V1[0], (first1 - mean1) * 100},
		{"V2[last]", ref.V2[rows-1], (last2 - mean2) * 100},
		{"mean V1", mean(ref.V1), 0},
		{"mean V2", mean(ref.V2), 0},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("reference preprocessing: %s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestReadSilverbox(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   string
		v1, v2 []float64
	}{
		{"published format", "\"V1\",\"V2\",\n1,2,\n3,-4,", []float64{1, 3}, []float64{2, -4}},
		{"final newline", "\"V1\",\"V2\",\n1,2,\n3,-4,\n", []float64{1, 3}, []float64{2, -4}},
		{"no trailing commas", "V1,V2\n1,2\n3e-1,-4", []float64{1, 0.3}, []float64{2, -4}},
		{"crlf and spaces", "\"V1\", \"V2\",\r\n 1 , 2 ,\r\n3,4,\r\n", []float64{1, 3}, []float64{2, 4}},
		{"byte order mark", "\uFEFF\"V1\",\"V2\",\n5,6,", []float64{5}, []float64{6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, compress := range []bool{false, true} {
				in := []byte(tc.file)
				if compress {
					in = gz(in)
				}
				sb, err := ReadSilverbox(bytes.NewReader(in), "sb.csv", SilverboxOptions{})
				if err != nil {
					t.Fatalf("gzip %v: %v", compress, err)
				}
				if !equalFloats(sb.V1, tc.v1) || !equalFloats(sb.V2, tc.v2) {
					t.Errorf("gzip %v: V1 %v V2 %v, want %v %v", compress, sb.V1, sb.V2, tc.v1, tc.v2)
				}
			}
		})
	}
}

func TestSilverboxOptions(t *testing.T) {
	const file = "V1,V2,\n1,10,\n2,20,\n6,60,\n"
	for _, tc := range []struct {
		name   string
		opts   SilverboxOptions
		v1, v2 []float64
	}{
		{"none", SilverboxOptions{}, []float64{1, 2, 6}, []float64{10, 20, 60}},
		{"scale", SilverboxOptions{Scale: 2}, []float64{2, 4, 12}, []float64{20, 40, 120}},
		{"mean", SilverboxOptions{RemoveMean: true}, []float64{-2, -1, 3}, []float64{-20, -10, 30}},
		{"reference", SilverboxReference(), []float64{-200, -100, 300}, []float64{-2000, -1000, 3000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := ReadSilverbox(strings.NewReader(file), "x.csv", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !equalFloats(sb.V1, tc.v1) || !equalFloats(sb.V2, tc.v2) {
				t.Errorf("V1 %v V2 %v, want %v %v", sb.V1, sb.V2, tc.v1, tc.v2)
			}
		})
	}
	for _, s := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := ReadSilverbox(strings.NewReader(file), "x.csv", SilverboxOptions{Scale: s}); err == nil {
			t.Errorf("scale %v: no error", s)
		}
	}
}

func TestSilverboxInterpolation(t *testing.T) {
	sb := &Silverbox{V1: []float64{0, 10, 30}, V2: []float64{1, 1, 1}, Scale: 1}
	for _, tc := range []struct{ t, want float64 }{
		{0, 0}, {0.5, 5}, {1, 10}, {1.25, 15}, {2, 30},
		{-0.1, 0}, {-1e300, 0}, {2.0001, 30}, {math.Inf(1), 30}, {math.Inf(-1), 0},
	} {
		if got := sb.Input(tc.t); got != tc.want {
			t.Errorf("Input(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
	if got := sb.Input(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Input(NaN) = %v, want NaN", got)
	}
	if got := (&Silverbox{}).Input(0); !math.IsNaN(got) {
		t.Errorf("empty Input(0) = %v, want NaN", got)
	}
	huge := &Silverbox{V1: []float64{math.MaxFloat64, -math.MaxFloat64}}
	if got := huge.Input(0.5); got != 0 {
		t.Errorf("Input(0.5) between -MaxFloat64 and MaxFloat64 = %v, want 0", got)
	}
	one := &Silverbox{V1: []float64{7}}
	if got := one.Input(0.5); got != 7 {
		t.Errorf("one sample: Input(0.5) = %v, want 7", got)
	}
}

func TestReadSilverboxBad(t *testing.T) {
	const head = "\"V1\",\"V2\",\n"
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"not a number", head + "1,2,\n1,x,\n", []string{"data: sb.csv:3:", `V2 value "x" is not a finite number`}},
		{"one field", head + "1,2,\n3,4,\n5\n", []string{"data: sb.csv:4:", "found 1 comma-separated fields, want 2"}},
		{"missing V2", head + "1,2,\n3,4,\n5,\n", []string{"data: sb.csv:4:", "V2 is empty"}},
		{"three fields", head + "1,2,3\n", []string{"data: sb.csv:2:", "found 3 comma-separated fields, want 2"}},
		{"two trailing commas", head + "1,2,,\n", []string{"data: sb.csv:2:", "found 4 comma-separated fields"}},
		{"empty line", head + "1,2,\n\n3,4,\n", []string{"data: sb.csv:3:", "found 0 comma-separated fields"}},
		{"empty field", head + ",2,\n", []string{"data: sb.csv:2:", "V1 is empty"}},
		{"NaN", head + "1,2,\nNaN,1,\n", []string{"data: sb.csv:3:", `V1 value "NaN" is not a finite number`}},
		{"Inf", head + "1,+Inf,\n", []string{"data: sb.csv:2:", `V2 value "+Inf"`}},
		{"overflow", head + "1e999,1,\n", []string{"data: sb.csv:2:", `V1 value "1e999"`}},
		{"bad header", "\"A\",\"V2\",\n1,2,\n", []string{"data: sb.csv:1:", `header names columns "A" and "V2", want V1 and V2`}},
		{"no header", "1,2,\n3,4,\n", []string{"data: sb.csv:1:", "header names columns"}},
		{"header only", head, []string{"data: sb.csv:2:", "no data rows after the header"}},
		{"empty file", "", []string{"data: sb.csv:1:", "empty file"}},
		{"long line", head + strings.Repeat("1", maxLine+1) + ",2,\n", []string{"data: sb.csv:2:", "line longer than 4096 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSilverbox(strings.NewReader(tc.file), "sb.csv", SilverboxOptions{})
			checkErr(t, err, tc.want...)
		})
	}
	z := gz([]byte(head + "1,2,\n3,4,\n"))
	_, err := ReadSilverbox(bytes.NewReader(z[:len(z)-4]), "sb.csv.gz", SilverboxOptions{})
	checkErr(t, err, "data: sb.csv.gz:", "corrupt or truncated gzip stream")
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12*max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestReadSilverboxOverflow(t *testing.T) {
	const file = "V1,V2,\n1,2,\n1e308,1,\n1e308,1,\n"
	_, err := ReadSilverbox(strings.NewReader(file), "big.csv", SilverboxOptions{Scale: 10})
	checkErr(t, err, "data: big.csv:3:", "values overflow after mean removal and scaling by 10")
	_, err = ReadSilverbox(strings.NewReader(file), "big.csv", SilverboxOptions{RemoveMean: true})
	checkErr(t, err, "data: big.csv:", "values overflow")
}
