package cuda

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"unsafe"
	"weak"

	"github.com/adamnode/adamnode/tensor"
)

// CacheEnv names the environment variable holding the most device memory,
// in MiB, that a backend keeps for the copies of tensors (default 2048).
const CacheEnv = "ADAMNODE_CUDA_CACHE_MB"

// VerifyEnv names the environment variable that, set to 1, makes a backend
// check every reuse of a device copy against the tensor's host values and
// panic when they differ: a write that the tensor's version did not count
// (see tensor.Storage). It keeps a host copy of every device copy; it is
// for tests.
const VerifyEnv = "ADAMNODE_CUDA_VERIFY"

// defaultCacheMB is the cache limit without CacheEnv.
const defaultCacheMB = 2048

// Stats counts a backend's copies between host and device memory.
type Stats struct {
	Uploads, UploadBytes     int64 // host-to-device copies of operands
	Downloads, DownloadBytes int64 // device-to-host copies of results
	Reuses, ReuseBytes       int64 // operands found current on the device
	ResidentBytes            int64 // bytes of the tensors copied on the device now
	PoolBytes                int64 // device memory the copies' pool holds now

	// PeakBytes is the most device memory the backend had in use at once
	// since it was made or since ResetPeak: the pool's blocks that held
	// copies (each its block size, the tensor's bytes rounded up by at
	// most 25%) and the scratch buffers (GEMM operands of slices, cuDNN's
	// workspace). It is the measure of torch.cuda.max_memory_allocated
	// (the caching allocator's blocks of live tensors, rounded to its
	// block sizes, workspaces it serves included). Not counted: the
	// memory cuBLAS and cuDNN allocate themselves, the kernels' fixed
	// 34 KB of norm records (Kernels) and the CUDA context.
	PeakBytes int64
	// PeakPoolBytes is the most device memory the backend held from
	// cudaMalloc at once, the pool's chunks and the scratch buffers, free
	// blocks included (torch.cuda.max_memory_reserved).
	PeakPoolBytes int64
	// Launches is the number of the run-time kernels launched (Kernels'
	// Launches; cuBLAS's and cuDNN's own not counted).
	Launches int64
}

