package layers

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestHeaderScannerEdges feeds the header scanner numbers and strings at
// its edges: cut off at the header's last byte (the scanner must stop
// there, not read past it), fractions and exponents (refused as integers,
// the whole number named), exponents and fractions without digits, and
// integers at the ends of int64's range and past uint64's (2⁶⁴ must not
// wrap to 0). Each fails with a *FileError saying exactly what is wrong.
func TestHeaderScannerEdges(t *testing.T) {
	shape := func(dims string) []byte {
		return stFile(`{"a":{"dtype":"F32","shape":[`+dims+`],"data_offsets":[0,0]}}`, nil)
	}
	offsets := func(offs string) []byte {
		return stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[`+offs+`]}}`, nil)
	}
	for _, tc := range []struct {
		name   string
		file   []byte
		tensor string // the tensor the error must name, if any
		want   string
	}{
		// Cut off at the header's last byte.
		{"key cut off", stFile(`{"a`, nil), "", "unterminated string at offset 3"},
		{"escape cut off", stFile(`{"a\`, nil), "", "unterminated string at offset 4"},
		{"integer cut off", stFile(`{"a":{"dtype":"F32","shape":[2`, nil), "", "want ',' or ']' in shape, have the end of the header"},
		{"fraction cut off", stFile(`{"a":{"dtype":"F32","shape":[2.5`, nil), "a", "shape: 2.5 is not an integer"},
		{"exponent cut off", stFile(`{"a":{"dtype":"F32","shape":[2e5`, nil), "a", "shape: 2e5 is not an integer"},
		{"exponent's e cut off", stFile(`{"a":{"dtype":"F32","shape":[2e`, nil), "", "want digits in the exponent"},
		{"exponent sign cut off", stFile(`{"a":{"dtype":"F32","shape":[2e+`, nil), "", "want digits in the exponent"},
		{"point cut off", stFile(`{"a":{"dtype":"F32","shape":[2.`, nil), "", "want digits after '.'"},
		// Not integers: the whole number is named.
		{"fraction", shape("2.5"), "a", "shape: 2.5 is not an integer"},
		{"fraction and exponent", shape("2.5E-1"), "a", "shape: 2.5E-1 is not an integer"},
		{"exponent", shape("1e0"), "a", "shape: 1e0 is not an integer"},
		{"no digits after the point", shape("2.]"), "", "want digits after '.'"},
		{"no digits in the exponent", shape("2e]"), "", "want digits in the exponent"},
		{"no digits after the exponent's sign", shape("2e-]"), "", "want digits in the exponent"},
		// int64's range, read exactly.
		{"2^63-1 is read", shape("9223372036854775807"), "a", "shape [9223372036854775807] of F32 is too large"},
		{"2^63", shape("9223372036854775808"), "a", "shape: 9223372036854775808 is out of range"},
		{"-2^63 is read", shape("-9223372036854775808"), "a", "bad dimension -9223372036854775808"},
		{"-2^63-1", shape("-9223372036854775809"), "a", "shape: -9223372036854775809 is out of range"},
		{"2^64-1", shape("18446744073709551615"), "a", "shape: 18446744073709551615 is out of range"},
		// Past uint64: 2⁶⁴ and 2⁶⁴+4 wrap to 0 and 4, 10·2⁶⁴ to 0.
		{"2^64", shape("18446744073709551616"), "a", "shape: 18446744073709551616 is out of range"},
		{"-2^64", shape("-18446744073709551616"), "a", "shape: -18446744073709551616 is out of range"},
		{"10*2^64", shape("184467440737095516160"), "a", "shape: 184467440737095516160 is out of range"},
		{"offset 2^64", offsets("0,18446744073709551616"), "a", "data_offsets: 18446744073709551616 is out of range"},
		{"offset 2^64+4", offsets("18446744073709551620,4"), "a", "data_offsets: 18446744073709551620 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSafetensors("bad.safetensors", tc.file)
			if err == nil {
				t.Fatalf("parsed: %+v", s)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != "bad.safetensors" {
				t.Fatalf("error %q (%T) does not name the file as a *FileError", err, err)
			}
			if fe.Tensor != tc.tensor {
				t.Errorf("error %q names tensor %q, want %q", err, fe.Tensor, tc.tensor)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestHeaderLengthAtLimit checks that a header length of exactly
// MaxHeaderLen is not refused by the limit: a short file claiming it
// fails because the header is not there, by ParseSafetensors and by
// ReadSafetensorsFile alike.
func TestHeaderLengthAtLimit(t *testing.T) {
	file := append(binary.LittleEndian.AppendUint64(nil, MaxHeaderLen), "{}"...)
	path := filepath.Join(t.TempDir(), "at_limit.safetensors")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, perr := ParseSafetensors(path, file)
	_, rerr := ReadSafetensorsFile(path)
	for fn, err := range map[string]error{"ParseSafetensors": perr, "ReadSafetensorsFile": rerr} {
		var fe *FileError
		if !errors.As(err, &fe) || fe.File != path {
			t.Errorf("%s: error %v, want a *FileError naming %s", fn, err, path)
			continue
		}
		if want := "header length 100000000 exceeds the 2 bytes after it"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "exceeds the limit") {
			t.Errorf("%s: error %q, want one saying %q, not the limit's", fn, err, want)
		}
	}
}

// TestHeaderScannerStrings checks the strings of a header: spaces and
// bytes from 0x20 up taken as they are, escapes decoded (a quote escaped
// does not end the string), control characters and bad escapes refused.
func TestHeaderScannerStrings(t *testing.T) {
	entry := `{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`
	for _, tc := range []struct {
		name   string
		header string
		want   []string // the tensors' names
		meta   map[string]string
	}{
		{"space", `{"a b":` + entry + `}`, []string{"a b"}, nil},
		{"printable ASCII", `{" !#~":` + entry + `}`, []string{" !#~"}, nil},
		{"escaped quote", `{"a\"b":` + entry + `}`, []string{`a"b`}, nil},
		{"escaped backslash last", `{"a\\":` + entry + `}`, []string{`a\`}, nil},
		{"escapes", `{"\u00e9\t\/":` + entry + `,"__metadata__":{"k\n":" v\u0001"}}`, []string{"é\t/"}, map[string]string{"k\n": " v\x01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSafetensors("ok.safetensors", stFile(tc.header, nil))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range s.Tensors {
				names = append(names, e.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.meta, s.Metadata, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		name, header, want string
	}{
		{"unit separator", "{\"a\x1f\":" + entry + "}", `control character '\x1f' in a string at offset 3`},
		{"newline", "{\"a\n\":" + entry + "}", `control character '\n' in a string at offset 3`},
		{"bad escape", `{"a\x":` + entry + `}`, "bad string: invalid character 'x' in string escape code at offset 1"},
		{"short unicode escape", `{"a\u00":` + entry + `}`, "bad string: invalid character '\"' in \\u hexadecimal character escape at offset 1"},
		{"bad escape after a key", `{"a":{"\q":1}}`, "bad string: invalid character 'q' in string escape code at offset 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSafetensors("bad.safetensors", stFile(tc.header, nil))
			if err == nil || !strings.Contains(err.Error(), "malformed header: "+tc.want) {
				t.Errorf("error %v, want one saying %q", err, "malformed header: "+tc.want)
			}
		})
	}
}
