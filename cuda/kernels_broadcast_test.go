package cuda

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/tensor"
)

// bcastCase is a pair of shapes that broadcast.
var bcastCases = [][2][]int{
	{{2, 3, 4, 5}, {5}}, {{5}, {2, 3, 4, 5}}, {{2, 1, 4, 1}, {3, 1, 5}}, {{4, 1}, {1, 4}}, {{}, {7}}, {{7}, {}},
	{{257}, {257}}, {{1}, {3, 300}}, {{0, 3}, {1, 3}}, {{1, 3}, {0, 3}}, {{2, 3, 70, 100}, {3, 1, 1}},
	{{9, 3, 40, 40}, {1, 3, 1, 1}}, {{3, 1, 1}, {1, 1}},
}

// bcastRef is autograd's broadcast rule on the CPU: the output of x op y,
// and the gradients of x and y for the output gradient g, each operand's
// terms added in the output's row-major order to acc's values (nil: 0).
func bcastRef[T tensor.Float](op BinaryOp, x, y, g, accX, accY []T, b bcast) (z, gx, gy []T) {
	z = make([]T, b.n)
	gx, gy = make([]T, b.nx), make([]T, b.ny)
	if accX != nil {
		copy(gx, accX)
		copy(gy, accY)
	}
	o := 0
	for i0 := range b.out[0] {
		for i1 := range b.out[1] {
			for i2 := range b.out[2] {
				for i3 := range b.out[3] {
					xi := i0*b.sx[0] + i1*b.sx[1] + i2*b.sx[2] + i3*b.sx[3]
					yi := i0*b.sy[0] + i1*b.sy[1] + i2*b.sy[2] + i3*b.sy[3]
					a, c := x[xi], y[yi]
					switch op {
					case Add:
						z[o] = a + c
					case Sub:
						z[o] = a - c
					case Mul:
						z[o] = a * c
					default:
						z[o] = a / c
					}
					o++
				}
			}
		}
	}
	o = 0
	for i0 := range b.out[0] {
		for i1 := range b.out[1] {
			for i2 := range b.out[2] {
				for i3 := range b.out[3] {
					xi := i0*b.sx[0] + i1*b.sx[1] + i2*b.sx[2] + i3*b.sx[3]
					yi := i0*b.sy[0] + i1*b.sy[1] + i2*b.sy[2] + i3*b.sy[3]
					gi := g[o]
					var cx, cy T
					switch op {
					case Add:
						cx, cy = gi, gi
					case Sub:
						cx, cy = gi, -gi
					case Mul:
						cx, cy = gi*y[yi], gi*x[xi]
					default:
						cx, cy = gi/y[yi], -gi*z[o]/y[yi]
					}
					gx[xi] += cx
					gy[yi] += cy
					o++
				}
			}
		}
	}
	return z, gx, gy
}

// TestBinary: Add, Sub, Mul and Div with broadcasting over shapes of 0 to
// 4 dimensions (sizes 0 and 1, operands either way round, outputs past
// the largest grid) on random and edge values equal autograd's rule on
// the CPU to the bit, and so do both operands' gradients, set and
// accumulated (each operand's terms summed in the CPU's order); in place
// over an operand that is not broadcast too.
func TestBinary(t *testing.T) {
	k := kernels(t)
	bothTypes(t, func(t *testing.T) { testBinary[float32](t, k) }, func(t *testing.T) { testBinary[float64](t, k) })
}

