//go:build arm64 && !purego

package isa

// detect returns NEON: Advanced SIMD is part of every ARMv8-A CPU (the Go
// toolchain's own arm64 assembly assumes it too).
func detect() (Path, string) { return NEON, "this CPU" }
