package tensor

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/blas"
)

// gemmFunc is a BLAS ?gemm: row-major C = alpha·op(A)·op(B) + beta·C.
type gemmFunc[T Float] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// biasGemmFunc computes C = alpha·op(A)·op(B) + 1·biasᵀ (bias[:n] added to
// each row), not reading C.
type biasGemmFunc[T Float] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias, c []T, ldc int)

// cpuEngine runs GEMM and convolution on the CPU through a BLAS gemm and a
// pool of worker goroutines.
type cpuEngine[T Float] struct {
	name      string
	workers   int
	splitGemm bool // split large GEMMs across workers (single-threaded BLAS)
	gemm      gemmFunc[T]
	gemmBias  biasGemmFunc[T]
	pool      *workerPool
	gemmJobs  sync.Pool     // *gemmJob[T]
	convJobs  sync.Pool     // *convJob[T]
	parJobs   sync.Pool     // *parJob
	linJobs   sync.Pool     // *linCombJob[T]: the Elementwise's split LinComb
	copyJobs  sync.Pool     // *copyJob[T]: the Elementwise's split Copy
	serial    *cpuEngine[T] // the same kernels on one worker (itself when workers is 1)
}

func newCPUEngine[T Float](name string, workers int, splitGemm bool, gemm gemmFunc[T], gemmBias biasGemmFunc[T]) *cpuEngine[T] {
	e := &cpuEngine[T]{name: name, workers: workers, splitGemm: splitGemm, gemm: gemm, gemmBias: gemmBias}
	e.pool = newWorkerPool(workers - 1)
	e.serial = e
	if workers > 1 {
		e.serial = newCPUEngine(name, 1, splitGemm, gemm, gemmBias)
	}
	// The workers hold only the task channel, so the engine can become
	// unreachable; then the channel is closed and the workers exit.
	runtime.AddCleanup(e, func(p *workerPool) { p.close() }, e.pool)
	return e
}

func (e *cpuEngine[T]) Name() string { return e.name }

// Workers returns the number of workers the engine splits its work over.
func (e *cpuEngine[T]) Workers() int { return e.workers }

// Serial returns the engine's kernels on one worker.
func (e *cpuEngine[T]) Serial() Engine[T] { return e.serial }

// Workers returns the number of workers e splits its kernels and Parallel
// calls over: what e's Workers method says, or 1 for an engine without
// one (a GPU engine, whose elementwise work runs on the calling goroutine).
func Workers[T Float](e Engine[T]) int {
	if w, ok := e.(interface{ Workers() int }); ok {
		return max(w.Workers(), 1)
	}
	return 1
}

// Serial returns an engine that computes as e does on the calling
// goroutine alone, splitting no GEMM and no Parallel call over workers: for
// code that runs its own parallelism above the kernels (autograd.RowShards
// evaluates shards of a batch concurrently, each shard's kernels on one
// core), so that concurrent kernels do not split again over the same
// workers. It is what e's Serial method returns, or e itself for an engine
// without one. (The float64 engine of the gonum backend keeps gonum's own
// threading inside its GEMMs where package dgemm's kernels do not run.)
func Serial[T Float](e Engine[T]) Engine[T] {
	if s, ok := e.(interface{ Serial() Engine[T] }); ok {
		return s.Serial()
	}
	return e
}

// minSplitFlops is the size below which a GEMM is not worth splitting. A
// polling worker takes a part in about a microsecond, and in a loop of
// GEMMs alone splitting pays from 2¹⁹ flops (BenchmarkGemmMLP); but in a
// model the operands were just written by the calling core and have to move
// to the other, and there splitting below 2²¹ made small MLP fields slower
// (width 64, batch 128: 2.4 → 2.9 ms per training iteration, mlpbench).
const minSplitFlops = 1 << 21

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Gemm implements Engine.
func (e *cpuEngine[T]) Gemm(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	e.runGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc)
}

// GemmBias implements BiasGemmer.
func (e *cpuEngine[T]) GemmBias(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias, c []T, ldc int) {
	e.runGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, 0, bias[:n], c, ldc)
}

