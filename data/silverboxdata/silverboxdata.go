// Package silverboxdata holds the Silverbox benchmark recording in the
// binary: sb.csv.gz is the published sb.csv (V1 input and V2 output of the
// electronic circuit, 131072 samples at about 610 Hz), gzip-compressed. It is
// a package of its own so that only programs that use the recording carry
// its 0.9 MB.
//
// The Silverbox data set is a benchmark of nonlinear system identification
// (Wigren and Schoukens, "Three free data sets for development and
// benchmarking in nonlinear system identification", ECC 2013).
package silverboxdata

import (
	"bytes"
	_ "embed"

	"github.com/adamnode/adamnode/data"
)

//go:embed sb.csv.gz
var recording []byte

// Name is the file name the recording is known by in errors.
const Name = "sb.csv.gz (embedded)"

// Load reads the embedded recording with the preprocessing opts (see
// data.ReadSilverbox).
func Load(opts data.SilverboxOptions) (*data.Silverbox, error) {
	return data.ReadSilverbox(bytes.NewReader(recording), Name, opts)
}

// Compressed returns the gzip-compressed CSV, for writing it out. The
// caller must not modify it.
func Compressed() []byte { return recording }
