//go:build (!amd64 && !arm64) || purego

package tensor

// vecPaths64 returns the float64 kernel paths this program can run,
// fastest first: here only the pure-Go one.
func vecPaths64() []vecPath64 { return []vecPath64{goPath64} }
