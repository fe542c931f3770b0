//go:build !purego

package tensor

import "golang.org/x/sys/cpu"

// winoAVX512 reports whether the transforms' elementwise loops run in
// winograd_amd64.s.
var winoAVX512 = cpu.X86.HasAVX512F

// winoCombineAVX512 is winoCombine on n float32 elements of each operand.
//
//go:noescape
func winoCombineAVX512(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)

// winoDownAVX512 is winoDown on n float32 elements of each operand.
//
//go:noescape
func winoDownAVX512(a, b, m0, m1, m2, m3 *float32, n int, bias float32)