// runGemm is Gemm, or GemmBias when bias is not nil (beta is then 0),
// split across the workers when large.
func (e *cpuEngine[T]) runGemm(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, bias, c []T, ldc int) {
	parts := e.workers
	if !e.splitGemm || 2*m*n*k < minSplitFlops {
		parts = 1
	}
	if parts == 1 {
		if bias != nil {
			e.gemmBias(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
			return
		}
		e.gemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	j := e.getGemmJob()
	// The job keeps its partial-product buffer from call to call (as
	// convJob its per-part buffers).
	*j = gemmJob[T]{gemm: e.gemm, gemmBias: e.gemmBias, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, bias: bias, c: c, ldc: ldc, parts: parts,
		partialBuf: j.partialBuf}
	if splitAlongK(m, n, k) {
		j.partialBuf = grow(j.partialBuf, (parts-1)*m*n)
		j.partial = j.partialBuf
	}
	e.pool.run(j, parts, &j.l)
	if j.partial != nil {
		for p := 1; p < parts; p++ {
			w := j.partial[(p-1)*m*n:]
			for i := range m {
				AxpySlice(1, w[i*n:i*n+n], c[i*ldc:i*ldc+n])
			}
		}
	}
	*j = gemmJob[T]{partialBuf: j.partialBuf}
	e.gemmJobs.Put(j)
}

// splitAlongK reports whether a GEMM is split along k rather than along m
// or n: when k is at least twice both, as in the weight gradient of a
// linear layer (m and n its widths, k the batch). Each part then reads the
// rows of the batch that its own core wrote in the forward pass (which
// splits along the batch), where split along m both would read all of them
// (an AdamNODE of width 118, batch 1290: the kernel of that product took
// 60% longer split along m than each replica's half-batch product).
func splitAlongK(m, n, k int) bool { return k >= 2*max(m, n) }

func (e *cpuEngine[T]) getGemmJob() *gemmJob[T] {
	if j, ok := e.gemmJobs.Get().(*gemmJob[T]); ok {
		return j
	}
	return new(gemmJob[T])
}

// gemmJob is one GEMM split into parts: along k (see splitAlongK), else
// along its larger output dimension.
type gemmJob[T Float] struct {
	l              latch
	gemm           gemmFunc[T]
	gemmBias       biasGemmFunc[T]
	transA, transB bool
	m, n, k        int
	alpha, beta    T
	a, b, c        []T
	bias           []T // nil for none
	lda, ldb, ldc  int
	parts          int
	// partial, when not nil, splits the product along k: part p > 0 writes
	// its m×n partial product (dense) at partial[(p−1)·m·n:], and runGemm
	// adds them into C.
	partial    []T
	partialBuf []T // partial's memory, kept while the job is reused
}

// run computes part p of the product: a band of the sum over k (when
// partial is set), of the rows of C (when m ≥ n) or of its columns.
func (j *gemmJob[T]) run(p int) {
	if j.partial != nil {
		j.runK(p)
		return
	}
	if j.m >= j.n {
		lo, hi := band(j.m, j.parts, p)
		if lo == hi {
			return
		}
		var a []T
		if j.transA {
			a = j.a[lo:] // columns lo.. of Aᵀ as stored
		} else {
			a = j.a[lo*j.lda:] // rows lo.. of A
		}
		j.part(hi-lo, j.n, a, j.b, j.bias, j.c[lo*j.ldc:])
		return
	}
	lo, hi := band(j.n, j.parts, p)
	if lo == hi {
		return
	}
	var b []T
	if j.transB {
		b = j.b[lo*j.ldb:] // rows lo.. of Bᵀ as stored
	} else {
		b = j.b[lo:] // columns lo.. of B
	}
	bias := j.bias
	if bias != nil {
		bias = bias[lo:]
	}
	j.part(j.m, hi-lo, j.a, b, bias, j.c[lo:])
}

// runK computes part p of a product split along k: the terms lo..hi−1 of
// the sum, into C (with beta and the bias) for part 0 and into its partial
// buffer for the others.
func (j *gemmJob[T]) runK(p int) {
	lo, hi := band(j.k, j.parts, p)
	a, b := j.a, j.b
	if j.transA {
		a = a[lo*j.lda:] // rows lo.. of Aᵀ as stored
	} else {
		a = a[lo:] // columns lo.. of A
	}
	if j.transB {
		b = b[lo:] // columns lo.. of Bᵀ as stored
	} else {
		b = b[lo*j.ldb:] // rows lo.. of B
	}
	if p == 0 {
		if j.bias != nil {
			j.gemmBias(trans(j.transA), trans(j.transB), j.m, j.n, hi-lo, j.alpha, a, j.lda, b, j.ldb, j.bias, j.c, j.ldc)
			return
		}
		j.gemm(trans(j.transA), trans(j.transB), j.m, j.n, hi-lo, j.alpha, a, j.lda, b, j.ldb, j.beta, j.c, j.ldc)
		return
	}
	w := j.partial[(p-1)*j.m*j.n:][:j.m*j.n]
	if lo == hi {
		clear(w)
		return
	}
	j.gemm(trans(j.transA), trans(j.transB), j.m, j.n, hi-lo, j.alpha, a, j.lda, b, j.ldb, 0, w, j.n)
}

// part computes the m×n block of C at c from a and b, with the bias when
// not nil.
func (j *gemmJob[T]) part(m, n int, a, b, bias, c []T) {
	if bias != nil {
		j.gemmBias(trans(j.transA), trans(j.transB), m, n, j.k, j.alpha, a, j.lda, b, j.ldb, bias, c, j.ldc)
		return
	}
	j.gemm(trans(j.transA), trans(j.transB), m, n, j.k, j.alpha, a, j.lda, b, j.ldb, j.beta, c, j.ldc)
}

// Elementwise returns the engine's Elementwise: HostElementwise's methods
// with large tensors split across the engine's workers.
func (e *cpuEngine[T]) Elementwise() Elementwise[T] { return hostElementwise[T]{eng: e} }

// hostMemory marks the CPU engines as computing in host memory (OnDevice).
func (*cpuEngine[T]) hostMemory() {}

// Parallel implements Engine.
func (e *cpuEngine[T]) Parallel(n int, body func(lo, hi int)) {
	parts := min(e.workers, n)
	if parts <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	j, ok := e.parJobs.Get().(*parJob)
	if !ok {
		j = new(parJob)
	}
	j.body, j.n, j.parts = body, n, parts
	e.pool.run(j, parts, &j.l)
	j.body = nil
	e.parJobs.Put(j)
}

// parJob is one Parallel call.
type parJob struct {
	l        latch
	body     func(lo, hi int)
	n, parts int
}

func (j *parJob) run(p int) {
	if lo, hi := band(j.n, j.parts, p); lo < hi {
		j.body(lo, hi)
	}
}

// band returns the half-open range of items of part p when n items are cut
// into parts nearly equal bands.
func band(n, parts, p int) (lo, hi int) {
	return n * p / parts, n * (p + 1) / parts
}

// runner is a job split into numbered parts.
type runner interface{ run(part int) }

type task struct {
	r    runner
	part int
	l    *latch
}

// latch counts the parts of a job still running on the pool.
type latch struct {
	left atomic.Int32
	wg   sync.WaitGroup
}

func (l *latch) add(n int) {
	l.wg.Add(n)
	l.left.Add(int32(n))
}

// done marks one part finished: its last touch of the latch, which may be
// reused as soon as left reads 0. The WaitGroup goes first, so that a
// waiter that sees left reach 0 finds the WaitGroup at 0 too.
func (l *latch) done() {
	l.wg.Done()
	l.left.Add(-1)
}

// wait returns when every part has finished: it polls for up to spinWait,
// then blocks. A waiter woken from the WaitGroup still waits for left to
// reach 0, which follows within nanoseconds: until then a worker has yet to
// touch the latch, and the job holding it must not be reused.
func (l *latch) wait() {
	if spin(func() bool { return l.left.Load() == 0 }) {
		l.wg.Wait() // at 0 already
		return
	}
	l.wg.Wait()
	for l.left.Load() != 0 {
		runtime.Gosched()
	}
}

// spinWait is how long a worker that has run out of tasks, and a caller
// whose own part is done, poll before they block. Blocking costs a wake-up
// on each side of every parallel call, and under a hypervisor waking an
// idle virtual CPU takes tens of microseconds: on a 2-core KVM guest a
// [2048, 64]·[64, 64] product split in two ran slower than on one core
// (143 µs against 125 µs) when the workers blocked between calls. The
// solvers call the engine every few microseconds to a few hundred, so
// polling bridges the gaps; a pool idle for longer than spinWait costs
// nothing. This is what OpenMP runtimes do (OMP_WAIT_POLICY).
const spinWait = 200 * time.Microsecond

// spin polls ready until it reports true or spinWait has passed, and
// reports the last answer. It polls in a tight loop, yielding the processor
// every spinYield polls: a yield each time would take the scheduler's lock
// at every poll, and not yielding would starve the part it waits for when
// that part waits for the same processor (GOMAXPROCS 1).
//
// Polling pays only while the cores are the process's own: spin does not
// poll while more threads are runnable on the machine than it has cores
// (see spinAllowed).
func spin(ready func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if ready() {
			return true
		}
		if i%spinYield == 0 {
			if i == 0 {
				start = time.Now()
				if !spinAllowed(start) {
					return false
				}
			} else if time.Since(start) > spinWait {
				return false
			}
			runtime.Gosched()
		}
	}
}

// spinYield is the number of polls between yields in spin: a few
// microseconds.
const spinYield = 256

// spinCheck is how often spinAllowed counts the runnable threads while
// polling is allowed; spinOverCounts is how many counts in a row above the
// cores turn polling off, for spinBackoff. (A single count is not enough:
// one process training alone on 2 cores counted 3 or 4 runnable threads in
// 16 of 267 counts, the runtime's own threads and the system's.)
const (
	spinCheck      = 2 * time.Millisecond
	spinOverCounts = 5
	spinBackoff    = 50 * time.Millisecond
)

// spinNext is when spinAllowed counts the threads next (Unix ns), spinOver
// how many counts in a row found more threads than cores, and spinOff
// whether polling is off.
var (
	spinNext atomic.Int64
	spinOver atomic.Int32
	spinOff  atomic.Bool
)

// spinAllowed reports whether spin may poll: not once more threads than
// the machine has cores were runnable at spinOverCounts counts in a row
// (runnableThreads, counted every spinCheck; then not for spinBackoff;
// where the count is unknown, polling is allowed). Then a polling thread
// holds a core another thread, often another process's, waits for: two
// processes of 2 workers each training on 2 cores ran 35% slower with
// polling workers than with blocking ones.
func spinAllowed(now time.Time) bool { return spinAllowedBy(now, runnableThreads) }

// spinAllowedBy is spinAllowed with the threads counted by count.
func spinAllowedBy(now time.Time, count func() int) bool {
	t := now.UnixNano()
	if next := spinNext.Load(); t >= next && spinNext.CompareAndSwap(next, t+int64(spinCheck)) {
		if count() <= runtime.NumCPU() {
			spinOver.Store(0)
			spinOff.Store(false)
		} else if spinOver.Add(1) >= spinOverCounts {
			spinOver.Store(0)
			spinOff.Store(true)
			spinNext.Store(t + int64(spinBackoff))
		}
	}
	return !spinOff.Load()
}

// workerPool is a fixed set of goroutines that run parts of jobs. Dispatching
// a job allocates nothing.
type workerPool struct {
	tasks chan task
	once  sync.Once
}

func newWorkerPool(n int) *workerPool {
	p := &workerPool{tasks: make(chan task, 4*max(n, 1))}
	for range n {
		go p.work()
	}
	return p
}

// work runs tasks until the pool is closed, polling for the next one (see
// spinWait) before it blocks.
func (p *workerPool) work() {
	for {
		var t task
		ok := false
		if !spin(func() bool {
			select {
			case t, ok = <-p.tasks:
				return true
			default:
				return false
			}
		}) {
			t, ok = <-p.tasks
		}
		if !ok {
			return
		}
		t.r.run(t.part)
		t.l.done()
	}
}

func (p *workerPool) close() { p.once.Do(func() { close(p.tasks) }) }

// run runs parts 0..n−1 of r: part 0 on the calling goroutine, the others on
// the pool, and returns when all are done. l must be idle.
func (p *workerPool) run(r runner, n int, l *latch) {
	l.add(n - 1)
	for i := 1; i < n; i++ {
		p.tasks <- task{r: r, part: i, l: l}
	}
	r.run(0)
	l.wait()
}

// ConvParams are the stride and zero padding of a 2-D convolution, the same
// along both spatial axes. The zero value means stride 1, no padding.
type ConvParams struct {
	Stride int // step between output positions; 0 means 1
	Pad    int // zeros added on each side of each spatial axis
}

func (p ConvParams) stride() int { return max(p.Stride, 1) }

// convShape holds the sizes of one convolution.
type convShape struct {
	b, c, h, w     int // input
	co, kh, kw     int // filter
	oh, ow, stride int // output
	pad            int
	k, p           int // rows (C·KH·KW) and columns (OH·OW) of im2col
}

// pointwise reports whether the convolution is a 1×1, stride 1, pad 0
// product that needs no im2col.
func (s convShape) pointwise() bool {
	return s.kh == 1 && s.kw == 1 && s.stride == 1 && s.pad == 0
}

// ConvOutputSize returns the output size (H + 2·pad − k)/stride + 1 of a
// convolution along one axis of input size n and kernel size k, or 0 when the
// kernel does not fit.
func ConvOutputSize(n, k int, p ConvParams) int {
	span := n + 2*p.Pad - k
	if span < 0 {
		return 0
	}
	return span/p.stride() + 1
}

// checkConv checks the shapes of a convolution of x by w into y and returns
// its sizes; op names the pass in panic messages.
func checkConv(op string, xs, ws, ys []int, p ConvParams) convShape {
	if p.Stride < 0 || p.Pad < 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("negative stride %d or padding %d", p.Stride, p.Pad)})
	}
	if len(xs) != 4 || len(ws) != 4 || len(ys) != 4 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("want input [B,C,H,W], filter [Co,C,KH,KW], output [B,Co,OH,OW]; got %v, %v, %v", xs, ws, ys)})
	}
	s := convShape{b: xs[0], c: xs[1], h: xs[2], w: xs[3], co: ws[0], kh: ws[2], kw: ws[3], stride: p.stride(), pad: p.Pad}
	if ws[1] != s.c {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("filter shape %v does not fit input shape %v: %d input channels, want %d", ws, xs, ws[1], s.c)})
	}
	s.oh, s.ow = ConvOutputSize(s.h, s.kh, p), ConvOutputSize(s.w, s.kw, p)
	if ys[0] != s.b || ys[1] != s.co || ys[2] != s.oh || ys[3] != s.ow || s.oh == 0 || s.ow == 0 {
		panic(convOutputError(op, xs, ws, ys, s))
	}
	s.k, s.p = s.c*s.kh*s.kw, s.oh*s.ow
	return s
}