// StatsOf returns the copy counts of a backend made by Backend, and false
// for any other backend.
func StatsOf(b tensor.Backend) (Stats, bool) {
	g, ok := b.(*backend)
	if !ok {
		return Stats{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.cache.stats
	s.ResidentBytes = int64(g.cache.bytes)
	s.PoolBytes = int64(g.cache.pool.bytes)
	s.PeakBytes = int64(g.cache.peakUsed)
	s.PeakPoolBytes = int64(g.cache.peakHeld)
	if k := g.kernLoaded.Load(); k != nil {
		s.Launches = k.Launches()
	}
	return s, true
}

// ResetPeak starts the peaks of Stats (PeakBytes, PeakPoolBytes) again from
// the device memory a backend made by Backend has in use and holds now, as
// torch.cuda.reset_peak_memory_stats; it does nothing to other backends.
func ResetPeak(b tensor.Backend) {
	g, ok := b.(*backend)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cache.peakUsed, g.cache.peakHeld = 0, 0
	g.notePeak()
}

// notePeak raises the peaks to the device memory in use and held now.
// Called under the backend's mutex after every allocation.
func (b *backend) notePeak() {
	var scratch uintptr
	for _, d := range b.bufs {
		scratch += d.size
	}
	c := &b.cache
	c.peakUsed = max(c.peakUsed, c.pool.used+scratch)
	c.peakHeld = max(c.peakHeld, c.pool.bytes+scratch)
}

// residentKey identifies a tensor's elements: its storage, and the host
// address and byte length of the view.
type residentKey struct {
	st   weak.Pointer[tensor.Storage]
	addr uintptr
	size uintptr
}

// resident is the device copy of a tensor's elements.
type resident struct {
	ptr    uintptr        // a block of device memory of at least key.size bytes
	ver    uint64         // the storage version the copy holds
	valid  bool           // false: allocated, its values not yet those of ver
	newer  unsafe.Pointer // non-nil: the copy is newer than this host memory, its view's
	used   uint64         // the cache's clock at the last use
	shadow []byte         // in verify mode, the host bytes the copy holds
}

// cache is the backend's device copies of tensors, found by storage and
// view and checked by the storage version, in blocks of a pool of device
// memory, with the least recently used dropped when the pool would grow
// beyond the limit. A kernel's result stays on the device: its copy is
// newer than host memory (resident.newer), listed in newer by storage,
// and the storage is marked (tensor.Storage.MarkDeviceNewer) until a host
// access has SyncHost copy it back. Used under the backend's mutex.
type cache struct {
	entries map[residentKey]*resident
	watched map[residentKey]bool // keys with a cleanup registered on their storage
	newer   map[weak.Pointer[tensor.Storage]][]residentKey
	pool    pool    // the device memory the entries' blocks come from
	bytes   uintptr // bytes of the entries' tensors
	limit   uintptr // on the pool's device memory
	clock   uint64  // one tick per kernel: entries used in it are kept
	verify  bool
	stats   Stats

	peakUsed, peakHeld uintptr // Stats.PeakBytes and PeakPoolBytes
}

func newCache() cache {
	mb := defaultCacheMB
	if v, err := strconv.Atoi(os.Getenv(CacheEnv)); err == nil && v > 0 {
		mb = v
	}
	return cache{
		entries: map[residentKey]*resident{},
		watched: map[residentKey]bool{},
		newer:   map[weak.Pointer[tensor.Storage]][]residentKey{},
		limit:   uintptr(mb) << 20,
		verify:  os.Getenv(VerifyEnv) == "1",
	}
}

// tick starts a kernel: the entries it uses from now on are not dropped
// until the next tick.
func (b *backend) tick() { b.cache.clock++ }

// hostBytes returns t's host memory as bytes, as it is (HostMemory: under
// the backend's mutex, a sync would wait for it).
func hostBytes[T tensor.Float](t *tensor.Tensor[T]) []byte {
	d := t.HostMemory()
	if len(d) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), uintptr(len(d))*unsafe.Sizeof(T(0)))
}

// entry returns t's cache entry, making one (with device memory, invalid)
// the first time.
func entry[T tensor.Float](b *backend, t *tensor.Tensor[T]) *resident {
	c := &b.cache
	h := hostBytes(t)
	a, n := addr(h), uintptr(len(h))
	st := t.Storage()
	k := residentKey{st: weak.Make(st), addr: a, size: n}
	r, ok := c.entries[k]
	if !ok {
		r = &resident{ptr: b.alloc(n)}
		c.entries[k] = r
		c.bytes += n
		// The copy goes when the storage does: one cleanup per key, however
		// often its copy is dropped and made again.
		if !c.watched[k] {
			c.watched[k] = true
			runtime.AddCleanup(st, b.forget, k)
		}
	}
	r.used = c.clock
	return r
}

// in returns device memory holding t's current values: its copy when the
// storage version matches, else a fresh upload (after copying the
// storage's newer device values to the host).
func in[T tensor.Float](b *backend, t *tensor.Tensor[T]) uintptr {
	if t.Len() == 0 {
		return b.ensure(bufEmpty, 1)
	}
	c := &b.cache
	if e, off := enclosing(b, t); e != nil {
		// A part of a newer device copy: read in place.
		e.used = c.clock
		c.stats.Reuses++
		c.stats.ReuseBytes += int64(uintptr(t.Len()) * unsafe.Sizeof(T(0)))
		return e.ptr + off
	}
	r := entry(b, t)
	v, h := t.Version(), hostBytes(t)
	if r.valid && r.ver == v {
		if c.verify && r.newer == nil && !bytes.Equal(r.shadow, h) {
			panic(fmt.Errorf("cuda: a tensor of shape %v changed on the host but not its version: written through a slice that Data returned earlier, without MarkChanged", t.Shape()))
		}
		c.stats.Reuses++
		c.stats.ReuseBytes += int64(len(h))
		return r.ptr
	}
	b.syncHostLocked(t.Storage(), nil)
	must(b.l.rtCheck("cudaMemcpy", b.l.cudaMemcpy(r.ptr, addr(h), uintptr(len(h)), hostToDevice)))
	c.stats.Uploads++
	c.stats.UploadBytes += int64(len(h))
	r.ver, r.valid = v, true
	if c.verify {
		r.shadow = append(r.shadow[:0], h...)
	}
	return r.ptr
}

