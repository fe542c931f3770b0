//go:build !purego

package tensor

import "golang.org/x/sys/cpu"

// axpyAVX reports whether axpyAVX512 can run.
var axpyAVX = cpu.X86.HasAVX512F

// axpyAVX512 sets y[i] += a·x[i] for i < n.
//
//go:noescape
func axpyAVX512(a float32, x, y *float32, n int)
