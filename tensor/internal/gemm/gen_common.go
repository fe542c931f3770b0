//go:build ignore

// gen_common is what the generators of the micro-kernels of packages
// sgemm and dgemm (gen_avx512.go, gen_avx2.go, gen_sse2.go, gen_neon.go)
// share: the output, the precision their command line names and the
// kernels' argument frame. It is run with each, in the package's
// directory, as the packages' go:generate directives do:
//
//	go run ../gemm/gen_sse2.go ../gemm/gen_common.go sgemm
package main

import (
	"fmt"
	"os"
	"strings"
)

var out strings.Builder

func w(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// The package and its element type, set by setup.
var (
	pkg    string // sgemm or dgemm
	typ    string // float32 or float64
	es     int    // bytes an element
	letter string // the element's letter in mnemonics: S (single) or D (double)
)

// The kernels' argument frame (func(k int, a *T, ka int, b *T, ldb int,
// c *T, ldc int, alpha, beta T, rows int, mask uint32, bias *T)), for
// asmdecl's names: alpha and beta es bytes each, then rows and mask 8
// bytes each (mask padded), then bias. Set by setup.
const offAlpha = 56

var offBeta, offRows, offMask, offBias, frame int

// setup sets the package and its element type from the command line
// (sgemm or dgemm); gen names the generator in the messages.
func setup(gen string) {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: go run %s.go gen_common.go sgemm|dgemm\n", gen)
		os.Exit(2)
	}
	switch pkg = os.Args[1]; pkg {
	case "sgemm":
		typ, es, letter = "float32", 4, "S"
	case "dgemm":
		typ, es, letter = "float64", 8, "D"
	default:
		fmt.Fprintf(os.Stderr, "%s: want the package, sgemm or dgemm, not %q\n", gen, pkg)
		os.Exit(2)
	}
	offBeta = offAlpha + es
	offRows = offAlpha + 2*es
	offMask = offRows + 8
	offBias = offMask + 8
	frame = offBias + 8
}

// finish writes the text written by w to file name through a temporary
// file renamed over it, so that a failed run leaves the old file whole.
func finish(name string) {
	f, err := os.CreateTemp(".", name+".tmp*")
	if err == nil {
		_, err = f.WriteString(out.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(f.Name(), name)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
