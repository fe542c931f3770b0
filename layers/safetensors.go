package layers

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adamnode/adamnode/tensor"
)

// The safetensors format (https://github.com/huggingface/safetensors), as
// read and written here:
//
//	bytes [0, 8)        N, the header length, a little-endian uint64
//	bytes [8, 8+N)      the header: a UTF-8 JSON object, starting with '{',
//	                    possibly followed by whitespace (padding)
//	bytes [8+N, end)    the data buffer
//
// The header maps each tensor name to
//
//	{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
//
// with the offsets counted from the start of the data buffer, and may hold
// "__metadata__": {string: string}. The tensors' byte ranges, taken in order
// of offset, tile the data buffer exactly: no gap, no overlap, nothing after
// the last. Elements are little-endian, row-major.

// Tensor element types of the safetensors format.
const (
	F32 = "F32" // IEEE 754 binary32
	F64 = "F64" // IEEE 754 binary64
)

// metadataKey is the header key of the string-to-string metadata.
const metadataKey = "__metadata__"

// dtypeSize returns the size in bytes of an element of the safetensors dtype
// dt, or 0 if dt is not one of the format's dtypes.
func dtypeSize(dt string) int {
	switch dt {
	case "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3":
		return 1
	case "I16", "U16", "F16", "BF16":
		return 2
	case "I32", "U32", F32:
		return 4
	case "I64", "U64", F64:
		return 8
	}
	return 0
}

// DTypeOf returns the safetensors dtype of T: "F32" for float32, "F64" for
// float64.
func DTypeOf[T tensor.Float]() string {
	var z T
	if _, ok := any(z).(float32); ok {
		return F32
	}
	return F64
}

// FileError reports a safetensors file that cannot be read or written, or
// whose contents are malformed or do not fit what is loaded into: the file,
// the tensor concerned (if one is) and what is wrong.
type FileError struct {
	File   string // the file's path (or the name given to ParseSafetensors)
	Tensor string // the tensor concerned, or ""
	Msg    string // what is wrong
	Err    error  // the underlying error, if any (an *fs.PathError, an optimizer's error)
}