// convOutputError reports an output shape that does not fit a convolution.
// It is apart from checkConv so that the check itself allocates nothing.
func convOutputError(op string, xs, ws, ys []int, s convShape) *ShapeError {
	want := []int{s.b, s.co, s.oh, s.ow}
	return &ShapeError{Op: op, Msg: fmt.Sprintf("output shape %v does not fit input %v, filter %v, stride %d, pad %d (want %v)", ys, xs, ws, s.stride, s.pad, want)}
}

type convPass int

const (
	passForward convPass = iota
	passData
	passFilter
	// passDataDirect is passData for a stride-1 square kernel computed as
	// the forward convolution of dy by the flipped, transposed filter
	// (see dataAsForward): an im2col and a GEMM with the long inner
	// dimension Co·KH·KW, instead of a GEMM with inner dimension Co and a
	// col2im of many short row additions.
	passDataDirect
)

// convJob is one convolution pass split over the batch.
type convJob[T Float] struct {
	l          latch
	e          *cpuEngine[T]
	pass       convPass
	s          convShape
	x, w, y    []T // input, filter, output (or their gradients, per pass)
	b          []T // bias (forward) or its gradient (filter pass); nil for none
	accumulate bool
	parts      int
	col        [][]T     // per part: an im2col buffer
	s2         convShape // passDataDirect: the forward convolution of dy
	wt         []T       // passDataDirect: the flipped, transposed filter
	dw         [][]T     // per part ≥ 1: a partial filter gradient
	db         [][]T     // per part ≥ 1: a partial bias gradient

	// Winograd F(2×2, 3×3) (winograd.go): the transformed filter, and per
	// part the transformed input, the products (or the transformed output
	// gradient), the padded rows and the transformed filter gradient.
	wino         bool
	wu           []T
	wv, wm, wrow [][]T
	wdu          [][]T
}

