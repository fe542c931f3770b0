//go:build !amd64 || purego

package integrate

// errScaleKernels is "go": the scaling loop runs in Go (a variable, as on
// amd64, for the tests).
var errScaleKernels = "go"

// asmBuilt is false: this build has no assembly kernels.
const asmBuilt = false

func noAsm() { panic("odeblock: no assembly in this build") }

func errScaleAsm(e, y0, y1 *float32, n int, atol, rtol float32)   { noAsm() }
func errScale64Asm(e, y0, y1 *float64, n int, atol, rtol float64) { noAsm() }
func allFiniteAsm(x *float32, n int) bool                         { noAsm(); return false }
func allFinite64Asm(x *float64, n int) bool                       { noAsm(); return false }
