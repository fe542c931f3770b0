//go:build !race

package tensor

// RaceEnabled reports whether the race detector is on: its instrumentation
// allocates where the code does not. (Exported for the package's external
// tests too.)
const RaceEnabled = false
