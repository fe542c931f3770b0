package gemm

import "unsafe"

// ptrAdd returns the address of the i-th element after p.
func ptrAdd(p *float64, i int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(p), i*8)
}
