package tensor_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/tensor"
)

// argMaxEngine is a CPU engine that is an ArgMaxer answering from its
// "device": it counts its calls and returns its own indices.
type argMaxEngine struct {
	tensor.Engine[float64]
	calls int
}

func (e *argMaxEngine) ArgMaxAxis(x *tensor.Tensor[float64], axis int) []int {
	e.calls++
	return []int{7, 7}
}

// clearSyncer is a HostSyncer whose device's values are the host's.
type clearSyncer struct{}

func (clearSyncer) SyncHost(s *tensor.Storage) { s.ClearDeviceNewer() }

// TestArgMaxOn: ArgMaxOn is ArgMax's on the CPU engine, which is no
// ArgMaxer; an engine that is one computes it where the tensor's newer
// values are on its device, and ArgMax does where they are on the host.
func TestArgMaxOn(t *testing.T) {
	x := tensor.FromSlice([]float64{1, 3, 3, 0, 2, -1}, 2, 3)
	cpu := tensor.EngineFor[float64](tensor.Gonum(1))
	if _, ok := cpu.(tensor.ArgMaxer[float64]); ok {
		t.Error("the CPU engine is an ArgMaxer")
	}
	if diff := cmp.Diff([]int{1, 1}, tensor.ArgMaxOn(cpu, x, 1)); diff != "" {
		t.Errorf("CPU engine (-want +got):\n%s", diff)
	}
	e := &argMaxEngine{Engine: cpu}
	if diff := cmp.Diff([]int{1, 1}, tensor.ArgMaxOn[float64](e, x, -1)); diff != "" || e.calls != 0 {
		t.Errorf("values on the host: %d calls of the engine's, (-want +got):\n%s", e.calls, diff)
	}
	y := tensor.New[float64](2, 3)
	y.Storage().MarkDeviceNewer(tensor.NewDeviceMark(clearSyncer{}))
	if diff := cmp.Diff([]int{7, 7}, tensor.ArgMaxOn[float64](e, y, 1)); diff != "" || e.calls != 1 {
		t.Errorf("values on the device: %d calls of the engine's, (-want +got):\n%s", e.calls, diff)
	}
	if !y.Storage().DeviceNewer() {
		t.Error("ArgMaxOn synced the tensor to the host")
	}
}