func testBinary[T tensor.Float](t *testing.T, k *Kernels) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, c := range bcastCases {
		b, err := broadcast("test", c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		x, y, g := values[T](r, b.nx), values[T](r, b.ny), values[T](r, b.n)
		r.Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
		ax, ay := values[T](r, b.nx), values[T](r, b.ny)
		xb, yb, gb := toDevice(t, k, x), toDevice(t, k, y), toDevice(t, k, g)
		for op := range numBinaryOps {
			for _, acc := range []bool{false, true} {
				var accX, accY []T
				if acc {
					accX, accY = ax, ay
				}
				z, gx, gy := bcastRef(op, x, y, g, accX, accY, b)
				zb := toDevice(t, k, make([]T, b.n))
				if err := Binary(k, op, zb, xb, yb, c[0], c[1]); err != nil {
					t.Fatal(err)
				}
				check := func(what string, got, want []T) {
					t.Helper()
					for i := range want {
						if !same(got[i], want[i]) {
							t.Fatalf("%v %v %v, acc %v: %s[%d] = %v, want %v", c[0], op, c[1], acc, what, i, got[i], want[i])
						}
					}
				}
				check("z", fromDevice(t, k, zb), z)
				dx, dy := toDevice(t, k, ax), toDevice(t, k, ay)
				if err := BinaryBackward(k, op, Left, dx, gb, xb, yb, zb, c[0], c[1], acc); err != nil {
					t.Fatal(err)
				}
				if err := BinaryBackward(k, op, Right, dy, gb, xb, yb, zb, c[0], c[1], acc); err != nil {
					t.Fatal(err)
				}
				check("gx", fromDevice(t, k, dx), gx)
				check("gy", fromDevice(t, k, dy), gy)
				if b.nx == b.n && b.n > 0 { // in place over x
					xc := toDevice(t, k, x)
					if err := Binary(k, op, xc, xc, yb, c[0], c[1]); err != nil {
						t.Fatal(err)
					}
					check("z in place", fromDevice(t, k, xc), z)
				}
			}
		}
	}
}

// TestBinaryMisuse: shapes that do not broadcast, more than 4 dimensions,
// negative sizes, lengths that do not fit the shapes and unknown
// operations are errors naming the call and the shapes; nothing panics.
func TestBinaryMisuse(t *testing.T) {
	k := kernels(t)
	b6, b3 := toDevice(t, k, make([]float32, 6)), toDevice(t, k, make([]float32, 3))
	for name, err := range map[string]error{
		"no broadcast": Binary(k, Add, b6, b6, b3, []int{2, 3}, []int{2}),
		"5 dims":       Binary(k, Add, b6, b6, b6, []int{1, 1, 1, 2, 3}, []int{2, 3}),
		"negative":     Binary(k, Add, b6, b6, b6, []int{-2, 3}, []int{2, 3}),
		"dst length":   Binary(k, Mul, b3, b6, b3, []int{2, 3}, []int{3}),
		"x length":     Binary(k, Mul, b6, b3, b3, []int{2, 3}, []int{3}),
		"grad length":  BinaryBackward(k, Mul, Right, b6, b6, b6, b3, Buffer[float32]{}, []int{2, 3}, []int{3}, false),
		"no y":         BinaryBackward(k, Div, Left, b6, b6, b6, Buffer[float32]{}, Buffer[float32]{}, []int{2, 3}, []int{3}, false),
		"no z":         BinaryBackward(k, Div, Right, b3, b6, b6, b3, Buffer[float32]{}, []int{2, 3}, []int{3}, false),
	} {
		if err == nil || !strings.Contains(err.Error(), "Binary") || !strings.Contains(err.Error(), "[") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Binary(k, numBinaryOps, b6, b6, b6, []int{6}, []int{6}); err == nil {
		t.Error("an unknown operation: no error")
	}
	if err := BinaryBackward(k, Add, Side(2), b6, b6, b6, b6, b6, []int{6}, []int{6}, false); err == nil {
		t.Error("an unknown side: no error")
	}
	// Add's gradient reads neither operand: they may be empty.
	if err := BinaryBackward(k, Add, Right, b3, b6, Buffer[float32]{}, Buffer[float32]{}, Buffer[float32]{}, []int{2, 3}, []int{3}, false); err != nil {
		t.Error(err)
	}
	if got := fromDevice(t, k, b3); !slices.Equal(got, []float32{0, 0, 0}) {
		t.Errorf("the gradient of zeros: %v", got)
	}
}