// out returns device memory for the result t: holding t's current values
// when the kernel accumulates into it, else only allocated. The storage's
// other device values newer than the host's are copied to the host first
// (t may cover only part of the storage).
func out[T tensor.Float](b *backend, t *tensor.Tensor[T], accumulate bool) uintptr {
	if accumulate {
		return in(b, t)
	}
	if t.Len() == 0 {
		return b.ensure(bufEmpty, 1)
	}
	if e, off := enclosing(b, t); e != nil {
		// A part of a newer device copy: written in place (produced
		// finds it again).
		e.used = b.cache.clock
		return e.ptr + off
	}
	r := entry(b, t)
	b.syncHostLocked(t.Storage(), r)
	r.valid = false
	return r.ptr
}

// enclosing returns the device copy of t's storage that is newer than
// host memory, holds the storage's current version and covers t's
// elements, with t's byte offset in it; nil when there is none. Its
// version being the storage's, no write came after it: it holds the
// newest values of all its elements, and a part of it (a view of the
// state, a block of a concatenation) is read or written there in place.
func enclosing[T tensor.Float](b *backend, t *tensor.Tensor[T]) (*resident, uintptr) {
	st := t.Storage()
	if !st.DeviceNewer() {
		return nil, 0
	}
	c := &b.cache
	h := hostBytes(t)
	a, n, v := addr(h), uintptr(len(h)), t.Version()
	for _, k := range c.newer[weak.Make(st)] {
		r := c.entries[k]
		if r == nil || r.newer == nil || !r.valid || r.ver != v {
			continue
		}
		if a >= k.addr && a+n <= k.addr+k.size {
			return r, a - k.addr
		}
	}
	return nil, 0
}

// producedIn records that a kernel wrote the result t in place in the
// newer copy e that covers it (enclosing): e takes the write's version.
// e is its storage's one newer copy (out copies a storage's other newer
// copies back before a kernel writes one of its own, and a write in
// place adds none), so nothing else of the storage is left stale.
func producedIn[T tensor.Float](t *tensor.Tensor[T], e *resident) {
	t.DeviceWrote()
	e.ver = t.Version()
}

// produced records that a kernel wrote the result t in its device copy
// (made by out): the write counts in t's version, the copy is current for
// it and newer than host memory, and t's storage is marked so that a host
// access copies it back (SyncHost). Nothing is copied now — unless t's
// memory came from FromSlice (Storage.Shared): its owner may read the
// slice directly, so the result is copied back at once.
func produced[T tensor.Float](b *backend, t *tensor.Tensor[T]) {
	if t.Len() == 0 {
		return
	}
	if e, _ := enclosing(b, t); e != nil {
		producedIn(t, e)
		return
	}
	r := entry(b, t)
	t.DeviceWrote()
	r.ver, r.valid = t.Version(), true
	st := t.Storage()
	if st.Shared() { // FromSlice's memory: its owner may read it any time
		h := hostBytes(t)
		must(b.l.rtCheck("cudaMemcpy", b.l.cudaMemcpy(addr(h), r.ptr, uintptr(len(h)), deviceToHost)))
		c := &b.cache
		c.stats.Downloads++
		c.stats.DownloadBytes += int64(len(h))
		if c.verify {
			r.shadow = append(r.shadow[:0], h...)
		}
		if downloadHook != nil {
			downloadHook(int64(len(h)))
		}
		return
	}
	if r.newer == nil {
		h := t.HostMemory()
		r.newer = unsafe.Pointer(&h[0])
		ws := weak.Make(st)
		c := &b.cache
		c.newer[ws] = append(c.newer[ws], residentKey{st: ws, addr: uintptr(r.newer), size: uintptr(len(h)) * unsafe.Sizeof(T(0))})
	}
	st.MarkDeviceNewer(b.mark)
}

