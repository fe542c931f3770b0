package tensor_test

import (
	"testing"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestHostElementwise runs the elementwise conformance suite on
// HostElementwise, the reference the CPU engines' paths compute.
func TestHostElementwise(t *testing.T) {
	t.Run("float64", func(t *testing.T) { enginetest.Elementwise(t, tensor.HostElementwise[float64]()) })
	t.Run("float32", func(t *testing.T) { enginetest.Elementwise(t, tensor.HostElementwise[float32]()) })
}