func (e *cpuEngine[T]) getConvJob() *convJob[T] {
	if j, ok := e.convJobs.Get().(*convJob[T]); ok {
		return j
	}
	n := e.workers
	return &convJob[T]{col: make([][]T, n), dw: make([][]T, n), db: make([][]T, n), wv: make([][]T, n), wm: make([][]T, n), wrow: make([][]T, n), wdu: make([][]T, n)}
}

// runConv runs one pass, in parallel over the batch (each worker a band of
// samples with single-threaded GEMMs); with a batch of one, serially with each
// GEMM split across the workers.
func (e *cpuEngine[T]) runConv(pass convPass, s convShape, x, w, y, b []T, accumulate bool) {
	j := e.getConvJob()
	j.e, j.pass, j.s, j.x, j.w, j.y, j.b, j.accumulate = e, pass, s, x, w, y, b, accumulate
	j.parts = min(e.workers, s.b)
	if pass == passData {
		if s2, ok := dataAsForward(s); ok {
			j.pass, j.s2 = passDataDirect, s2
			j.wt = grow(j.wt, len(w))
			flipTranspose(j.wt, w, s)
			s = s2 // the im2col buffers below are sized for it
		}
	}
	j.wino = s.winograd(winoKernFor[T]().fast())
	switch {
	case j.wino:
		nv, nm, nr := winoSizes(s)
		for i := 0; i < j.parts; i++ {
			j.wv[i], j.wm[i], j.wrow[i] = grow(j.wv[i], nv), grow(j.wm[i], nm), grow(j.wrow[i], nr)
			if pass == passFilter {
				j.wdu[i] = grow(j.wdu[i], 16*s.co*s.c)
			}
		}
		switch j.pass {
		case passForward:
			j.wu = grow(j.wu, 16*s.co*s.c)
			winoFilter(j.wu, w, s.co, s.c)
		case passDataDirect:
			j.wu = grow(j.wu, 16*s.co*s.c)
			winoFilter(j.wu, j.wt, s.co, s.c)
		}
	case !s.pointwise():
		for i := 0; i < j.parts; i++ {
			j.col[i] = grow(j.col[i], s.k*s.p)
		}
	}
	if pass == passFilter {
		for i := 1; i < j.parts; i++ {
			j.dw[i] = grow(j.dw[i], s.co*s.k)
			j.db[i] = grow(j.db[i], s.co)
		}
	}
	if j.parts <= 1 {
		j.parts = 1
		j.run(0)
	} else {
		e.pool.run(j, j.parts, &j.l)
	}
	if pass == passFilter {
		for i := 1; i < j.parts; i++ {
			for k, v := range j.dw[i][:len(w)] {
				w[k] += v
			}
			if b != nil {
				for k, v := range j.db[i][:len(b)] {
					b[k] += v
				}
			}
		}
	}
	j.e, j.x, j.w, j.y, j.b = nil, nil, nil, nil, nil
	e.convJobs.Put(j)
}

