package enginetest

import (
	"math"
	"slices"
	"sync"

	"github.com/adamnode/adamnode/tensor"
)

// ParkingDevice is a fake device engine for the tests of code that keeps
// tensors on a device (an engine with a tensor.Elementwise): an Engine
// that computes with the CPU engine it wraps and, for its Elementwise,
// with tensor.HostElementwise, and then parks each result: the written
// elements move to the fake device's memory, host memory gets NaN in
// their place and the storage is marked as newer on the device
// (tensor.Storage.MarkDeviceNewer). A host read that brings the storage
// back (Storage.Sync, as every tensor method does) gets the values; one
// that reads host memory without it gets NaN, and a test of its results
// fails instead of passing on stale values. As a device engine must
// (tensor.Storage.Shared), it leaves results in memory handed to
// tensor.FromSlice on the host.
//
// It counts what a real device would copy to the host: the syncs made
// outside its own operations (with the elements they restore), and the
// numbers its reductions return. Its operations must not run
// concurrently (syncs from other goroutines may).
type ParkingDevice[T tensor.Float] struct {
	tensor.Engine[T]
	mark *tensor.DeviceMark
	ew   parkedElementwise[T]

	mu      sync.Mutex
	inOp    int
	pending map[*tensor.Storage][]parked[T]
	reads   []parkedAt[T] // the regions an operation brought back, parked again after it
	syncs   int
	synced  int
	numbers int
}

// parked is one parked region: the host memory and the values the
// device holds for it.
type parked[T tensor.Float] struct {
	host, dev []T
}

// parkedAt is a region and its storage.
type parkedAt[T tensor.Float] struct {
	s    *tensor.Storage
	host []T
}

// NewParkingDevice returns a ParkingDevice over the CPU engine base.
func NewParkingDevice[T tensor.Float](base tensor.Engine[T]) *ParkingDevice[T] {
	d := &ParkingDevice[T]{Engine: base, pending: map[*tensor.Storage][]parked[T]{}}
	d.mark = tensor.NewDeviceMark(d)
	d.ew = parkedElementwise[T]{d: d, host: tensor.HostElementwise[T]()}
	return d
}

// Elementwise returns the device's elementwise work.
func (d *ParkingDevice[T]) Elementwise() tensor.Elementwise[T] { return d.ew }

// SyncHost brings s's parked regions back to host memory
// (tensor.HostSyncer).
func (d *ParkingDevice[T]) SyncHost(s *tensor.Storage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ps := d.pending[s]; len(ps) > 0 {
		n := 0
		for _, p := range ps {
			copy(p.host, p.dev)
			n += len(p.dev)
		}
		delete(d.pending, s)
		if d.inOp == 0 {
			d.syncs++
			d.synced += n
		} else {
			// The device read its own memory: it keeps it.
			for _, p := range ps {
				d.reads = append(d.reads, parkedAt[T]{s, p.host})
			}
		}
	}
	s.ClearDeviceNewer()
}

// Park moves t's elements to the device, as if a kernel had written them.
func (d *ParkingDevice[T]) Park(t *tensor.Tensor[T]) {
	d.park([]parkedAt[T]{{t.Storage(), t.HostMemory()}})
}

// park moves the regions rs to the device but those of shared storage
// (tensor.FromSlice's): every region's values are taken before any is
// set to NaN, as regions may overlap.
func (d *ParkingDevice[T]) park(rs []parkedAt[T]) {
	devs := make([][]T, len(rs))
	for i, r := range rs {
		devs[i] = slices.Clone(r.host)
	}
	nan := T(math.NaN())
	d.mu.Lock()
	for i, r := range rs {
		if len(r.host) == 0 || r.s.Shared() {
			continue
		}
		for j := range r.host {
			r.host[j] = nan
		}
		d.pending[r.s] = addRegion(d.pending[r.s], parked[T]{host: r.host, dev: devs[i]})
	}
	d.mu.Unlock()
	for _, r := range rs {
		if len(r.host) > 0 && !r.s.Shared() {
			r.s.MarkDeviceNewer(d.mark)
		}
	}
}

// addRegion adds p to a storage's parked regions, in place of one of the
// same memory (an operation that reads and writes a tensor parks it twice;
// the list must not grow with every such operation).
func addRegion[T tensor.Float](ps []parked[T], p parked[T]) []parked[T] {
	for i, q := range ps {
		if len(q.host) == len(p.host) && &q.host[0] == &p.host[0] {
			ps[i] = p
			return ps
		}
	}
	return append(ps, p)
}

// Syncs returns how many times a storage was brought back to the host
// outside the device's operations, and how many elements that copied.
func (d *ParkingDevice[T]) Syncs() (syncs, elements int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.syncs, d.synced
}

// Numbers returns how many numbers the reductions (Sum, SumSquares, Dot,
// ErrorNorm) returned to the host.
func (d *ParkingDevice[T]) Numbers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.numbers
}

