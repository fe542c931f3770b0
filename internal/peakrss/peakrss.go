// Package peakrss reads the peak resident set size of the process, where
// the operating system reports it (getrusage's ru_maxrss on Linux, macOS
// and the BSDs); elsewhere (Windows, among others) it says that the figure
// is unavailable, so that the benchmarks and the command-line tool build
// and run there too.
package peakrss

// MiB returns the peak resident set size of this process so far, in MiB,
// and false where this system does not report it.
func MiB() (float64, bool) { return peak() }
