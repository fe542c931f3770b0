//go:build race

package tensor

// raceOn reports whether the race detector is on: its instrumentation
// allocates where the code does not.
const raceOn = true