// dataAsForward returns the shape of the forward convolution that
// computes the data pass of s, when there is one: for stride 1 and a square
// kernel with pad ≤ K−1,
//
//	dx[c, y, x] = Σ_{o,i,j} w'[c, o, i, j]·dy[o, y − pad' + i, x − pad' + j]
//
// with w'[c, o, i, j] = w[o, c, K−1−i, K−1−j] and pad' = K−1−pad, whose
// output is the input's size.
func dataAsForward(s convShape) (convShape, bool) {
	if s.stride != 1 || s.kh != s.kw || s.pad > s.kh-1 || s.pointwise() {
		return convShape{}, false
	}
	s2 := convShape{b: s.b, c: s.co, h: s.oh, w: s.ow, co: s.c, kh: s.kh, kw: s.kw, stride: 1, pad: s.kh - 1 - s.pad}
	s2.oh, s2.ow = s2.h+2*s2.pad-s2.kh+1, s2.w+2*s2.pad-s2.kw+1
	if s2.oh != s.h || s2.ow != s.w {
		return convShape{}, false
	}
	s2.k, s2.p = s2.c*s2.kh*s2.kw, s2.oh*s2.ow
	return s2, true
}

// flipTranspose sets wt[c, o, i, j] = w[o, c, K−1−i, K−1−j] for the
// filter w [Co, C, K, K] of s.
func flipTranspose[T Float](wt, w []T, s convShape) {
	kk := s.kh * s.kw
	for o := 0; o < s.co; o++ {
		for c := 0; c < s.c; c++ {
			src := w[(o*s.c+c)*kk : (o*s.c+c+1)*kk]
			dst := wt[(c*s.co+o)*kk : (c*s.co+o+1)*kk]
			for t := range kk {
				dst[kk-1-t] = src[t]
			}
		}
	}
}

