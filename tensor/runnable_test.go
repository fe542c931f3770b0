package tensor

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestParseRunnable reads the runnable-thread count out of /proc/loadavg
// lines, and refuses lines without one.
func TestParseRunnable(t *testing.T) {
	for _, c := range []struct {
		line string
		want int
	}{
		{"0.77 1.62 1.66 1/79 9749\n", 1},
		{"12.00 8.50 4.25 37/1024 123456", 37},
		{"0.00 0.00 0.00 0/1 1", 0},
		{"0.77 1.62 1.66 /79 9749", -1},
		{"0.77 1.62 1.66 12 9749", -1},
		{"0.77 1.62 1.66 12", -1},
		{"0.77 1.62", -1},
		{"", -1},
	} {
		if got := parseRunnable([]byte(c.line)); got != c.want {
			t.Errorf("parseRunnable(%q) = %d, want %d", c.line, got, c.want)
		}
	}
}

// TestRunnableThreads: on Linux the count includes the calling thread, so
// it is at least 1; elsewhere it is unknown (−1).
func TestRunnableThreads(t *testing.T) {
	n := runnableThreads()
	if runtime.GOOS != "linux" {
		if n != -1 {
			t.Fatalf("runnableThreads() = %d off Linux, want -1", n)
		}
		return
	}
	if n < 1 {
		t.Fatalf("runnableThreads() = %d, want at least 1 (the caller)", n)
	}
	if a := testing.AllocsPerRun(20, func() { runnableThreads() }); a != 0 && !RaceEnabled {
		t.Fatalf("runnableThreads allocates %v times a call", a)
	}
}

// TestSpinAllowed drives spinAllowedBy with made-up counts of runnable threads
// at made-up times (far in the future, so that the pools of other tests,
// which call it with the real time, do not count): polling stays on through
// spinOverCounts−1 counts above the cores, goes off at the next, stays off
// for spinBackoff without counting, and comes back on at a count within
// the cores.
func TestSpinAllowed(t *testing.T) {
	defer func() {
		spinNext.Store(0)
		spinOver.Store(0)
		spinOff.Store(false)
	}()
	count, counted := 0, 0
	fake := func() int { counted++; return count }
	now := time.Now().Add(100 * 365 * 24 * time.Hour)
	step := func(d time.Duration, runnable int, want bool, what string) {
		t.Helper()
		now = now.Add(d)
		count = runnable
		if got := spinAllowedBy(now, fake); got != want {
			t.Fatalf("%s: spinAllowed = %v, want %v", what, got, want)
		}
	}
	cores := runtime.NumCPU()
	step(0, cores, true, "a count within the cores")
	for i := 1; i < spinOverCounts; i++ {
		step(spinCheck, cores+1, true, fmt.Sprintf("over-count %d", i))
	}
	step(spinCheck/2, cores+5, true, "within spinCheck of the last count (not counted)")
	step(spinCheck, cores+1, false, "the last over-count in a row")
	before := counted
	step(spinBackoff/2, 1, false, "during the back-off")
	if counted != before {
		t.Fatalf("counted during the back-off")
	}
	step(spinBackoff, 1, true, "after the back-off, a count within the cores")
	step(spinCheck, cores+1, true, "one over-count after coming back on")
}
