// Command kernelpath prints the instruction-set path that package tensor's
// own kernels take on this machine (tensor.KernelPath: avx512, avx2, sse2
// or generic; ADAMNODE_CPU honoured), or with -below the slower paths, one a
// line: those make test forces in turn through ADAMNODE_CPU.
//
//	go run ./internal/cmd/kernelpath [-below]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// archPaths are each GOARCH's kernel paths, fastest first; other GOARCHes
// have only the generic path.
var archPaths = map[string][]string{
	"amd64": {"avx512", "avx2", "sse2", "generic"},
	"arm64": {"neon", "generic"},
}

// paths are this GOARCH's kernel paths, fastest first.
var paths = pathsOf(runtime.GOARCH)

// pathsOf returns goarch's kernel paths, fastest first.
func pathsOf(goarch string) []string {
	if p, ok := archPaths[goarch]; ok {
		return p
	}
	return []string{"generic"}
}

// below returns the paths slower than p, fastest first.
func below(p string) []string {
	i := slices.Index(paths, p)
	if i < 0 {
		panic(fmt.Sprintf("kernelpath: tensor.KernelPath() = %q is none of %v", p, paths))
	}
	return paths[i+1:]
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("kernelpath", flag.ContinueOnError)
	fs.SetOutput(w)
	slower := fs.Bool("below", false, "print the paths slower than this machine's, one a line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*slower {
		_, err := fmt.Fprintln(w, tensor.KernelPath())
		return err
	}
	for _, p := range below(tensor.KernelPath()) {
		if _, err := fmt.Fprintln(w, p); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		os.Exit(2)
	}
}
