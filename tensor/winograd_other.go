//go:build !amd64 || purego

package tensor

// winoAVX512 is false: the transforms run as Go loops.
const winoAVX512 = false

// winoKern is winoGo: there are no assembly kernels to switch to.
var winoKern = winoGo

// winoHasAVX2 is false: no AVX2 kernels in this build.
const winoHasAVX2 = false

// winoHasSSE2 is false: no SSE2 kernels in this build.
const winoHasSSE2 = false

func winoCombineAVX512(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoDownAVX512(a, b, m0, m1, m2, m3 *float32, n int, bias float32) {
	panic("tensor: no assembly transforms in this build")
}

func splitAVX512(ev, od, src *float32, m, rows, srcStride, dstStride int) {
	panic("tensor: no assembly transforms in this build")
}

func joinAVX512(dst, ev, od *float32, m int, add bool) {
	panic("tensor: no assembly transforms in this build")
}

func winoInputChannelAVX512(v *float32, plane int, par *float32, pl, we, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoOutputChannelAVX512(st *float32, n int, m *float32, plane int, bias float32) {
	panic("tensor: no assembly transforms in this build")
}

func winoOutputGradChannelAVX512(m *float32, plane int, st *float32, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoCombineAVX2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoDownAVX2(a, b, m0, m1, m2, m3 *float32, n int, bias float32) {
	panic("tensor: no assembly transforms in this build")
}

func splitAVX2(ev, od, src *float32, m, rows, srcStride, dstStride int) {
	panic("tensor: no assembly transforms in this build")
}

func joinAVX2(dst, ev, od *float32, m int, add bool) {
	panic("tensor: no assembly transforms in this build")
}

func winoInputChannelAVX2(v *float32, plane int, par *float32, pl, we, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoOutputChannelAVX2(st *float32, n int, m *float32, plane int, bias float32) {
	panic("tensor: no assembly transforms in this build")
}

func winoOutputGradChannelAVX2(m *float32, plane int, st *float32, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoCombineSSE2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int) {
	panic("tensor: no assembly transforms in this build")
}

func winoDownSSE2(a, b, m0, m1, m2, m3 *float32, n int, bias float32) {
	panic("tensor: no assembly transforms in this build")
}

func splitSSE2(ev, od, src *float32, m, rows, srcStride, dstStride int) {
	panic("tensor: no assembly transforms in this build")
}

func joinSSE2(dst, ev, od *float32, m int, add bool) {
	panic("tensor: no assembly transforms in this build")
}