// grow returns buf if it holds n elements, else a new slice of n.
func grow[T Float](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]T, n)
}

// run computes the samples of part p. With one part, GEMMs go through the
// engine and may themselves be split.
func (j *convJob[T]) run(p int) {
	lo, hi := band(j.s.b, j.parts, p)
	switch j.pass {
	case passForward:
		j.forward(p, lo, hi)
	case passDataDirect:
		j.dataDirect(p, lo, hi)
	case passData:
		j.data(p, lo, hi)
	case passFilter:
		j.filter(p, lo, hi)
	}
}

// forward is the forward pass over images lo..hi−1 (part p):
// y_b[Co,P] = W[Co,K] · col_b[K,P] (+ bias).
func (j *convJob[T]) forward(p, lo, hi int) {
	s := j.s
	xsz, ysz := s.c*s.h*s.w, s.co*s.p
	if j.wino {
		for b := lo; b < hi; b++ {
			j.winoConv(p, s, j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz], j.b, false)
		}
		return
	}
	for b := lo; b < hi; b++ {
		xb, yb := j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz]
		col := xb
		if !s.pointwise() {
			col = j.col[p]
			im2col(col, xb, s)
		}
		beta := T(0)
		if j.b != nil { // the bias first, each row filled in doubling copies; the GEMM adds to it
			for o, bv := range j.b[:s.co] {
				row := yb[o*s.p : (o+1)*s.p]
				row[0] = bv
				for n := 1; n < len(row); n *= 2 {
					copy(row[n:], row[:n])
				}
			}
			beta = 1
		}
		j.gemm(false, false, s.co, s.p, s.k, 1, j.w, s.k, col, s.p, beta, yb, s.p)
	}
}

