package tensor

// MapOp names an elementwise map that an ElementwiseEngine runs.
type MapOp int

// The maps, with the parameters a and b where they take them.
const (
	MapTanh      MapOp = iota // tanh x
	MapSigmoid                // 1/(1+e^−x)
	MapExp                    // eˣ
	MapReLU                   // max(x, 0)
	MapSoftplus               // ln(1+eˣ)
	MapLog                    // ln x
	MapSqrt                   // √x
	MapSquare                 // x·x
	MapNeg                    // −x
	MapAbs                    // |x|
	MapSin                    // sin x
	MapCos                    // cos x
	MapLeakyReLU              // x > 0 ? x : a·x
	MapHardtanh               // min(max(x, a), b)
	MapClamp                  // min(max(x, a), b); its gradient keeps the bounds
	MapELU                    // x > 0 ? x : a·(eˣ − 1)
	MapPow                    // xᵃ
	MapScale                  // a·x
	MapAddScalar              // x + a
	NumMapOps                 // the number of maps
)

var mapOpNames = [NumMapOps]string{"Tanh", "Sigmoid", "Exp", "ReLU", "Softplus", "Log", "Sqrt", "Square", "Neg", "Abs", "Sin", "Cos",
	"LeakyReLU", "Hardtanh", "Clamp", "ELU", "Pow", "Scale", "AddScalar"}

// String returns the map's name.
func (op MapOp) String() string {
	if op >= 0 && op < NumMapOps {
		return mapOpNames[op]
	}
	return "MapOp(?)"
}

// BackwardFromOutput reports whether op's backward map (MapBackward) is
// given the map's output y rather than its input x: Tanh, Sigmoid, Exp,
// ReLU, Softplus, Sqrt, LeakyReLU and ELU take y; the others x.
func (op MapOp) BackwardFromOutput() bool {
	switch op {
	case MapTanh, MapSigmoid, MapExp, MapReLU, MapSoftplus, MapSqrt, MapLeakyReLU, MapELU:
		return true
	}
	return false
}

// BinaryOp names an elementwise binary operation.
type BinaryOp int

// The binary operations.
const (
	BinaryAdd BinaryOp = iota // x + y
	BinarySub                 // x − y
	BinaryMul                 // x ⊙ y
	BinaryDiv                 // x ⊘ y
)

// Elementwise is an engine's elementwise work: the maps and their
// gradients, binary operations with broadcasting, linear combinations,
// reductions, the adaptive solvers' error norms, fills and copies.
// autograd and the integrator do their elementwise work through it, so an
// engine that computes in memory of its own (package cuda's; OnDevice)
// keeps the tensors' values where it holds them (see Storage). The CPU
// engines have one too, HostElementwise's methods with their fast paths
// (the vector kernels, large tensors split across the engine's workers):
// the one path both run.
//
// Each method computes what the named tensor method computes, within the
// rounding each documents; shapes are checked as there, and a misfit
// panics with a *ShapeError. A failure of the device panics with the
// engine's error.
type Elementwise[T Float] interface {
	// Map sets z = op(x) elementwise, with op's parameters a and b (zero
	// where op takes none). z may be x.
	Map(op MapOp, z, x *Tensor[T], a, b T)

	// MapBackward sets z = g ⊙ op′, or adds it to z with accumulate: the
	// gradient of Map given the output gradient g and u, op's output or
	// input (MapOp.BackwardFromOutput). Neg does not read u. z may be g.
	MapBackward(op MapOp, z, g, u *Tensor[T], a, b T, accumulate bool)

	// Binary sets z = x op y, x and y broadcasting to z's shape by NumPy's
	// rules (as autograd's Add, Sub, Mul and Div). z may be x or y where
	// that operand has z's shape.
	Binary(op BinaryOp, z, x, y *Tensor[T])

	// BinaryBackward sets z to the gradient of Binary's operand x (side 0)
	// or y (side 1) given the output gradient g, summed over the axes that
	// operand was broadcast along, or adds it to z with accumulate. out is
	// Binary's result (read by Div's y side only); x and y its operands.
	BinaryBackward(op BinaryOp, side int, z, g, x, y, out *Tensor[T], accumulate bool)

	// LinComb sets z = base + Σⱼ coef[j]·xs[j] (base nil: 0 + …), each
	// product rounded before it is added, in order: LinearCombination's
	// arithmetic. z may be base but no x.
	LinComb(z, base *Tensor[T], coef []T, xs []*Tensor[T])

	// Fill sets every element of z to v.
	Fill(z *Tensor[T], v T)

	// Copy sets z = x (same number of elements).
	Copy(z, x *Tensor[T])

	// SumAxis and MaxAxis set z to the reduction of x along axis, as the
	// tensor methods of those names; MeanAxis to SumAxis's result over the
	// axis's length.
	SumAxis(z, x *Tensor[T], axis int)
	MeanAxis(z, x *Tensor[T], axis int)
	MaxAxis(z, x *Tensor[T], axis int)

	// SumPerChannel sets z[c] = Σ x[b, c, …] (z of shape [C]), or adds it
	// with accumulate: a bias's gradient.
	SumPerChannel(z, x *Tensor[T], accumulate bool)

	// Sum, SumSquares and Dot return Σ x, Σ x² and Σ x⊙y, accumulated in
	// float64; the one number is copied to the host.
	Sum(x *Tensor[T]) float64
	SumSquares(x *Tensor[T]) float64
	Dot(x, y *Tensor[T]) float64

	// ErrorNorm returns the RMS of r = e / (atol + rtol·max(|y0|, |y1|)):
	// over all elements with no parts, else the largest over consecutive
	// parts of the given lengths of each part's RMS (torchdiffeq's mixed
	// norm). finite is false when an r is NaN or ±Inf.
	ErrorNorm(e, y0, y1 *Tensor[T], atol, rtol T, parts []int) (rms float64, finite bool)
}