// SyncHost copies every device copy of s's elements that is newer than
// host memory to the host, and clears s's mark (tensor.HostSyncer).
func (b *backend) SyncHost(s *tensor.Storage) {
	b.lock()
	defer b.unlock()
	b.syncHostLocked(s, nil)
}

// syncHostLocked copies s's device copies newer than host memory to the
// host, except keep's, and clears s's mark when none is left.
func (b *backend) syncHostLocked(s *tensor.Storage, keep *resident) {
	if !s.DeviceNewer() {
		return
	}
	c := &b.cache
	ws := weak.Make(s)
	left := c.newer[ws][:0]
	for _, k := range c.newer[ws] {
		r := c.entries[k]
		if r == nil || r.newer == nil {
			continue
		}
		if r == keep {
			left = append(left, k)
			continue
		}
		b.copyBack(k, r)
	}
	if len(left) > 0 {
		c.newer[ws] = left
		return
	}
	delete(c.newer, ws)
	s.ClearDeviceNewer()
}

// copyBack copies the newer device copy r of key k to its host memory.
func (b *backend) copyBack(k residentKey, r *resident) {
	c := &b.cache
	must(b.l.rtCheck("cudaMemcpy", b.l.cudaMemcpy(uintptr(r.newer), r.ptr, k.size, deviceToHost)))
	c.stats.Downloads++
	c.stats.DownloadBytes += int64(k.size)
	if c.verify {
		r.shadow = append(r.shadow[:0], unsafe.Slice((*byte)(r.newer), k.size)...)
	}
	r.newer = nil
	if downloadHook != nil {
		downloadHook(int64(k.size))
	}
}

// downloadHook, when a test sets it, is called with the size of every copy
// of a result to the host, on the goroutine that asked for it.
var downloadHook func(bytes int64)

// alloc returns a block of at least n bytes of device memory from the
// pool, making room under the limit first when the pool must grow.
func (b *backend) alloc(n uintptr) uintptr {
	c := &b.cache
	if p, ok := c.pool.get(n); ok {
		b.notePeak()
		return p
	}
	b.shrink(chunkSize(blockSize(n)))
	ch := new(chunk)
	ch.class = blockSize(n)
	size := chunkSize(ch.class)
	must(b.l.rtCheck("cudaMalloc", b.l.cudaMalloc(&ch.ptr, size)))
	c.pool.add(ch, size)
	p, _ := c.pool.get(n)
	b.notePeak()
	return p
}

// shrink makes room for n more bytes of pool under the limit: it frees
// the pool's unused chunks, then drops the copies whose storage is gone
// and the least recently used ones, except those of the current kernel,
// freeing each chunk they empty.
func (b *backend) shrink(n uintptr) {
	c := &b.cache
	if c.pool.bytes+n <= c.limit {
		return
	}
	b.releaseEmpty()
	for c.pool.bytes+n > c.limit {
		var victim residentKey
		var oldest *resident
		for k, r := range c.entries {
			if r.used == c.clock {
				continue
			}
			if k.st.Value() == nil {
				victim, oldest = k, r
				break
			}
			if oldest == nil || r.used < oldest.used {
				victim, oldest = k, r
			}
		}
		if oldest == nil {
			return // everything is in use by this kernel: go over the limit
		}
		b.drop(victim, oldest)
		b.releaseEmpty()
	}
}

// releaseEmpty frees the pool's chunks that hold no copy.
func (b *backend) releaseEmpty() {
	for _, ch := range b.cache.pool.takeEmpty() {
		must(b.l.rtCheck("cudaFree", b.l.cudaFree(ch.ptr)))
	}
}

// drop removes an entry and returns its block to the pool; a copy newer
// than host memory is copied back first while its storage lives.
func (b *backend) drop(k residentKey, r *resident) {
	c := &b.cache
	if r.newer != nil {
		if s := k.st.Value(); s != nil {
			b.copyBack(k, r)
			left := slices.DeleteFunc(c.newer[k.st], func(o residentKey) bool { return o == k })
			if len(left) == 0 {
				delete(c.newer, k.st)
				s.ClearDeviceNewer()
			} else {
				c.newer[k.st] = left
			}
		}
		r.newer = nil
	}
	delete(c.entries, k)
	c.bytes -= k.size
	c.pool.put(r.ptr)
}

