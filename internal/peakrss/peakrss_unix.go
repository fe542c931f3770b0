//go:build darwin || dragonfly || freebsd || ios || linux || netbsd || openbsd

package peakrss

import (
	"runtime"
	"syscall"
)

// peak returns ru_maxrss in MiB: in bytes on Darwin, in KiB elsewhere.
func peak() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	unit := float64(1 << 10)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		unit = 1
	}
	return float64(ru.Maxrss) * unit / (1 << 20), true
}
