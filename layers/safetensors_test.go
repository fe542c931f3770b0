package layers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// stFile returns a safetensors file with the given header text (not padded)
// and data buffer.
func stFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func f32bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// TestLoadHandMade loads testdata/tiny_f32.safetensors, written by
// testdata/gen_safetensors.py from the format spec (see its byte layout).
func TestLoadHandMade(t *testing.T) {
	w := autograd.NewParam("fc.weight", tensor.New[float32](2, 3))
	b := autograd.NewParam("fc.bias", tensor.New[float32](2))
	meta, err := LoadParams("testdata/tiny_f32.safetensors", []*autograd.Param[float32]{w, b})
	if err != nil {
		t.Fatal(err)
	}
	wantW := []float32{0.5, -1, 2, 0.25, 3, -0.125}
	wantB := []float32{1.5, -2.5}
	if !slices.Equal(w.Value.Data(), wantW) || !slices.Equal(b.Value.Data(), wantB) {
		t.Errorf("loaded weight %v bias %v, want %v %v", w.Value.Data(), b.Value.Data(), wantW, wantB)
	}
	if len(meta) != 2 || meta["format"] != "pt" || meta["note"] != "hand-made" {
		t.Errorf("metadata %v", meta)
	}
	// The file's tensors come out in data order: the bias first.
	s, err := ReadSafetensorsFile("testdata/tiny_f32.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if s.Tensors[0].Name != "fc.bias" || s.Tensors[1].Name != "fc.weight" {
		t.Errorf("tensor order %s, %s; want fc.bias, fc.weight", s.Tensors[0].Name, s.Tensors[1].Name)
	}
}

// TestParseHandMadeMixed parses testdata/mixed.safetensors (other dtypes, a
// zero-size tensor, a scalar; see testdata/gen_safetensors.py).
func TestParseHandMadeMixed(t *testing.T) {
	s, err := ReadSafetensorsFile("testdata/mixed.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if s.Metadata != nil {
		t.Errorf("metadata %v, want none", s.Metadata)
	}
	want := []struct {
		name, dtype string
		shape       []int
		data        []byte
	}{
		{"x64", F64, []int{2}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1.5)), math.Float64bits(1e-300))},
		{"ids", "I64", []int{3}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 0, 0, 0, 0}},
		{"half", "F16", []int{2}, []byte{0x00, 0x3c, 0x00, 0xc0}},
		{"empty", F32, []int{0, 3}, []byte{}},
		{"scalar", F64, []int{}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(3.25))},
	}
	if len(s.Tensors) != len(want) {
		t.Fatalf("%d tensors, want %d", len(s.Tensors), len(want))
	}
	for i, w := range want {
		g := s.Tensors[i]
		if g.Name != w.name || g.DType != w.dtype || !slices.Equal(g.Shape, w.shape) || !bytes.Equal(g.Data, w.data) {
			t.Errorf("tensor %d = %s %s %v % x, want %s %s %v % x", i, g.Name, g.DType, g.Shape, g.Data, w.name, w.dtype, w.shape, w.data)
		}
	}
	x, _ := s.Tensor("x64")
	if v, err := TensorFromRaw[float64](x); err != nil || v.Data()[0] != -1.5 || v.Data()[1] != 1e-300 {
		t.Errorf("x64 = %v, %v", v, err)
	}
	if _, err := TensorFromRaw[float32](x); err == nil || !strings.Contains(err.Error(), "dtype F64, want F32") {
		t.Errorf("F64 as float32: error %v", err)
	}
	sc, _ := s.Tensor("scalar")
	if v, err := TensorFromRaw[float64](sc); err != nil || v.Rank() != 0 || v.Data()[0] != 3.25 {
		t.Errorf("scalar = %v, %v", v, err)
	}
	e, _ := s.Tensor("empty")
	if v, err := TensorFromRaw[float32](e); err != nil || !v.HasShape(0, 3) {
		t.Errorf("empty = %v, %v", v, err)
	}
	// Writing it back gives a valid file with the same tensors.
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseSafetensors("re", b)
	if err != nil {
		t.Fatal(err)
	}
	sameContents(t, s, s2)
}

