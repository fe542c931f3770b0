package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adamnode/adamnode/internal/peakrss"
	"github.com/adamnode/adamnode/layers"
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
	u.rssMiB, _ = peakrss.MiB() // 0 where the system does not report it
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

// memoryHeader is memory.csv's header: one row per model of a comparison.
var memoryHeader = []string{"model", "peak_rss_mib", "rss_cumulative", "peak_heap_mib"}

// loadMemory reads a comparison's memory.csv: each model's memory as its
// runs so far took it. A missing file is an empty map.
func loadMemory(path string) (map[string]memUse, error) {
	mem := map[string]memUse{}
	recs, err := readHeadedCSV(path, "memory", memoryHeader)
	if errors.Is(err, fs.ErrNotExist) {
		return mem, nil
	}
	if err != nil {
		return nil, err
	}
	for i, r := range recs {
		rss, err1 := strconv.ParseFloat(r[1], 64)
		cum, err2 := strconv.ParseBool(r[2])
		heap, err3 := strconv.ParseFloat(r[3], 64)
		if err := errors.Join(err1, err2, err3); err != nil || !(rss >= 0) || !(heap >= 0) {
			return nil, fmt.Errorf("%s: line %d: %q: want a model, two sizes in MiB and true or false", path, i+2, strings.Join(r, ","))
		}
		mem[r[0]] = memUse{rssMiB: rss, rssCumulative: cum, heapMiB: heap}
	}
	return mem, nil
}

// saveMemory records a run of model that took u in the memory.csv at
// path and returns the model's memory: for a model run before (a
// comparison resumed) the larger of each peak. The file is replaced whole
// (written to a temporary file, then renamed).
func saveMemory(path, model string, u memUse) (memUse, error) {
	mem, err := loadMemory(path)
	if err != nil {
		return u, err
	}
	if old, ok := mem[model]; ok {
		u = memUse{rssMiB: max(u.rssMiB, old.rssMiB), rssCumulative: u.rssCumulative || old.rssCumulative, heapMiB: max(u.heapMiB, old.heapMiB)}
	}
	mem[model] = u
	names := slices.Sorted(maps.Keys(mem))
	return u, layers.WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(memoryHeader); err != nil {
			return err
		}
		for _, name := range names {
			m := mem[name]
			g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
			if err := cw.Write([]string{name, g(m.rssMiB), strconv.FormatBool(m.rssCumulative), g(m.heapMiB)}); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}
