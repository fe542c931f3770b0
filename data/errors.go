package data

import (
	"fmt"
	"strings"
)

// FormatError reports a malformed data file: which file, where in it, and
// what is wrong. Readers return it for every problem found in a file's
// contents, and for a read that fails midway (wrapping the read error). An
// error opening a file (missing, no permission) is not a FormatError: it
// wraps the *fs.PathError.
//
// A binary position is a byte offset from the start of the file, counted in
// the decompressed data when the file is gzip-compressed (Gzip is then true).
// A text position is a 1-based line number.
type FormatError struct {
	File   string // the file's name as given to the reader
	Offset int64  // byte offset of the problem in a binary file, or -1
	Line   int    // 1-based line of the problem in a text file, or 0
	Gzip   bool   // Offset counts decompressed bytes
	Msg    string // what is wrong
	Err    error  // the underlying error, if any
}

// Error formats the error as "data: FILE: byte offset N: MSG" for binary
// files and "data: FILE:LINE: MSG" for text files.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("data: ")
	b.WriteString(e.File)
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d: ", e.Line)
	case e.Offset >= 0 && e.Gzip:
		fmt.Fprintf(&b, ": decompressed byte offset %d: ", e.Offset)
	case e.Offset >= 0:
		fmt.Fprintf(&b, ": byte offset %d: ", e.Offset)
	default:
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *FormatError) Unwrap() error { return e.Err }
