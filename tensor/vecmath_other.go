//go:build (!amd64 && !arm64) || purego

package tensor

// vecPaths returns the float32 kernel paths this program can run, fastest
// first: here only the pure-Go one.
func vecPaths() []vecPath { return []vecPath{goPath} }