func sameContents(t *testing.T, a, b *Safetensors) {
	t.Helper()
	if len(a.Tensors) != len(b.Tensors) {
		t.Fatalf("%d tensors, then %d", len(a.Tensors), len(b.Tensors))
	}
	for i := range a.Tensors {
		x, y := a.Tensors[i], b.Tensors[i]
		if x.Name != y.Name || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || !bytes.Equal(x.Data, y.Data) {
			t.Fatalf("tensor %d: %s %s %v differs from %s %s %v", i, x.Name, x.DType, x.Shape, y.Name, y.DType, y.Shape)
		}
	}
	if len(a.Metadata) != len(b.Metadata) {
		t.Fatalf("metadata %v, then %v", a.Metadata, b.Metadata)
	}
	for k, v := range a.Metadata {
		if b.Metadata[k] != v {
			t.Fatalf("metadata %q = %q, then %q", k, v, b.Metadata[k])
		}
	}
}

// specials sets the first elements of t to values a careless encoder would
// change: −0, ±Inf, NaN with a payload, the smallest subnormal.
func specials[T tensor.Float](t *tensor.Tensor[T]) {
	var b []byte
	if DTypeOf[T]() == F32 {
		for _, bits := range []uint32{0x80000000, 0x7f800000, 0xff800000, 0x7fc01234, 0x00000001} {
			b = binary.LittleEndian.AppendUint32(b, bits)
		}
	} else {
		for _, bits := range []uint64{0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000001234, 0x0000000000000001} {
			b = binary.LittleEndian.AppendUint64(b, bits)
		}
	}
	decodeInto(t.Data()[:5], b)
}

func bitsEqual[T tensor.Float](a, b []T) bool {
	return bytes.Equal(RawFromTensor("", tensor.FromSlice(a)).Data, RawFromTensor("", tensor.FromSlice(b)).Data)
}

func testRoundTrip[T tensor.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int{{2, 3}, {7}, {}, {0}, {3, 0, 2}, {2, 3, 4, 5}, {1}}
	var params []*autograd.Param[T]
	for i, sh := range shapes {
		v := tensor.RandN[T](rng, 0, 1, sh...)
		if i == 5 {
			specials(v)
		}
		params = append(params, autograd.NewParam("m.layer"+string(rune('a'+i))+".weight", v))
	}
	meta := map[string]string{"epoch": "3", "note": "ünïcode \"quoted\" <&>", "": "empty key"}
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := SaveParams(path, params, meta); err != nil {
		t.Fatal(err)
	}
	fresh := make([]*autograd.Param[T], len(params))
	for i, p := range params {
		fresh[i] = autograd.NewParam(p.Name, tensor.Full[T](42, p.Value.Shape()...))
	}
	got, err := LoadParams(path, fresh)
	if err != nil {
		t.Fatal(err)
	}
	for i := range params {
		if !bitsEqual(params[i].Value.Data(), fresh[i].Value.Data()) {
			t.Errorf("%s: loaded %v, saved %v", params[i].Name, fresh[i].Value, params[i].Value)
		}
	}
	if len(got) != len(meta) {
		t.Errorf("metadata %v, want %v", got, meta)
	}
	for k, v := range meta {
		if got[k] != v {
			t.Errorf("metadata %q = %q, want %q", k, got[k], v)
		}
	}
	// The layout: header padded to 8 bytes, tensors in the order given, the
	// bytes stable under a parse and re-write.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(b); n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	s, err := ParseSafetensors(path, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range params {
		if s.Tensors[i].Name != p.Name || s.Tensors[i].DType != DTypeOf[T]() {
			t.Errorf("tensor %d is %s %s, want %s %s", i, s.Tensors[i].Name, s.Tensors[i].DType, p.Name, DTypeOf[T]())
		}
	}
	re, err := s.Marshal()
	if err != nil || !bytes.Equal(re, b) {
		t.Errorf("re-writing the parsed file changes it (err %v)", err)
	}
}

