//go:build race

package integrate

// raceEnabled reports whether the race detector is on: its sync.Pool
// drops some of what it is given, and its instrumentation allocates.
const raceEnabled = true
