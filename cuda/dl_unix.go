//go:build darwin || freebsd || linux || netbsd

package cuda

import (
	"fmt"
	"syscall"

	"github.com/ebitengine/purego"
)

// canLoad reports whether this system loads shared libraries through
// purego's dlopen (the systems purego supports it on).
const canLoad = true

// dlopen loads the shared library at path (a bare name: from the loader's
// search path), its symbols bound now and visible to the libraries loaded
// after it.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// dlsym returns the address of the symbol name of the library h.
func dlsym(h uintptr, name string) (uintptr, error) { return purego.Dlsym(h, name) }

func newCMemory(n int) (cMemory, error) {
	m, err := syscall.Mmap(-1, 0, max(n, 1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("cuda: mmap: %w", err)
	}
	return m, nil
}

func (m cMemory) free() { syscall.Munmap(m) }
