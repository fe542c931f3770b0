package layers

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Misuse panics, typed as autograd's are: a bad shape or size is a
// *tensor.ShapeError (Op "layers.<name>"), which tensor.Recover turns into
// an error at an API edge; any other misuse (a module of the wrong kind, a
// name taken twice, a probability out of range) is a *usageError, an error
// that tensor.Recover lets through, as autograd's.

// usageError is the panic value of a misuse of the package other than a
// bad shape.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usage returns the usageError of op, "layers: op: <message>".
func usage(op, format string, args ...any) *usageError {
	return &usageError{msg: "layers: " + op + ": " + fmt.Sprintf(format, args...)}
}

// shapeError returns the *tensor.ShapeError of op (named "layers.op").
func shapeError(op, format string, args ...any) *tensor.ShapeError {
	return &tensor.ShapeError{Op: "layers." + op, Msg: fmt.Sprintf(format, args...)}
}