// Reset sets the counts to zero.
func (d *ParkingDevice[T]) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncs, d.synced, d.numbers = 0, 0, 0
}

// op runs f as one of the device's operations: its syncs are not counted
// (a device reads its own memory), and the tensors it writes are parked
// after it.
func (d *ParkingDevice[T]) op(f func(), written ...*tensor.Tensor[T]) {
	d.mu.Lock()
	d.inOp++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.inOp--
		d.mu.Unlock()
	}()
	f()
	d.mu.Lock()
	reads := d.reads
	d.reads = nil
	d.mu.Unlock()
	for _, z := range written {
		reads = append(reads, parkedAt[T]{z.Storage(), z.HostMemory()})
	}
	d.park(reads)
}

// number counts a number read by the host.
func (d *ParkingDevice[T]) number() {
	d.mu.Lock()
	d.numbers++
	d.mu.Unlock()
}

// parkedElementwise is a ParkingDevice's Elementwise: HostElementwise's
// results, parked.
type parkedElementwise[T tensor.Float] struct {
	d    *ParkingDevice[T]
	host tensor.Elementwise[T]
}

func (e parkedElementwise[T]) Map(op tensor.MapOp, z, x *tensor.Tensor[T], a, b T) {
	e.d.op(func() { e.host.Map(op, z, x, a, b) }, z)
}

func (e parkedElementwise[T]) MapBackward(op tensor.MapOp, z, g, u *tensor.Tensor[T], a, b T, accumulate bool) {
	e.d.op(func() { e.host.MapBackward(op, z, g, u, a, b, accumulate) }, z)
}

func (e parkedElementwise[T]) Binary(op tensor.BinaryOp, z, x, y *tensor.Tensor[T]) {
	e.d.op(func() { e.host.Binary(op, z, x, y) }, z)
}

func (e parkedElementwise[T]) BinaryBackward(op tensor.BinaryOp, side int, z, g, x, y, out *tensor.Tensor[T], accumulate bool) {
	e.d.op(func() { e.host.BinaryBackward(op, side, z, g, x, y, out, accumulate) }, z)
}

func (e parkedElementwise[T]) LinComb(z, base *tensor.Tensor[T], coef []T, xs []*tensor.Tensor[T]) {
	e.d.op(func() { e.host.LinComb(z, base, coef, xs) }, z)
}

func (e parkedElementwise[T]) Fill(z *tensor.Tensor[T], v T) {
	e.d.op(func() { e.host.Fill(z, v) }, z)
}

func (e parkedElementwise[T]) Copy(z, x *tensor.Tensor[T]) {
	e.d.op(func() { e.host.Copy(z, x) }, z)
}

// CopyBlocks is tensor.BlockCopier's: tensor.CopyBlocks's result, z
// parked whole.
func (e parkedElementwise[T]) CopyBlocks(z, x *tensor.Tensor[T], a T, s tensor.Blocks, accumulate bool) {
	e.d.op(func() { tensor.CopyBlocks(z, x, a, s, accumulate) }, z)
}

func (e parkedElementwise[T]) SumAxis(z, x *tensor.Tensor[T], axis int) {
	e.d.op(func() { e.host.SumAxis(z, x, axis) }, z)
}

func (e parkedElementwise[T]) MeanAxis(z, x *tensor.Tensor[T], axis int) {
	e.d.op(func() { e.host.MeanAxis(z, x, axis) }, z)
}

func (e parkedElementwise[T]) MaxAxis(z, x *tensor.Tensor[T], axis int) {
	e.d.op(func() { e.host.MaxAxis(z, x, axis) }, z)
}

func (e parkedElementwise[T]) SumPerChannel(z, x *tensor.Tensor[T], accumulate bool) {
	e.d.op(func() { e.host.SumPerChannel(z, x, accumulate) }, z)
}

func (e parkedElementwise[T]) Sum(x *tensor.Tensor[T]) (r float64) {
	e.d.op(func() { r = e.host.Sum(x) })
	e.d.number()
	return r
}

func (e parkedElementwise[T]) SumSquares(x *tensor.Tensor[T]) (r float64) {
	e.d.op(func() { r = e.host.SumSquares(x) })
	e.d.number()
	return r
}

func (e parkedElementwise[T]) Dot(x, y *tensor.Tensor[T]) (r float64) {
	e.d.op(func() { r = e.host.Dot(x, y) })
	e.d.number()
	return r
}

func (e parkedElementwise[T]) ErrorNorm(x, y0, y1 *tensor.Tensor[T], atol, rtol T, parts []int) (r float64, finite bool) {
	e.d.op(func() { r, finite = e.host.ErrorNorm(x, y0, y1, atol, rtol, parts) })
	e.d.number()
	return r, finite
}
