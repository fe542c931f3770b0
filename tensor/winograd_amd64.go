//go:build !purego

package tensor

import "github.com/adamnode/adamnode/tensor/internal/isa"

// winoAVX512 reports whether the kernel path is avx512, where the
// transforms' elementwise loops run in winograd_amd64.s (the tests run
// those kernels where it is true). On avx2 they run in
// winograd_avx2_amd64.s, the same bits, and Winograd takes the same
// threshold (see convShape.winograd).
var winoAVX512 = isa.Current() >= isa.AVX512

// winoKern is the kernels of the transforms' elementwise loops in float32:
// winograd_amd64.s on the avx512 kernel path, winograd_avx2_amd64.s on
// avx2, winograd_sse2_amd64.s on sse2, the Go loops on generic (tests
// switch it).
var winoKern = map[isa.Path]winoKernels{isa.AVX512: winoOnAVX512, isa.AVX2: winoOnAVX2, isa.SSE2: winoOnSSE2}[isa.Current()]

// winoHasAVX2 reports whether this CPU runs the AVX2 kernels, whatever
// path isa.Current chose: the tests run them on an AVX-512 CPU too.
var winoHasAVX2 = isa.AVX2.Runs(isa.Best())

// winoHasSSE2 reports whether this CPU runs the SSE2 kernels (every amd64
// CPU does), whatever path isa.Current chose.
var winoHasSSE2 = isa.SSE2.Runs(isa.Best())

// winoCombineAVX512 is winoCombine on n float32 elements of each operand.
//
//go:noescape
func winoCombineAVX512(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)

// winoDownAVX512 is winoDown on n float32 elements of each operand.
//
//go:noescape
func winoDownAVX512(a, b, m0, m1, m2, m3 *float32, n int, bias float32)

// splitAVX512 sets ev[r·dstStride+k] = src[r·srcStride+2k] for
// k < ⌈m/2⌉ and od[r·dstStride+k] = src[r·srcStride+2k+1] for k < ⌊m/2⌋,
// for each row r < rows.
//
//go:noescape
func splitAVX512(ev, od, src *float32, m, rows, srcStride, dstStride int)

// joinAVX512 sets, or with add adds to, dst[2k] = ev[k] and
// dst[2k+1] = od[k] for the indices of dst below m.
//
//go:noescape
func joinAVX512(dst, ev, od *float32, m int, add bool)

// winoInputChannelAVX512 is winoInput's two winoCombine passes for one
// channel in one (see winograd_amd64.s): from the parity planes at par
// (pl apart, rows we long) to the n positions of the 16 planes of v
// (plane apart).
//
//go:noescape
func winoInputChannelAVX512(v *float32, plane int, par *float32, pl, we, n int)

// winoOutputChannelAVX512 is winoOutput's six winoDown calls for one
// output channel in one (see winograd_amd64.s): from the products m
// (plane apart) to the four planes of st (n apart).
//
//go:noescape
func winoOutputChannelAVX512(st *float32, n int, m *float32, plane int, bias float32)

// winoOutputGradChannelAVX512 is winoOutputGrad's six winoCombine calls
// for one channel in one (see winograd_amd64.s): from dy's parity planes
// at st (n apart) to the planes of m (plane apart).
//
//go:noescape
func winoOutputGradChannelAVX512(m *float32, plane int, st *float32, n int)

// The AVX2 kernels of winograd_avx2_amd64.s: the AVX-512 ones above on
// YMM registers, the same bits. winoCombineAVX2, winoDownAVX2, splitAVX2
// and joinAVX2 take any length; the channel kernels need n ≥ 8 (they
// redo the last partial vector as the whole vector ending at n).

//go:noescape
func winoCombineAVX2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)

//go:noescape
func winoDownAVX2(a, b, m0, m1, m2, m3 *float32, n int, bias float32)

//go:noescape
func splitAVX2(ev, od, src *float32, m, rows, srcStride, dstStride int)

//go:noescape
func joinAVX2(dst, ev, od *float32, m int, add bool)

//go:noescape
func winoInputChannelAVX2(v *float32, plane int, par *float32, pl, we, n int)

//go:noescape
func winoOutputChannelAVX2(st *float32, n int, m *float32, plane int, bias float32)

//go:noescape
func winoOutputGradChannelAVX2(m *float32, plane int, st *float32, n int)

// The SSE2 kernels of winograd_sse2_amd64.s: winoCombine, winoDown,
// splitColumnRows and joinColumns on XMM registers, any length, the same
// bits as the Go loops. Every amd64 CPU runs them.

//go:noescape
func winoCombineSSE2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)

//go:noescape
func winoDownSSE2(a, b, m0, m1, m2, m3 *float32, n int, bias float32)

//go:noescape
func splitSSE2(ev, od, src *float32, m, rows, srcStride, dstStride int)

//go:noescape
func joinSSE2(dst, ev, od *float32, m int, add bool)
