//go:build race

package tensor_test

// raceEnabled: the race detector's instrumentation allocates, so the
// allocation tests skip under it.
const raceEnabled = true
