package layers

import (
	"encoding/json"
	"fmt"
	"math"
)

// MaxHeaderLen is the longest safetensors header, in bytes, that
// ParseSafetensors and ReadSafetensorsFile accept: the reference
// implementation's limit (its MAX_HEADER_SIZE). A longer header length is
// refused before anything is read or allocated for it.
const MaxHeaderLen = 100_000_000

// hdrScanner reads the JSON of a safetensors header in one pass over its
// bytes. It allocates only what the parse returns (the tensors' names and
// shapes, the metadata's strings) and a scratch slice, so that a header of
// many small entries costs a small multiple of its size: with
// encoding/json, a Decoder and a RawMessage per entry cost about 40 times
// the header.
type hdrScanner struct {
	b    []byte
	i    int     // the next byte to read
	ints []int64 // scratch for an array of integers
}

// syntaxError is malformed JSON in the header. It is the header's error,
// not that of the tensor whose entry it is in.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d in the header", e.msg, e.off)
}

func (s *hdrScanner) syntax(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), off: s.i}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *hdrScanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// what names the next value, for errors.
func (s *hdrScanner) what() string {
	switch c := s.peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || isDigit(c):
		return "a number"
	case s.i >= len(s.b):
		return "the end of the header"
	default:
		return fmt.Sprintf("%q", c)
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// str reads a JSON string and returns its contents: a slice of the header
// when the string has no escapes, else a decoded copy.
func (s *hdrScanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.syntax("want a string, have %s", s.what())
	}
	start, escaped := s.i+1, false
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			if !escaped {
				return s.b[start:j:j], nil
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:j+1], &out); err != nil {
				s.i = start - 1
				return nil, s.syntax("bad string: %v", err)
			}
			return []byte(out), nil
		case c == '\\':
			escaped = true
			j++ // the escaped byte cannot end the string
		case c < 0x20:
			s.i = j
			return nil, s.syntax("control character %q in a string", c)
		}
	}
	s.i = len(s.b)
	return nil, s.syntax("unterminated string")
}

// object reads a JSON object, calling f with each key when the scanner is
// at the key's value, which f must read. The key aliases the header or a
// decoded copy: f copies what it keeps. A value that is not an object is
// an error (not a syntax error: the JSON may be valid).
func (s *hdrScanner) object(f func(key []byte) error) error {
	if s.peek() != '{' {
		return fmt.Errorf("want a JSON object, have %s", s.what())
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.syntax("want ':' after the key %q, have %s", key, s.what())
		}
		s.i++
		if err := f(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.syntax("want ',' or '}' after the value of %q, have %s", key, s.what())
		}
	}
}

// integers reads a JSON array of integers (in int64's range) into the
// scanner's scratch slice, valid until the next call; what names the
// array in errors.
func (s *hdrScanner) integers(what string) ([]int64, error) {
	if s.peek() != '[' {
		return nil, fmt.Errorf("%s is not an array", what)
	}
	s.i++
	s.ints = s.ints[:0]
	if s.peek() == ']' {
		s.i++
		return s.ints, nil
	}
	for {
		v, err := s.integer(what)
		if err != nil {
			return nil, err
		}
		s.ints = append(s.ints, v)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return s.ints, nil
		default:
			return nil, s.syntax("want ',' or ']' in %s, have %s", what, s.what())
		}
	}
}

// integer reads a JSON number that must be an integer in int64's range.
func (s *hdrScanner) integer(what string) (int64, error) {
	if c := s.peek(); c != '-' && !isDigit(c) {
		return 0, fmt.Errorf("%s: want an integer, have %s", what, s.what())
	}
	start := s.i
	neg := s.b[s.i] == '-'
	if neg {
		s.i++
	}
	digits, u, over := s.i, uint64(0), false
	for ; s.i < len(s.b) && isDigit(s.b[s.i]); s.i++ {
		d := uint64(s.b[s.i] - '0')
		if u > (math.MaxUint64-d)/10 {
			over = true
		}
		u = u*10 + d
	}
	switch n := s.i - digits; {
	case n == 0:
		return 0, s.syntax("want digits after '-', have %s", s.what())
	case n > 1 && s.b[digits] == '0':
		return 0, s.syntax("number with a leading zero")
	}
	integral := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return 0, s.syntax("want digits after '.'")
		}
		integral = false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return 0, s.syntax("want digits in the exponent")
		}
		integral = false
	}
	tok := s.b[start:s.i]
	switch {
	case !integral:
		return 0, fmt.Errorf("%s: %s is not an integer", what, tok)
	case over || (!neg && u > math.MaxInt64) || (neg && u > 1<<63):
		return 0, fmt.Errorf("%s: %s is out of range", what, tok)
	case neg:
		return int64(-u), nil // -u wraps to the two's complement: right for 1<<63 too
	}
	return int64(u), nil
}

