//go:build (!amd64 && !arm64) || purego

package isa

import "runtime"

// detect returns Generic: the purego build, and GOARCHes other than
// amd64 and arm64, have no assembly kernels.
func detect() (Path, string) {
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		return Generic, "the purego build"
	}
	return Generic, "GOARCH=" + runtime.GOARCH
}
