package cuda

import (
	"runtime"
	"strings"
	"testing"
)

// TestLoaderUnsupported: where this package cannot load shared libraries
// (Windows: dl_other.go), Available and Backend return an error that says
// so and names the system, and nothing panics; the package builds there.
func TestLoaderUnsupported(t *testing.T) {
	if canLoad {
		t.Skipf("%s loads the libraries (dl_unix.go)", runtime.GOOS)
	}
	want := "not supported on " + runtime.GOOS
	if ok, err := Available(); ok || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Available() = %t, %v; want false and an error saying %q", ok, err, want)
	}
	if _, err := Backend(0); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Backend(0): %v; want an error saying %q", err, want)
	}
	if _, err := newCMemory(8); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("newCMemory: %v; want an error saying %q", err, want)
	}
}
