package tensor

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/adamnode/adamnode/tensor/internal/sgemm"
)

// TestVectorCore checks which OpenBLAS kernels the float32 routing trusts:
// the AVX2 and AVX-512 ones it was measured against, not the generic
// fallbacks an old OpenBLAS picks on a CPU it does not know.
func TestVectorCore(t *testing.T) {
	for _, c := range []struct {
		core string
		want bool
	}{
		{"SkylakeX", true},
		{"Haswell", true},
		{"Zen", true},
		{"Cooperlake", true},
		{"SapphireRapids", true},
		{"Prescott", false},
		{"PRESCOTT", false},
		{"Nehalem", false},
		{"Sandybridge", false},
		{"Core2", false},
		{"unknown", false},
		{"", false},
	} {
		if got := vectorCore(c.core); got != c.want {
			t.Errorf("vectorCore(%q) = %v, want %v", c.core, got, c.want)
		}
	}
}

// TestOpenBLASCore checks that the OpenBLAS build reports its kernels, and
// that with generic ones every float32 shape goes to package sgemm: a shape
// that the table sends to OpenBLAS (a 5-row product) must then give
// sgemm's bits exactly.
func TestOpenBLASCore(t *testing.T) {
	b, err := OpenBLAS(1)
	if err != nil {
		if OpenBLASCore() != "" {
			t.Fatalf("OpenBLASCore() = %q in a build without OpenBLAS", OpenBLASCore())
		}
		t.Skip(err)
	}
	core := OpenBLASCore()
	if core == "" {
		t.Fatal("OpenBLASCore() is empty in the OpenBLAS build")
	}
	t.Logf("OpenBLAS runs %s kernels", core)
	if !sgemm.Enabled() || vectorCore(core) {
		return
	}
	const m, n, k = 5, 784, 50
	a, bm := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3.1
	}
	for i := range bm {
		bm[i] = float32(i%11)*0.37 - 1.7
	}
	got, want := make([]float32, m*n), make([]float32, m*n)
	EngineFor[float32](b).Gemm(false, false, m, n, k, 1, a, k, bm, n, 0, got, n)
	sgemm.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, bm, n, 0, want, n)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("with %s kernels, C[%d] = %v, want sgemm's %v", core, i, got[i], want[i])
		}
	}
}
