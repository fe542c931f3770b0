//go:build !(darwin || dragonfly || freebsd || ios || linux || netbsd || openbsd)

package peakrss

// peak reports the figure unavailable: this system has no getrusage with
// ru_maxrss in package syscall.
func peak() (float64, bool) { return 0, false }