func TestRoundTripFloat32(t *testing.T) { testRoundTrip[float32](t) }
func TestRoundTripFloat64(t *testing.T) { testRoundTrip[float64](t) }

// TestParseErrors feeds malformed files to the parser: each must fail with a
// *FileError naming the file, the tensor where one is concerned, and the
// problem.
func TestParseErrors(t *testing.T) {
	good := stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32bytes(1, 2))
	two := `{"a":{"dtype":"F32","shape":[1],"data_offsets":[%s]},"b":{"dtype":"F32","shape":[1],"data_offsets":[%s]}}`
	entry := func(e string) []byte { return stFile(`{"a":`+e+`}`, f32bytes(1, 2)) }
	for _, tc := range []struct {
		name   string
		file   []byte
		tensor string // the tensor the error must name, if any
		want   string
	}{
		{"empty", nil, "", "too short"},
		{"7 bytes", good[:7], "", "too short"},
		{"header beyond file", good[:20], "", "header length 54 exceeds the 12 bytes"},
		{"huge header length", append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, good[8:]...), "", "exceeds"},
		{"truncated data", good[:len(good)-1], "a", "run past the end of the 7-byte data buffer"},
		{"empty header", stFile("", nil), "", "does not start with '{'"},
		{"not an object", stFile(`["a"]`, nil), "", "does not start with '{'"},
		{"bad JSON", stFile(`{"a":{"dtype":"F32",}}`, nil), "", "malformed header"},
		{"unterminated", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`, f32bytes(1, 2)), "", "malformed header"},
		{"garbage after", stFile(`{}x`, nil), "", "bytes after the JSON object"},
		{"second object", stFile(`{}{}`, nil), "", "bytes after the JSON object"},
		{"invalid UTF-8", stFile("{\"\xff\":1}", nil), "", "UTF-8"},
		{"duplicate tensor", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32bytes(1, 2)), "", `key "a" appears twice`},
		{"empty name", stFile(`{"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32bytes(1, 2)), "", "empty name"},
		{"entry not object", entry(`[1]`), "a", "want a JSON object"},
		{"entry null", entry(`null`), "a", "want a JSON object"},
		{"unknown dtype", entry(`{"dtype":"F33","shape":[2],"data_offsets":[0,8]}`), "a", `unknown dtype "F33"`},
		{"dtype not string", entry(`{"dtype":4,"shape":[2],"data_offsets":[0,8]}`), "a", "dtype is not a string"},
		{"unknown field", entry(`{"dtype":"F32","shape":[2],"data_offsets":[0,8],"stride":[1]}`), "a", `unknown field "stride"`},
		{"duplicate field", entry(`{"dtype":"F32","dtype":"F64","shape":[2],"data_offsets":[0,8]}`), "a", `key "dtype" appears twice`},
		{"no offsets", entry(`{"dtype":"F32","shape":[2]}`), "a", `no "data_offsets"`},
		{"no shape", entry(`{"dtype":"F32","data_offsets":[0,8]}`), "a", `no "shape"`},
		{"no dtype", entry(`{"shape":[2],"data_offsets":[0,8]}`), "a", `no "dtype"`},
		{"shape null", entry(`{"dtype":"F32","shape":null,"data_offsets":[0,8]}`), "a", "shape is not an array"},
		{"negative dim", entry(`{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}`), "a", "bad dimension -2"},
		{"fractional dim", entry(`{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}`), "a", "shape"},
		{"huge shape", entry(`{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}`), "a", "is too large"},
		{"three offsets", entry(`{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}`), "a", "has 3 entries"},
		{"negative offset", entry(`{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}`), "a", "data_offsets [-1 8]: an offset is negative"},
		{"negative end", entry(`{"dtype":"F32","shape":[2],"data_offsets":[0,-8]}`), "a", "data_offsets [0 -8]: an offset is negative"},
		{"both negative", entry(`{"dtype":"F32","shape":[2],"data_offsets":[-8,-4]}`), "a", "data_offsets [-8 -4]: an offset is negative"},
		{"offsets reversed", entry(`{"dtype":"F32","shape":[0],"data_offsets":[8,0]}`), "a", "end before they begin"},
		{"size mismatch", entry(`{"dtype":"F64","shape":[2],"data_offsets":[0,8]}`), "a", "hold 8 bytes, shape [2] of F64 needs 16"},
		{"more bytes than the shape", entry(`{"dtype":"F32","shape":[1],"data_offsets":[0,8]}`), "a", "hold 8 bytes, shape [1] of F32 needs 4"},
		{"size mismatch not from 0", entry(`{"dtype":"F32","shape":[2],"data_offsets":[4,8]}`), "a", "data_offsets [4, 8] hold 4 bytes, shape [2] of F32 needs 8"},
		{"gap", stFile(strings.Replace(strings.Replace(two, "%s", "0,4", 1), "%s", "8,12", 1), f32bytes(1, 2, 3)), "b", "leave a gap"},
		{"overlap", stFile(strings.Replace(strings.Replace(two, "%s", "0,4", 1), "%s", "0,4", 1), f32bytes(1)), "b", "overlap"},
		{"gap at start", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32bytes(1, 2)), "a", "leave a gap"},
		{"trailing data", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32bytes(1, 2)), "", "cover 4 bytes of the 8-byte data buffer"},
		{"metadata not object", stFile(`{"__metadata__":"x"}`, nil), "", "__metadata__"},
		{"metadata number", stFile(`{"__metadata__":{"epoch":3}}`, nil), "", `value of "epoch" is not a string`},
		{"metadata null", stFile(`{"__metadata__":{"epoch":null}}`, nil), "", `value of "epoch" is not a string`},
		{"metadata nested", stFile(`{"__metadata__":{"a":{"b":"c"}}}`, nil), "", `value of "a" is not a string`},
		{"metadata twice", stFile(`{"__metadata__":{},"__metadata__":{}}`, nil), "", `key "__metadata__" appears twice`},
		{"metadata bad JSON", stFile(`{"__metadata__":{"a":"b",}}`, nil), "", "malformed header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSafetensors("bad.safetensors", tc.file)
			if err == nil {
				t.Fatalf("parsed: %+v", s)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != "bad.safetensors" || !strings.HasPrefix(err.Error(), "layers: bad.safetensors: ") {
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
	// Valid edge cases.
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"no tensors", stFile(`{}`, nil)},
		{"only metadata", stFile(`{"__metadata__":{}}`, nil)},
		{"padded", stFile(`{}      `, nil)},
		{"whitespace inside", stFile("{ \"a\" :\n{\"dtype\":\"F32\",\t\"shape\":[1],\"data_offsets\":[0,4]}}\r\n", f32bytes(1))},
		{"zero-size between", stFile(strings.Replace(strings.Replace(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[%s]},"b":{"dtype":"F32","shape":[1],"data_offsets":[%s]}}`, "%s", "4,4", 1), "%s", "0,4", 1), f32bytes(1))},
	} {
		if _, err := ParseSafetensors(tc.name, tc.file); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestLoadErrors checks that LoadParams refuses files that do not fit the
// parameters, naming the file and the tensor, and leaves the parameters
// alone.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, shape ...int) *autograd.Param[float32] {
		return autograd.NewParam(name, tensor.Full[float32](1, shape...))
	}
	saved := []*autograd.Param[float32]{mk("f.conv1.weight", 2, 1, 3, 3), mk("f.conv1.bias", 2)}
	path := filepath.Join(dir, "ck.safetensors")
	if err := SaveParams(path, saved, nil); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var f64 []*autograd.Param[float64]
	f64 = append(f64, autograd.NewParam("f.conv1.weight", tensor.New[float64](2, 1, 3, 3)), autograd.NewParam("f.conv1.bias", tensor.New[float64](2)))
	// An F32 file loads into float64 parameters, converted exactly.
	if _, err := LoadParams(path, f64); err != nil {
		t.Errorf("F32 file into float64 parameters: %v", err)
	}
	for i, p := range f64 {
		for k, v := range p.Value.Data() {
			if v != float64(saved[i].Value.Data()[k]) {
				t.Fatalf("%s[%d] = %v after conversion, saved %v", p.Name, k, v, saved[i].Value.Data()[k])
			}
		}
	}
	for _, tc := range []struct {
		name   string
		path   string
		params []*autograd.Param[float32]
		want   string
	}{
		{"missing tensor", path, []*autograd.Param[float32]{mk("f.conv1.weight", 2, 1, 3, 3), mk("f.conv1.bias", 2), mk("f.conv2.weight", 1)}, `tensor "f.conv2.weight": missing`},
		{"extra tensor", path, []*autograd.Param[float32]{mk("f.conv1.weight", 2, 1, 3, 3)}, `tensor "f.conv1.bias": unexpected`},
		{"wrong shape", path, []*autograd.Param[float32]{mk("f.conv1.weight", 2, 1, 3, 3), mk("f.conv1.bias", 3)}, `tensor "f.conv1.bias": shape [2] in the file, the parameter has shape [3]`},
		{"truncated", write("trunc.safetensors", good[:len(good)-3]), saved, "run past the end"},
		{"truncated header", write("trunc2.safetensors", good[:40]), saved, "header length"},
		{"corrupted", write("corrupt.safetensors", bytes.Replace(good, []byte(`"F32"`), []byte(`"X32"`), 1)), saved, `unknown dtype "X32"`},
		{"no file", filepath.Join(dir, "nope.safetensors"), saved, "cannot read"},
		{"duplicate params", path, []*autograd.Param[float32]{mk("f.conv1.bias", 2), mk("f.conv1.bias", 2)}, `tensor "f.conv1.bias": two parameters have this name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.params {
				p.Value.Fill(7)
			}
			_, err := LoadParams(tc.path, tc.params)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.HasPrefix(err.Error(), "layers: "+tc.path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want the file and %q", err, tc.want)
			}
			for _, p := range tc.params {
				if p.Value.Data()[0] != 7 {
					t.Errorf("a failed load changed %s", p.Name)
				}
			}
		})
	}
	if _, err := LoadParams(filepath.Join(dir, "nope.safetensors"), saved); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v does not wrap fs.ErrNotExist", err)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.safetensors")
	p := autograd.NewParam("w", tensor.Full[float32](1, 2))
	if err := SaveParams(path, []*autograd.Param[float32]{p}, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"reserved meta", SaveParams(path, []*autograd.Param[float32]{p}, map[string]string{"optim.x": "1"}), "reserved"},
		{"reserved param", SaveParams(path, []*autograd.Param[float32]{autograd.NewParam("optim.w", tensor.New[float32](1))}, nil), "reserved"},
		{"unnamed param", SaveParams(path, []*autograd.Param[float32]{autograd.NewParam("", tensor.New[float32](1))}, nil), "no name"},
		{"bad UTF-8 meta", SaveParams(path, []*autograd.Param[float32]{p}, map[string]string{"k": "\xff"}), "UTF-8"},
		{"bad UTF-8 name", (&Safetensors{Tensors: []RawTensor{{Name: "\xff", DType: F32, Shape: []int{}, Data: f32bytes(1)}}}).WriteFile(path), "UTF-8"},
		{"reserved name", (&Safetensors{Tensors: []RawTensor{{Name: "__metadata__", DType: F32, Shape: []int{}, Data: f32bytes(1)}}}).WriteFile(path), "invalid tensor name"},
		{"duplicate", (&Safetensors{Tensors: []RawTensor{{Name: "a", DType: F32, Data: f32bytes(1)}, {Name: "a", DType: F32, Data: f32bytes(1)}}}).WriteFile(path), "two tensors"},
		{"bad dtype", (&Safetensors{Tensors: []RawTensor{{Name: "a", DType: "f32", Data: f32bytes(1)}}}).WriteFile(path), "unknown dtype"},
		{"short data", (&Safetensors{Tensors: []RawTensor{{Name: "a", DType: F32, Shape: []int{2}, Data: f32bytes(1)}}}).WriteFile(path), "4 bytes of data for shape [2]"},
		{"negative dim", (&Safetensors{Tensors: []RawTensor{{Name: "a", DType: F32, Shape: []int{-1}}}}).WriteFile(path), "negative"},
		{"no directory", SaveParams(filepath.Join(dir, "no", "such", "dir.safetensors"), []*autograd.Param[float32]{p}, nil), "temporary file"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, tc.err, tc.want)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("failed writes changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the directory: %v", names)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

