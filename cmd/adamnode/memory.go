package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// memUse is the memory one model's run took.
type memUse struct {
	rssMiB        float64 // resident-set high-water mark during the run
	rssCumulative bool    // the mark could not be reset: it is the process's peak so far
	heapMiB       float64 // largest sampled Go heap (objects, live or not yet swept)
}

// memWatch measures the memory of one stretch of the program: the peak RSS
// through Linux's resettable high-water mark (VmHWM, reset by writing 5 to
// /proc/self/clear_refs), and the peak Go heap by sampling runtime/metrics.
type memWatch struct {
	reset bool
	stopc chan struct{}
	wg    sync.WaitGroup
	heap  uint64
}

// heapMetric is the runtime/metrics name of the heap's object bytes.
const heapMetric = "/memory/classes/heap/objects:bytes"

// startMemWatch returns freed memory to the OS, resets the RSS high-water
// mark and starts sampling the heap every 10 ms.
func startMemWatch() *memWatch {
	debug.FreeOSMemory()
	w := &memWatch{stopc: make(chan struct{})}
	w.reset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		sample := []metrics.Sample{{Name: heapMetric}}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				w.heap = max(w.heap, sample[0].Value.Uint64())
			}
			select {
			case <-w.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the peaks.
func (w *memWatch) stop() memUse {
	close(w.stopc)
	w.wg.Wait()
	u := memUse{heapMiB: float64(w.heap) / (1 << 20)}
	if kb, ok := vmHWM(); ok && w.reset {
		u.rssMiB = float64(kb) / 1024
		return u
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.rssMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	u.rssCumulative = true
	return u
}

// vmHWM reads the RSS high-water mark in kB from /proc/self/status.
func vmHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}
