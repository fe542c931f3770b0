package layers

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Floating-point dtypes a checkpoint's tensors may have beside F32 and F64:
// what PyTorch writes for half-precision models.
const (
	F16  = "F16"  // IEEE 754 binary16
	BF16 = "BF16" // bfloat16: the upper half of a binary32
)

// LoadOptions change how LoadCheckpointWith fits a file to the parameters.
// The zero value is LoadCheckpoint's behaviour.
type LoadOptions struct {
	// NoNarrowing refuses tensors stored wider than the parameters (F64
	// into float32), which lose precision; F16, BF16 and F32 into float32
	// or float64, and F64 into float64, always load. Without it every
	// floating-point tensor is converted to the parameters' type.
	NoNarrowing bool
	// IgnoreUnknown skips tensors of the file that are not among the
	// parameters (PyTorch's load_state_dict(strict=False), for a file with
	// more in it: num_batches_tracked, a head not used), instead of
	// refusing the file.
	IgnoreUnknown bool
}

// floatBits returns the bits per element of a floating-point dtype, or 0.
func floatBits(dtype string) int {
	switch dtype {
	case F16, BF16:
		return 16
	case F32:
		return 32
	case F64:
		return 64
	}
	return 0
}

// checkConvertible returns an error unless a tensor of dtype loads into T
// under opt.
func checkConvertible[T tensor.Float](dtype string, opt LoadOptions) error {
	want := DTypeOf[T]()
	bits := floatBits(dtype)
	switch {
	case bits == 0:
		return fmt.Errorf("dtype %s in the file is not a floating-point type (the parameter is %s)", dtype, want)
	case opt.NoNarrowing && bits > floatBits(want):
		return fmt.Errorf("dtype %s in the file is wider than the parameter's %s (narrowing refused: LoadOptions.NoNarrowing)", dtype, want)
	}
	return nil
}

// decodeAs decodes the little-endian elements of b, of the given
// floating-point dtype, into dst, converting them to T (rounding to
// nearest when T is narrower).
func decodeAs[T tensor.Float](dst []T, dtype string, b []byte) {
	switch dtype {
	case F32:
		for i := range dst {
			dst[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case F64:
		for i := range dst {
			dst[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case BF16:
		for i := range dst {
			dst[i] = T(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		}
	case F16:
		for i := range dst {
			dst[i] = T(halfToFloat32(binary.LittleEndian.Uint16(b[2*i:])))
		}
	}
}

// halfToFloat32 returns the IEEE 754 binary16 value h (subnormals,
// infinities and NaN included) as a float32, exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^−24
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// ConvertRaw decodes r, of any floating-point dtype (F16, BF16, F32, F64),
// into a new tensor of element type T, rounding when T is narrower. It
// returns an error for another dtype or data that do not fill the shape.
func ConvertRaw[T tensor.Float](r RawTensor) (*tensor.Tensor[T], error) {
	if floatBits(r.DType) == 0 {
		return nil, fmt.Errorf("dtype %s is not a floating-point type", r.DType)
	}
	for _, d := range r.Shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", r.Shape)
		}
	}
	if n := len(r.Data); n != r.Numel()*dtypeSize(r.DType) {
		return nil, fmt.Errorf("%d bytes of data for shape %v of %s", n, r.Shape, r.DType)
	}
	t := tensor.New[T](r.Shape...)
	decodeAs(t.Data(), r.DType, r.Data)
	return t, nil
}