// digits skips a run of decimal digits and reports whether there was one.
func (s *hdrScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		s.i++
	}
	return s.i > start
}

// dtypeName returns the dtype constant spelled by b (without allocating),
// or "" if b names none of the format's dtypes.
func dtypeName(b []byte) string {
	switch string(b) {
	case "BOOL":
		return "BOOL"
	case "U8":
		return "U8"
	case "I8":
		return "I8"
	case "F8_E5M2":
		return "F8_E5M2"
	case "F8_E4M3":
		return "F8_E4M3"
	case "I16":
		return "I16"
	case "U16":
		return "U16"
	case "F16":
		return "F16"
	case "BF16":
		return "BF16"
	case "I32":
		return "I32"
	case "U32":
		return "U32"
	case F32:
		return F32
	case "I64":
		return "I64"
	case "U64":
		return "U64"
	case F64:
		return F64
	}
	return ""
}

// entry reads one tensor's header entry into e (its dtype and shape) and
// returns its data offsets.
func (s *hdrScanner) entry(e *RawTensor) (begin, end uint64, err error) {
	fields := [...]string{"dtype", "shape", "data_offsets"}
	var have [len(fields)]bool
	err = s.object(func(key []byte) error {
		k := -1
		switch string(key) {
		case "dtype":
			k = 0
		case "shape":
			k = 1
		case "data_offsets":
			k = 2
		default:
			return fmt.Errorf("unknown field %q", key)
		}
		if have[k] {
			return fmt.Errorf("key %q appears twice", key)
		}
		have[k] = true
		switch k {
		case 0:
			if s.peek() != '"' {
				return fmt.Errorf("dtype is not a string")
			}
			v, err := s.str()
			if err != nil {
				return err
			}
			if e.DType = dtypeName(v); e.DType == "" {
				return fmt.Errorf("unknown dtype %q", v)
			}
		case 1:
			dims, err := s.integers("shape")
			if err != nil {
				return err
			}
			for _, d := range dims {
				if d < 0 || int64(int(d)) != d {
					return fmt.Errorf("bad dimension %d in shape %v", d, dims)
				}
			}
			e.Shape = make([]int, len(dims))
			for i, d := range dims {
				e.Shape[i] = int(d)
			}
		case 2:
			offs, err := s.integers("data_offsets")
			if err != nil {
				return err
			}
			if len(offs) != 2 {
				return fmt.Errorf("data_offsets has %d entries, want [begin, end]", len(offs))
			}
			if offs[0] < 0 || offs[1] < 0 {
				return fmt.Errorf("data_offsets %v: an offset is negative", offs)
			}
			begin, end = uint64(offs[0]), uint64(offs[1])
		}
		return nil
	})
	if err != nil {
		if _, ok := err.(*syntaxError); ok {
			return 0, 0, err
		}
		return 0, 0, fmt.Errorf("malformed header entry: %w", err)
	}
	for i, f := range fields {
		if !have[i] {
			return 0, 0, fmt.Errorf("header entry has no %q", f)
		}
	}
	return begin, end, nil
}

// metadata reads the "__metadata__" object: string keys to string values.
func (s *hdrScanner) metadata() (map[string]string, error) {
	m := make(map[string]string)
	err := s.object(func(key []byte) error {
		if _, dup := m[string(key)]; dup {
			return fmt.Errorf("key %q appears twice", key)
		}
		if s.peek() != '"' {
			return fmt.Errorf("value of %q is not a string", key)
		}
		v, err := s.str()
		if err != nil {
			return err
		}
		m[string(key)] = string(v)
		return nil
	})
	return m, err
}
