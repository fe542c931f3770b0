package data

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// The first two bytes of every gzip stream (RFC 1952).
const gzipID1, gzipID2 = 0x1f, 0x8b

// source is the decompressed byte stream of one named input. It keeps the
// offset of the next byte so that errors can say where they happened.
type source struct {
	name string
	r    io.Reader
	gz   bool
	off  int64
}

// newSource wraps r, decompressing it when its first two bytes are the gzip
// magic. The file name is used only in error messages.
func newSource(r io.Reader, name string) (*source, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &FormatError{File: name, Offset: 0, Msg: "read error", Err: err}
	}
	s := &source{name: name, r: br}
	if len(head) == 2 && head[0] == gzipID1 && head[1] == gzipID2 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &FormatError{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		s.r, s.gz = zr, true
	}
	return s, nil
}

// errorf returns a *FormatError at byte offset off of the source.
func (s *source) errorf(off int64, format string, args ...any) *FormatError {
	return &FormatError{File: s.name, Offset: off, Gzip: s.gz, Msg: fmt.Sprintf(format, args...)}
}

// wrap returns a *FormatError for a read failure at the current offset.
func (s *source) wrap(err error) *FormatError {
	msg := "read error"
	if s.gz {
		msg = "corrupt or truncated gzip stream"
	}
	return &FormatError{File: s.name, Offset: s.off, Gzip: s.gz, Msg: msg, Err: err}
}

// fill reads len(buf) bytes. It returns the number read and nil when buf is
// full, io.EOF when the stream ended cleanly before that, or another error
// (including a gzip stream cut short, which gzip reports as
// io.ErrUnexpectedEOF).
func (s *source) fill(buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		// s.r is a bufio.Reader or a gzip.Reader over one, and bufio
		// turns a reader that never makes progress into an error.
		m, err := s.r.Read(buf[n:])
		n += m
		s.off += int64(m)
		if err != nil {
			if n == len(buf) && errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// readChunk is the most readN allocates ahead of the data actually read, so
// that a header claiming a huge payload cannot make the reader allocate
// memory the file does not back.
const readChunk = 1 << 20

// readN reads n bytes. On a short stream it returns what it read and io.EOF;
// on a read error, what it read and that error.
func (s *source) readN(n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunk))
	for int64(len(buf)) < n {
		want := int(min(n-int64(len(buf)), readChunk))
		buf = slices.Grow(buf, want)
		m, err := s.fill(buf[len(buf) : len(buf)+want])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// expectEOF checks that the stream has no data left. what names the data
// that should have been last, for the error message. Reading to the end also
// makes a gzip reader verify its checksum.
func (s *source) expectEOF(what string) error {
	var b [1]byte
	start := s.off
	n, err := s.fill(b[:])
	switch {
	case n > 0:
		return s.errorf(start, "unexpected data after %s", what)
	case errors.Is(err, io.EOF):
		return nil
	default:
		return s.wrap(err)
	}
}

// openFile opens the named file for one of the readers, which close it.
func openFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return f, nil
}