// forget drops the entry of a storage that is gone (a cleanup).
func (b *backend) forget(k residentKey) {
	b.lock()
	defer b.unlock()
	delete(b.cache.watched, k)
	delete(b.cache.newer, k.st)
	if r, ok := b.cache.entries[k]; ok {
		b.drop(k, r)
	}
}

// The pool carves device memory into blocks of a few sizes: each chunk
// (one cudaMalloc, of at least minChunk bytes) holds blocks of one size,
// the request rounded up to a quarter of its power of two (at most 25%
// unused). This keeps cudaMalloc and cudaFree, which are slow and
// synchronise the device, out of the steady state, and the number of
// allocations small.
const (
	minBlock = 256
	minChunk = 2 << 20
)

// blockSize returns the block size that serves n bytes.
func blockSize(n uintptr) uintptr {
	if n <= minBlock {
		return minBlock
	}
	p := uintptr(1)
	for p*2 <= n {
		p *= 2
	}
	step := p / 4
	return (n + step - 1) / step * step
}

// chunkSize returns the size of a chunk of blocks of size class.
func chunkSize(class uintptr) uintptr {
	if class >= minChunk {
		return class
	}
	return minChunk / class * class
}

// chunk is one device allocation cut into blocks of one size.
type chunk struct {
	ptr   uintptr
	class uintptr   // the block size
	n     int       // number of blocks
	free  []uintptr // the free blocks
}

// pool is the device memory of the copies, by block size.
type pool struct {
	byClass map[uintptr][]*chunk
	owner   map[uintptr]*chunk // block → its chunk
	bytes   uintptr            // device bytes in chunks
	used    uintptr            // device bytes in blocks taken (get) and not put back
}

// get returns a free block of n bytes' size class, if there is one.
func (p *pool) get(n uintptr) (uintptr, bool) {
	for _, ch := range p.byClass[blockSize(n)] {
		if k := len(ch.free); k > 0 {
			b := ch.free[k-1]
			ch.free = ch.free[:k-1]
			p.used += ch.class
			return b, true
		}
	}
	return 0, false
}

// add puts a new chunk of size bytes into the pool, all its blocks free.
func (p *pool) add(ch *chunk, size uintptr) {
	if p.byClass == nil {
		p.byClass, p.owner = map[uintptr][]*chunk{}, map[uintptr]*chunk{}
	}
	ch.n = int(size / ch.class)
	for i := ch.n - 1; i >= 0; i-- {
		b := ch.ptr + uintptr(i)*ch.class
		ch.free = append(ch.free, b)
		p.owner[b] = ch
	}
	p.byClass[ch.class] = append(p.byClass[ch.class], ch)
	p.bytes += size
}

// put returns a block to its chunk.
func (p *pool) put(b uintptr) {
	ch := p.owner[b]
	ch.free = append(ch.free, b)
	p.used -= ch.class
}

// takeEmpty removes the chunks whose blocks are all free and returns them.
func (p *pool) takeEmpty() []*chunk {
	var out []*chunk
	for class, l := range p.byClass {
		kept := l[:0]
		for _, ch := range l {
			if len(ch.free) < ch.n {
				kept = append(kept, ch)
				continue
			}
			out = append(out, ch)
			for _, b := range ch.free {
				delete(p.owner, b)
			}
			p.bytes -= uintptr(ch.n) * ch.class
		}
		if len(kept) == 0 {
			delete(p.byClass, class)
		} else {
			p.byClass[class] = kept
		}
	}
	return out
}

// FreeCache drops every device copy of a backend made by Backend and frees
// the device memory of its pool and its scratch buffers (the next kernels
// upload their operands and allocate again); it does nothing to other
// backends.
func FreeCache(b tensor.Backend) {
	g, ok := b.(*backend)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, r := range g.cache.entries {
		g.drop(k, r)
	}
	g.releaseEmpty()
	for i := range g.bufs {
		if d := &g.bufs[i]; d.ptr != 0 {
			must(g.l.rtCheck("cudaFree", g.l.cudaFree(d.ptr)))
			*d = deviceBuf{}
		}
	}
}
