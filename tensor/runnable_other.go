//go:build !linux

package tensor

// runnableThreads returns −1: the count of runnable threads is read only on
// Linux.
func runnableThreads() int { return -1 }
