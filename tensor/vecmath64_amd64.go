//go:build !purego

package tensor

// vecPaths64 returns the float64 kernel paths this CPU can run, fastest
// first.
func vecPaths64() []vecPath64 { return []vecPath64{goPath64} }
