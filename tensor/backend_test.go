package tensor_test

import (
	"fmt"
	"testing"

	"github.com/adamnode/adamnode/tensor"
	"github.com/adamnode/adamnode/tensor/enginetest"
)

// TestEngines runs the conformance suite on every compiled-in backend, with
// one worker and with several, in float32 and float64.
func TestEngines(t *testing.T) {
	for _, workers := range []int{1, 3} {
		for _, b := range tensor.Backends(workers) {
			t.Run(fmt.Sprintf("%s/%d/float64", b.Name(), workers), func(t *testing.T) {
				enginetest.Run(t, tensor.EngineFor[float64](b))
			})
			t.Run(fmt.Sprintf("%s/%d/float32", b.Name(), workers), func(t *testing.T) {
				enginetest.Run(t, tensor.EngineFor[float32](b))
			})
		}
	}
}