// Error formats the error as `layers: FILE: tensor "NAME": MSG: ERR`.
func (e *FileError) Error() string {
	s := "layers: " + e.File + ": "
	if e.Tensor != "" {
		s += "tensor " + strconv.Quote(e.Tensor) + ": "
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, if any.
func (e *FileError) Unwrap() error { return e.Err }

// RawTensor is one tensor of a safetensors file, not decoded: any of the
// format's dtypes.
type RawTensor struct {
	Name  string
	DType string // "F32", "F64", or another safetensors dtype ("F16", "BF16", "I64", ...)
	Shape []int
	Data  []byte // the elements, little-endian, row-major: Numel()·(element size) bytes
}

// Numel returns the number of elements, the product of the shape.
func (r RawTensor) Numel() int {
	n := 1
	for _, d := range r.Shape {
		n *= d
	}
	return n
}

// Safetensors is the contents of a safetensors file: its tensors, in the
// order of their data, and its metadata.
type Safetensors struct {
	Metadata map[string]string // the header's "__metadata__" (nil when absent)
	Tensors  []RawTensor
}

// Tensor returns the tensor called name and whether there is one.
func (s *Safetensors) Tensor(name string) (RawTensor, bool) {
	for _, t := range s.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return RawTensor{}, false
}

// RawFromTensor encodes t as a safetensors tensor called name (of dtype
// DTypeOf[T]), copying its elements.
func RawFromTensor[T tensor.Float](name string, t *tensor.Tensor[T]) RawTensor {
	src := t.Data()
	var b []byte
	switch s := any(src).(type) {
	case []float32:
		b = make([]byte, 4*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case []float64:
		b = make([]byte, 8*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	}
	return RawTensor{Name: name, DType: DTypeOf[T](), Shape: t.Shape(), Data: b}
}

// TensorFromRaw decodes r into a new tensor of element type T. It returns an
// error if r's dtype is not DTypeOf[T] (no conversion is done) or its data
// does not fill its shape.
func TensorFromRaw[T tensor.Float](r RawTensor) (*tensor.Tensor[T], error) {
	if err := checkRaw[T](r); err != nil {
		return nil, err
	}
	for _, d := range r.Shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", r.Shape)
		}
	}
	t := tensor.New[T](r.Shape...)
	decodeInto(t.Data(), r.Data)
	return t, nil
}

// checkRaw reports whether r holds elements of type T that fill its shape.
func checkRaw[T tensor.Float](r RawTensor) error {
	if want := DTypeOf[T](); r.DType != want {
		return fmt.Errorf("dtype %s, want %s", r.DType, want)
	}
	if n := len(r.Data); n != r.Numel()*dtypeSize(r.DType) {
		return fmt.Errorf("%d bytes of data for shape %v of %s", n, r.Shape, r.DType)
	}
	return nil
}

// decodeInto decodes the little-endian elements of b into dst (len(b) is
// len(dst) times the element size).
func decodeInto[T tensor.Float](dst []T, b []byte) {
	switch d := any(dst).(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
}

// ReadSafetensorsFile reads and parses the safetensors file at path. A
// header length over MaxHeaderLen is refused before the file is read.
// Errors are *FileError values naming path (wrapping the *fs.PathError when
// the file cannot be read).
func ReadSafetensorsFile(path string) (*Safetensors, error) {
	fail := func(err error) (*Safetensors, error) {
		return nil, &FileError{File: path, Msg: "cannot read", Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if !st.Mode().IsRegular() {
		b, err := io.ReadAll(f)
		if err != nil {
			return fail(&fs.PathError{Op: "read", Path: path, Err: err})
		}
		return ParseSafetensors(path, b)
	}
	var n8 [8]byte
	if _, err := f.ReadAt(n8[:], 0); err == nil {
		if n := binary.LittleEndian.Uint64(n8[:]); n > MaxHeaderLen {
			return nil, headerTooLong(path, n)
		}
	}
	b := make([]byte, st.Size())
	k, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF { // a file that shrank is parsed as it is
		return fail(err)
	}
	return ParseSafetensors(path, b[:k])
}

func headerTooLong(name string, n uint64) error {
	return &FileError{File: name, Msg: fmt.Sprintf("header length %d exceeds the limit of %d bytes (that of the reference implementation; a corrupt or hostile file?)", n, MaxHeaderLen)}
}

// minEntryLen is the length of the shortest tensor entry of a header,
// with the comma before it: `,"x":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`.
const minEntryLen = 51

// ParseSafetensors parses the bytes of a safetensors file; name names it in
// errors. The tensors' Data alias b. It checks the whole format: the header
// length (at most MaxHeaderLen), the header's JSON (no duplicate keys, no
// unknown fields, known dtypes, non-negative shapes), that each tensor's
// byte range fits its shape and dtype, and that the ranges tile the data
// buffer exactly. Every problem is a *FileError naming the file and, when
// one is concerned, the tensor; ParseSafetensors never panics. Besides its
// result (a RawTensor, a name and a shape per tensor), it allocates a
// small multiple of the header's size however the header is made.
func ParseSafetensors(name string, b []byte) (*Safetensors, error) {
	hdr, buf, err := splitSafetensors(name, b)
	if err != nil {
		return nil, err
	}
	// Sized once for as many entries as the header can hold, so that
	// neither a slice nor the map grows (a large slice grows by a quarter:
	// appends would allocate five times what they keep).
	most := len(hdr)/minEntryLen + 1
	r := &headerReader{
		name:    name,
		buf:     buf,
		sc:      hdrScanner{b: hdr},
		tensors: make([]RawTensor, 0, most),
		offs:    make([][2]uint64, 0, most),
		seen:    make(map[string]struct{}, most),
	}
	err = r.sc.object(r.key)
	if err == nil && r.sc.peek() != 0 {
		err = fmt.Errorf("bytes after the JSON object (offset %d in the header)", r.sc.i)
	}
	if err != nil {
		if fe, ok := err.(*FileError); ok {
			return nil, fe
		}
		return nil, &FileError{File: name, Msg: "malformed header", Err: err}
	}
	r.seen = nil
	tensors, offs := sortByOffset(r.tensors, r.offs)
	if err := checkLayout(name, tensors, offs, len(buf)); err != nil {
		return nil, err
	}
	return &Safetensors{Metadata: r.meta, Tensors: tensors}, nil
}

// splitSafetensors checks the 8-byte header length of the file b and
// splits the rest into the JSON header and the data buffer.
func splitSafetensors(name string, b []byte) (hdr, buf []byte, err error) {
	fail := func(format string, args ...any) ([]byte, []byte, error) {
		return nil, nil, &FileError{File: name, Msg: fmt.Sprintf(format, args...)}
	}
	if len(b) < 8 {
		return fail("file of %d bytes is too short for the 8-byte header length (truncated?)", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > MaxHeaderLen {
		return nil, nil, headerTooLong(name, n)
	}
	if n > uint64(len(b)-8) {
		return fail("header length %d exceeds the %d bytes after it (truncated or not a safetensors file)", n, len(b)-8)
	}
	hdr, buf = b[8:8+n], b[8+n:]
	if len(hdr) == 0 || hdr[0] != '{' {
		return fail("header does not start with '{' (not a safetensors file?)")
	}
	if !utf8.Valid(hdr) {
		return fail("header is not valid UTF-8")
	}
	return hdr, buf, nil
}

// headerReader collects the entries of a safetensors header as
// ParseSafetensors scans it.
type headerReader struct {
	name     string // the file, for errors
	buf      []byte // the data buffer after the header
	sc       hdrScanner
	tensors  []RawTensor
	offs     [][2]uint64 // offs[i]: the data offsets of tensors[i]
	meta     map[string]string
	haveMeta bool
	seen     map[string]struct{} // the tensors' names so far
}

// key reads the value of the header's key: the metadata, or a tensor's
// entry, whose data range it checks against the buffer.
func (r *headerReader) key(key []byte) error {
	if string(key) == metadataKey {
		return r.metadata(key)
	}
	if len(key) == 0 {
		return &FileError{File: r.name, Msg: "header has a tensor with an empty name"}
	}
	if _, dup := r.seen[string(key)]; dup {
		return fmt.Errorf("key %q appears twice", key)
	}
	e := RawTensor{Name: string(key)}
	r.seen[e.Name] = struct{}{}
	begin, end, err := r.sc.entry(&e)
	if err != nil {
		if _, ok := err.(*syntaxError); ok {
			return err
		}
		return &FileError{File: r.name, Tensor: e.Name, Msg: err.Error()}
	}
	if err := checkExtent(r.name, &e, begin, end, len(r.buf)); err != nil {
		return err
	}
	e.Data = r.buf[begin:end:end]
	r.tensors = append(r.tensors, e)
	r.offs = append(r.offs, [2]uint64{begin, end})
	return nil
}

// metadata reads the header's metadata object, key, which may appear once.
func (r *headerReader) metadata(key []byte) error {
	if r.haveMeta {
		return fmt.Errorf("key %q appears twice", key)
	}
	r.haveMeta = true
	m, err := r.sc.metadata()
	if err != nil {
		if _, ok := err.(*syntaxError); ok {
			return err
		}
		return &FileError{File: r.name, Msg: "header " + metadataKey + ": " + err.Error()}
	}
	r.meta = m
	return nil
}

// checkExtent checks that the data offsets [begin, end) of tensor e lie in
// a data buffer of bufLen bytes and hold exactly its shape's bytes.
func checkExtent(name string, e *RawTensor, begin, end uint64, bufLen int) error {
	size := dtypeSize(e.DType)
	numel, ok := checkedNumel(e.Shape, math.MaxInt64/uint64(size))
	if !ok {
		return &FileError{File: name, Tensor: e.Name, Msg: fmt.Sprintf("shape %v of %s is too large", e.Shape, e.DType)}
	}
	switch {
	case begin > end:
		return &FileError{File: name, Tensor: e.Name, Msg: fmt.Sprintf("data_offsets [%d, %d] end before they begin", begin, end)}
	case end > uint64(bufLen):
		return &FileError{File: name, Tensor: e.Name, Msg: fmt.Sprintf("data_offsets [%d, %d] run past the end of the %d-byte data buffer (truncated?)", begin, end, bufLen)}
	case end-begin != numel*uint64(size):
		return &FileError{File: name, Tensor: e.Name, Msg: fmt.Sprintf("data_offsets [%d, %d] hold %d bytes, shape %v of %s needs %d", begin, end, end-begin, e.Shape, e.DType, numel*uint64(size))}
	}
	return nil
}

// checkLayout checks that the tensors' data, sorted by offset (offs[i]
// those of tensors[i]), cover the data buffer of bufLen bytes with no gap
// and no overlap.
func checkLayout(name string, tensors []RawTensor, offs [][2]uint64, bufLen int) error {
	var at uint64
	for i, o := range offs {
		switch {
		case o[0] > at:
			return &FileError{File: name, Tensor: tensors[i].Name, Msg: fmt.Sprintf("data_offsets [%d, %d] leave a gap: the previous tensor ends at %d", o[0], o[1], at)}
		case o[0] < at:
			return &FileError{File: name, Tensor: tensors[i].Name, Msg: fmt.Sprintf("data_offsets [%d, %d] overlap the previous tensor, which ends at %d", o[0], o[1], at)}
		}
		at = o[1]
	}
	if at != uint64(bufLen) {
		return &FileError{File: name, Msg: fmt.Sprintf("the tensors cover %d bytes of the %d-byte data buffer", at, bufLen)}
	}
	return nil
}

// sortByOffset returns the tensors and their offsets in the order of their
// data (by begin, then end; header order among equals), leaving them as
// they are when they already are in that order, as files written here are.
func sortByOffset(tensors []RawTensor, offs [][2]uint64) ([]RawTensor, [][2]uint64) {
	less := func(x, y [2]uint64) int {
		if c := cmpU64(x[0], y[0]); c != 0 {
			return c
		}
		return cmpU64(x[1], y[1])
	}
	if slices.IsSortedFunc(offs, less) {
		return tensors, offs
	}
	idx := make([]int, len(offs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return less(offs[i], offs[j]) })
	ts, sorted := make([]RawTensor, len(idx)), make([][2]uint64, len(idx))
	for k, i := range idx {
		ts[k], sorted[k] = tensors[i], offs[i]
	}
	return ts, sorted
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkedNumel returns the product of shape, or false if it exceeds limit.
func checkedNumel(shape []int, limit uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	for _, d := range shape {
		if uint64(d) > limit/n {
			return 0, false
		}
		n *= uint64(d)
	}
	return n, true
}

// validate checks s before writing: names unique and non-empty, dtypes
// known, data lengths fitting shapes, UTF-8 throughout.
func (s *Safetensors) validate(name string) error {
	seen := make(map[string]bool, len(s.Tensors))
	for _, t := range s.Tensors {
		fail := func(format string, args ...any) error {
			return &FileError{File: name, Tensor: t.Name, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case t.Name == "" || t.Name == metadataKey:
			return fail("invalid tensor name")
		case !utf8.ValidString(t.Name):
			return fail("tensor name is not valid UTF-8")
		case seen[t.Name]:
			return fail("two tensors have this name")
		case dtypeSize(t.DType) == 0:
			return fail("unknown dtype %q", t.DType)
		}
		seen[t.Name] = true
		for _, d := range t.Shape {
			if d < 0 {
				return fail("negative dimension in shape %v", t.Shape)
			}
		}
		if n, ok := checkedNumel(t.Shape, math.MaxInt64/8); !ok || uint64(len(t.Data)) != n*uint64(dtypeSize(t.DType)) {
			return fail("%d bytes of data for shape %v of %s", len(t.Data), t.Shape, t.DType)
		}
	}
	for k, v := range s.Metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return &FileError{File: name, Msg: fmt.Sprintf("metadata %q = %q is not valid UTF-8", k, v)}
		}
	}
	return nil
}

// header returns the JSON header of s, padded with spaces so that the data
// buffer starts at a multiple of 8 bytes. Tensors are laid out in the order
// of s.Tensors; the metadata comes first, its keys sorted.
func (s *Safetensors) header() []byte {
	var h bytes.Buffer
	h.WriteByte('{')
	quote := func(str string) {
		q, _ := json.Marshal(str) // cannot fail on a string
		h.Write(q)
	}
	if len(s.Metadata) > 0 {
		quote(metadataKey)
		h.WriteString(":{")
		keys := make([]string, 0, len(s.Metadata))
		for k := range s.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			quote(k)
			h.WriteByte(':')
			quote(s.Metadata[k])
		}
		h.WriteByte('}')
	}
	var at int
	for i, t := range s.Tensors {
		if i > 0 || len(s.Metadata) > 0 {
			h.WriteByte(',')
		}
		quote(t.Name)
		h.WriteString(`:{"dtype":`)
		quote(t.DType)
		h.WriteString(`,"shape":[`)
		for j, d := range t.Shape {
			if j > 0 {
				h.WriteByte(',')
			}
			h.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&h, `],"data_offsets":[%d,%d]}`, at, at+len(t.Data))
		at += len(t.Data)
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	return h.Bytes()
}

// WriteTo writes s in the safetensors format to w: the tensors' data in the
// order of s.Tensors, the metadata (if any) first in the header, the header
// padded with spaces to a multiple of 8 bytes. It returns a *FileError (with
// File "safetensors") if s is invalid: an empty, repeated or non-UTF-8 name,
// an unknown dtype, data that does not fill its shape.
func (s *Safetensors) WriteTo(w io.Writer) (int64, error) {
	return s.writeTo(w, "safetensors")
}

func (s *Safetensors) writeTo(w io.Writer, name string) (int64, error) {
	if err := s.validate(name); err != nil {
		return 0, err
	}
	hdr := s.header()
	var n8 [8]byte
	binary.LittleEndian.PutUint64(n8[:], uint64(len(hdr)))
	var total int64
	for _, b := range append([][]byte{n8[:], hdr}, rawData(s.Tensors)...) {
		k, err := w.Write(b)
		total += int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func rawData(ts []RawTensor) [][]byte {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		out[i] = t.Data
	}
	return out
}

// Marshal returns s in the safetensors format (see WriteTo).
func (s *Safetensors) Marshal() ([]byte, error) {
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFile writes s in the safetensors format (see WriteTo) to path,
// atomically: into a temporary file in the same directory, synced to disk,
// then renamed over path. On any error path is left as it was and the
// temporary file is removed. Errors are *FileError values naming path.
func (s *Safetensors) WriteFile(path string) error {
	if err := s.validate(path); err != nil {
		return err
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := s.writeTo(w, path)
		return err
	})
}

// TempPattern is the pattern of the temporary files that atomic writes of
// path create beside it (as os.CreateTemp takes it): a dot, path's base
// name, ".tmp-" and a random suffix. A process killed while writing leaves
// one behind; RemoveTemporaries removes them.
func TempPattern(path string) string { return "." + filepath.Base(path) + ".tmp-*" }

// RemoveTemporaries removes the temporary files of interrupted atomic
// writes of path (those matching TempPattern in path's directory) and
// returns their names. Call it only when no other process is writing path:
// a write in progress loses its temporary file and fails.
func RemoveTemporaries(path string) ([]string, error) {
	dir := filepath.Dir(path)
	prefix := strings.TrimSuffix(TempPattern(path), "*")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		m := filepath.Join(dir, e.Name())
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, m)
	}
	return removed, nil
}

// WriteFileAtomic writes path through write into a temporary file in the
// same directory (TempPattern), syncs it, and renames it over path, so
// that a reader never sees a partial file and a failed or killed write
// leaves the old one. Errors are *FileError values naming path.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPattern(path))
	if err != nil {
		return &FileError{File: path, Msg: "cannot create a temporary file", Err: err}
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		if _, ok := err.(*FileError); ok {
			return err
		}
		return &FileError{File: path, Msg: "cannot write", Err: err}
	}
	if err := bw.Flush(); err != nil {
		return &FileError{File: path, Msg: "cannot write", Err: err}
	}
	if err := f.Chmod(0o644); err != nil {
		return &FileError{File: path, Msg: "cannot set permissions", Err: err}
	}
	if err := f.Sync(); err != nil {
		return &FileError{File: path, Msg: "cannot sync", Err: err}
	}
	if err := f.Close(); err != nil {
		return &FileError{File: path, Msg: "cannot close", Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		return &FileError{File: path, Msg: "cannot rename the temporary file into place", Err: err}
	}
	// Make the rename durable; not every file system can sync a directory,
	// and the file itself is complete either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
