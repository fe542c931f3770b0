package tensor

import (
	"fmt"
	"slices"
	"strings"
)

// ShapeError is the panic value of a kernel called with operands whose shapes
// do not fit. Its message names the operation and the shapes involved.
// Other packages raise it too, with Op qualified by their name
// ("autograd.Mul", "layers.GroupNorm"); tensor's own kernels leave Op bare
// ("Add") and the message names the package: "tensor.Add: …".
type ShapeError struct {
	Op  string // the kernel, e.g. "Add" or "Conv2D", or "autograd.Mul"
	Msg string // what was wrong, naming the shapes
}

func (e *ShapeError) Error() string {
	if strings.Contains(e.Op, ".") || e.Op == "" {
		return e.Op + ": " + e.Msg
	}
	return "tensor." + e.Op + ": " + e.Msg
}

func newShapeError(op string, a, b []int) *ShapeError {
	return &ShapeError{Op: op, Msg: fmt.Sprintf("shapes %v and %v do not match", a, b)}
}

// mustSameShape panics with a *ShapeError naming op unless a and b have the
// same shape.
func mustSameShape(op string, a, b []int) {
	if !slices.Equal(a, b) {
		panic(newShapeError(op, a, b))
	}
}

// Recover turns a *ShapeError panic into an error stored in *err; other
// panics propagate. Use it with defer at an API edge:
//
//	func Build() (err error) {
//		defer tensor.Recover(&err)
//		...
//	}
func Recover(err *error) {
	if r := recover(); r != nil {
		if se, ok := r.(*ShapeError); ok {
			*err = se
			return
		}
		panic(r)
	}
}