// dataDirect is the data gradient as a convolution of dy (stride 1):
// dx_b[C,H·W] (+)= W'[C, Co·K·K] · im2col(dy_b).
func (j *convJob[T]) dataDirect(p, lo, hi int) {
	s, s2 := j.s, j.s2
	xsz, ysz := s.c*s.h*s.w, s.co*s.p
	if j.wino {
		for b := lo; b < hi; b++ {
			j.winoConv(p, s2, j.y[b*ysz:(b+1)*ysz], j.x[b*xsz:(b+1)*xsz], nil, j.accumulate)
		}
		return
	}
	beta := T(0)
	if j.accumulate {
		beta = 1
	}
	for b := lo; b < hi; b++ {
		dxb, dyb := j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz]
		col := j.col[p]
		im2col(col, dyb, s2)
		j.gemm(false, false, s2.co, s2.p, s2.k, 1, j.wt, s2.k, col, s2.p, beta, dxb, s2.p)
	}
}

// data is the data gradient through col2im: dcol_b[K,P] = Wᵀ · dy_b;
// dx_b (+)= col2im(dcol_b).
func (j *convJob[T]) data(p, lo, hi int) {
	s := j.s
	xsz, ysz := s.c*s.h*s.w, s.co*s.p
	for b := lo; b < hi; b++ {
		dxb, dyb := j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz]
		if s.pointwise() {
			beta := T(0)
			if j.accumulate {
				beta = 1
			}
			j.gemm(true, false, s.k, s.p, s.co, 1, j.w, s.k, dyb, s.p, beta, dxb, s.p)
			continue
		}
		col := j.col[p]
		j.gemm(true, false, s.k, s.p, s.co, 1, j.w, s.k, dyb, s.p, 0, col, s.p)
		if !j.accumulate {
			clear(dxb)
		}
		col2im(dxb, col, s)
	}
}