// ElementwiseEngine is implemented by an engine that may have an
// Elementwise (the CPU engines, package cuda's): nil when it has none (a
// GPU engine whose run-time compiler is missing).
type ElementwiseEngine[T Float] interface {
	Elementwise() Elementwise[T]
}

// ElementwiseOf returns e's Elementwise: the CPU engines' own (their fast
// paths), a device engine's, or nil when e has none (an engine of another
// package without an Elementwise method, or a GPU engine whose run-time
// compiler is missing). A non-nil result does not mean a GPU: OnDevice
// says that.
func ElementwiseOf[T Float](e Engine[T]) Elementwise[T] {
	if x, ok := e.(ElementwiseEngine[T]); ok {
		return x.Elementwise()
	}
	return nil
}

// hostEngine is implemented by this package's CPU engines alone.
type hostEngine interface{ hostMemory() }

// OnDevice reports whether e computes in memory of its own (package cuda's
// engines, or a test's stand-in for one): whether autograd, the integrator
// and the optimizers should keep the tensors' values where e keeps them
// and mind where they are (residency, host syncs). It is decided by the
// engine: an engine with an Elementwise that is not one of this package's
// CPU engines (which compute in host memory) is a device. A stand-in that
// wraps a CPU engine in a type of its own and has an Elementwise counts as
// a device.
func OnDevice[T Float](e Engine[T]) bool {
	if _, host := e.(hostEngine); host {
		return false
	}
	return ElementwiseOf(e) != nil
}

// DeviceElementwise returns e's Elementwise when e computes in memory of
// its own (OnDevice), and nil otherwise (the CPU engines, whose
// Elementwise ElementwiseOf returns).
func DeviceElementwise[T Float](e Engine[T]) Elementwise[T] {
	if !OnDevice(e) {
		return nil
	}
	return ElementwiseOf(e)
}

// ArgMaxer is implemented by an engine, or an engine's Elementwise, that
// computes ArgMax where it keeps the tensors' values (package cuda's) and
// copies only the indices to the host: a classifier's accuracy without
// its class scores leaving the device.
type ArgMaxer[T Float] interface {
	// ArgMaxAxis returns ArgMax(x, axis): for each position of x with
	// axis removed (row-major), the index along axis of its largest
	// element, the first of equal ones; a NaN is never larger, so only a
	// NaN first along the axis gives its index (0). An axis of size 0
	// panics with a *ShapeError, as ArgMax does.
	ArgMaxAxis(x *Tensor[T], axis int) []int
}

// ArgMaxOn returns ArgMax(x, axis), computed by e where e (or its
// Elementwise) is an ArgMaxer and x's newest values are on e's device
// (x.Storage().DeviceNewer()): only the indices are copied to the host,
// not x. Otherwise, x's values being on the host or e having no ArgMaxer
// (the CPU engines), it is ArgMax's on the host.
func ArgMaxOn[T Float](e Engine[T], x *Tensor[T], axis int) []int {
	if x.Storage().DeviceNewer() {
		if a, ok := e.(ArgMaxer[T]); ok {
			return a.ArgMaxAxis(x, axis)
		}
		if a, ok := ElementwiseOf(e).(ArgMaxer[T]); ok {
			return a.ArgMaxAxis(x, axis)
		}
	}
	return ArgMax(x, axis)
}
