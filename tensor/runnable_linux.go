package tensor

import (
	"sync"
	"syscall"
)

// loadavg is /proc/loadavg, opened once.
var loadavg = struct {
	once sync.Once
	fd   int
}{fd: -1}

// runnableThreads returns the number of threads runnable on the machine
// now, the kernel's count in the fourth field of /proc/loadavg ("1.02 0.71
// 0.50 3/412 8721": 3, the caller included), or −1 when it cannot be read.
// It allocates nothing after its first call.
func runnableThreads() int {
	loadavg.once.Do(func() {
		if fd, err := syscall.Open("/proc/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			loadavg.fd = fd
		}
	})
	if loadavg.fd < 0 {
		return -1
	}
	var buf [128]byte
	n, err := syscall.Pread(loadavg.fd, buf[:], 0)
	if err != nil || n <= 0 {
		return -1
	}
	return parseRunnable(buf[:n])
}