// filter is the filter gradient over images lo..hi−1:
// dw[Co,K] (+)= Σ_b dy_b · col_bᵀ, part p ≥ 1 into its own buffer.
func (j *convJob[T]) filter(p, lo, hi int) {
	s := j.s
	xsz, ysz := s.c*s.h*s.w, s.co*s.p
	dw := j.w
	beta := T(0)
	if p == 0 && j.accumulate {
		beta = 1
	}
	db := j.b
	if p > 0 {
		dw, db = j.dw[p], j.db[p]
	}
	if db != nil && beta == 0 {
		clear(db)
	}
	if j.wino {
		j.winoFilterPass(p, lo, hi, dw, db, beta != 0)
		return
	}
	for b := lo; b < hi; b++ {
		xb, dyb := j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz]
		col := xb
		if !s.pointwise() {
			col = j.col[p]
			im2col(col, xb, s)
		}
		j.gemm(false, true, s.co, s.k, s.p, 1, dyb, s.p, col, s.p, beta, dw, s.k)
		beta = 1
		if db != nil {
			for o := range db[:s.co] {
				db[o] += T(SumSlice(dyb[o*s.p : (o+1)*s.p]))
			}
		}
	}
}

// gemm runs one product of a pass: on the calling goroutine when the pass is
// split over the batch, else through the engine, which may split it.
func (j *convJob[T]) gemm(tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if j.parts == 1 {
		j.e.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	j.e.gemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Conv2D implements Engine.
func (e *cpuEngine[T]) Conv2D(y, x, w, b *Tensor[T], p ConvParams) {
	s := checkConv("Conv2D", x.shape, w.shape, y.shape, p)
	y.wrote()
	e.runConv(passForward, s, x.host(), w.host(), y.host(), biasData("Conv2D", b, s.co), false)
}

// biasData returns b's elements after checking that it is [co], or nil for
// a nil b.
func biasData[T Float](op string, b *Tensor[T], co int) []T {
	if b == nil {
		return nil
	}
	if len(b.shape) != 1 || b.shape[0] != co {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("bias of shape %v for %d output channels (want [%d])", b.shape, co, co)})
	}
	return b.host()
}

// Conv2DBackwardData implements Engine.
func (e *cpuEngine[T]) Conv2DBackwardData(dx, dy, w *Tensor[T], p ConvParams, accumulate bool) {
	s := checkConv("Conv2DBackwardData", dx.shape, w.shape, dy.shape, p)
	dx.wrote()
	e.runConv(passData, s, dx.data, w.host(), dy.host(), nil, accumulate)
}

// Conv2DBackwardFilter implements Engine.
func (e *cpuEngine[T]) Conv2DBackwardFilter(dw, db, dy, x *Tensor[T], p ConvParams, accumulate bool) {
	s := checkConv("Conv2DBackwardFilter", x.shape, dw.shape, dy.shape, p)
	dw.wrote()
	if db != nil {
		db.wrote()
	}
	e.runConv(passFilter, s, x.host(), dw.data, dy.host(), biasData("Conv2DBackwardFilter", db, s.co), accumulate)
}