// FuzzParseSafetensors feeds arbitrary bytes to the parser. It must never
// panic; it either fails with a *FileError naming the file, or returns
// tensors whose data fill their shapes and tile the data buffer, and which
// survive a write and a second parse unchanged.
func FuzzParseSafetensors(f *testing.F) {
	for _, name := range []string{"testdata/tiny_f32.safetensors", "testdata/mixed.safetensors"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(b[:20])
	}
	f.Add(stFile(`{"__metadata__":{"a":"b"},"x":{"dtype":"F64","shape":[1,1],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(stFile(`{}`, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSafetensors("fuzz.safetensors", b)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != "fuzz.safetensors" || !strings.HasPrefix(err.Error(), "layers: fuzz.safetensors: ") {
				t.Fatalf("error %q (%T) does not name the file", err, err)
			}
			return
		}
		total := 0
		for _, x := range s.Tensors {
			if len(x.Data) != x.Numel()*dtypeSize(x.DType) {
				t.Fatalf("tensor %q: %d bytes for shape %v of %s", x.Name, len(x.Data), x.Shape, x.DType)
			}
			total += len(x.Data)
			switch x.DType {
			case F32:
				if _, err := TensorFromRaw[float32](x); err != nil {
					t.Fatal(err)
				}
			case F64:
				if _, err := TensorFromRaw[float64](x); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := binary.LittleEndian.Uint64(b); total != len(b)-8-int(n) {
			t.Fatalf("tensors hold %d bytes of a %d-byte buffer", total, len(b)-8-int(n))
		}
		re, err := s.Marshal()
		if err != nil {
			t.Fatalf("cannot re-write a parsed file: %v", err)
		}
		s2, err := ParseSafetensors("re", re)
		if err != nil {
			t.Fatalf("cannot parse a re-written file: %v", err)
		}
		sameContents(t, s, s2)
	})
}

// TestHalfToFloat32: every binary16 bit pattern converts to the value the
// format defines, (−1)^s·2^(e−15)·(1 + f/1024) (subnormals 2^−14·f/1024),
// with infinities and NaN kept.
func TestHalfToFloat32(t *testing.T) {
	for h := range 1 << 16 {
		s, e, f := h>>15, (h>>10)&0x1f, h&0x3ff
		var want float64
		switch {
		case e == 0x1f && f == 0:
			want = math.Inf(1)
		case e == 0x1f:
			want = math.NaN()
		case e == 0:
			want = math.Ldexp(float64(f)/1024, -14)
		default:
			want = math.Ldexp(1+float64(f)/1024, e-15)
		}
		if s == 1 {
			want = -want
		}
		got := float64(halfToFloat32(uint16(h)))
		if got != want && !(math.IsNaN(got) && math.IsNaN(want)) || math.Signbit(got) != math.Signbit(want) && !math.IsNaN(want) {
			t.Fatalf("half %#04x: %v, want %v", h, got, want)
		}
	}
}

// allocated returns the bytes allocated while f runs (runtime.MemStats'
// TotalAlloc, after a collection: the tests of this package run one at a
// time).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHeaderLengthLimit checks that a header length over MaxHeaderLen, the
// reference implementation's limit, is refused with an error naming the
// file and the length, by ParseSafetensors and by ReadSafetensorsFile
// before it reads the file.
func TestHeaderLengthLimit(t *testing.T) {
	dir := t.TempDir()
	claim := func(n uint64, rest []byte) []byte { return append(binary.LittleEndian.AppendUint64(nil, n), rest...) }
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"one over", claim(MaxHeaderLen+1, []byte(`{}`)), "header length 100000001 exceeds the limit of 100000000 bytes"},
		{"2^63", claim(1<<63, []byte(`{}`)), "header length 9223372036854775808 exceeds the limit of 100000000 bytes"},
		{"max uint64", claim(math.MaxUint64, nil), "header length 18446744073709551615 exceeds the limit of 100000000 bytes"},
		// A longer file: refused from its first 8 bytes, the rest unread.
		{"header present", claim(MaxHeaderLen+8, append([]byte("{}"), make([]byte, 1<<20)...)), "header length 100000008 exceeds the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, perr := ParseSafetensors(path, tc.file)
			var rerr error
			read := allocated(func() { _, rerr = ReadSafetensorsFile(path) })
			for fn, err := range map[string]error{"ParseSafetensors": perr, "ReadSafetensorsFile": rerr} {
				var fe *FileError
				if !errors.As(err, &fe) || fe.File != path || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want a *FileError naming %s and saying %q", fn, err, path, tc.want)
				}
			}
			// Refused from the first 8 bytes: not the rest of the file.
			if limit := uint64(64 << 10); read > limit {
				t.Errorf("ReadSafetensorsFile allocated %d bytes to refuse a %d-byte file, want at most %d", read, len(tc.file), limit)
			}
		})
	}
}

// TestManySmallEntriesMemory checks that a header of many small entries
// (about 3 MB of them here) loads in a small multiple of the file's size:
// encoding/json's per-entry Decoder and the growth of the slices made it
// about 40 times.
func TestManySmallEntriesMemory(t *testing.T) {
	const n = 40000
	s := &Safetensors{Metadata: map[string]string{"format": "pt"}}
	for i := range n {
		s.Tensors = append(s.Tensors, RawTensor{Name: fmt.Sprintf("t%d", i), DType: F32, Shape: []int{1}, Data: f32bytes(float32(i))})
	}
	path := filepath.Join(t.TempDir(), "many.safetensors")
	if err := s.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var got *Safetensors
	used := allocated(func() { got, err = ReadSafetensorsFile(path) })
	if err != nil {
		t.Fatal(err)
	}
	if limit := 8*uint64(fi.Size()) + 1<<20; used > limit {
		t.Errorf("loading a %d-byte file of %d tensors allocated %d bytes (%.1f times the file), want at most %d", fi.Size(), n, used, float64(used)/float64(fi.Size()), limit)
	}
	t.Logf("%d-byte file of %d tensors: %d bytes allocated (%.1f times the file)", fi.Size(), n, used, float64(used)/float64(fi.Size()))
	sameContents(t, s, got)
	if first, last := got.Tensors[0].Name, got.Tensors[n-1].Name; first != "t0" || last != fmt.Sprintf("t%d", n-1) {
		t.Errorf("tensors from %q to %q, want t0 to t%d in data order", first, last, n-1)
	}
}

// TestReadFileShorterThanItsSize checks that ReadSafetensorsFile parses a
// file shorter than its size said (one that shrank between the two) as it
// is, with ParseSafetensors's error rather than a read error. Linux's
// sysfs files say 4096 bytes and hold a few.
func TestReadFileShorterThanItsSize(t *testing.T) {
	for _, path := range []string{"/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible", "/sys/kernel/mm/transparent_hugepage/enabled"} {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || int64(len(b)) >= fi.Size() {
			continue
		}
		_, rerr := ReadSafetensorsFile(path)
		_, perr := ParseSafetensors(path, b)
		if rerr == nil || perr == nil || rerr.Error() != perr.Error() {
			t.Errorf("ReadSafetensorsFile(%s) of %d bytes, %d by its size: %v, want ParseSafetensors's %v", path, len(b), fi.Size(), rerr, perr)
		}
		return
	}
	t.Skip("no file here is shorter than its size")
}
