//go:build !(darwin || freebsd || linux || netbsd)

package cuda

// canLoad is false: this package loads the CUDA libraries through dlopen,
// which this system does not have (on Windows the libraries are DLLs of
// other names, loaded otherwise: not supported yet). Available, and every
// backend constructor, return the error of unsupported.
const canLoad = false

func dlopen(path string) (uintptr, error) { return 0, unsupported(path) }

func dlsym(h uintptr, name string) (uintptr, error) { return 0, unsupported(name) }

func newCMemory(n int) (cMemory, error) { return nil, unsupported("memory for C calls") }

func (m cMemory) free() {}
