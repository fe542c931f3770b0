package peakrss

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestMiB: where the system reports the peak, it is at least the memory
// this test just touched, and on Linux it agrees with VmHWM of
// /proc/self/status; elsewhere it is reported unavailable.
func TestMiB(t *testing.T) {
	const touched = 64 << 20
	b := make([]byte, touched)
	for i := range b {
		b[i] = byte(i)
	}
	mib, ok := MiB()
	runtime.KeepAlive(b)
	switch runtime.GOOS {
	case "darwin", "dragonfly", "freebsd", "ios", "linux", "netbsd", "openbsd":
		if !ok || mib < touched>>20 {
			t.Fatalf("MiB() = %g, %t after touching %d MiB", mib, ok, touched>>20)
		}
	default:
		if ok {
			t.Fatalf("MiB() = %g, true on %s, where it is not reported", mib, runtime.GOOS)
		}
		return
	}
	if runtime.GOOS != "linux" {
		return
	}
	hwm, ok := vmHWM(t)
	if !ok {
		t.Skip("no VmHWM in /proc/self/status")
	}
	// The kernel's two counters of the same mark: within a few MiB (the
	// reads are moments apart).
	if d := mib - hwm; d < -4 || d > 4 {
		t.Errorf("MiB() = %g, VmHWM %g MiB", mib, hwm)
	}
}

// vmHWM returns VmHWM of /proc/self/status in MiB.
func vmHWM(t *testing.T) (float64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fs := strings.Fields(rest)
			kb, err := strconv.ParseFloat(fs[0], 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb / 1024, true
		}
	}
	return 0, false
}
