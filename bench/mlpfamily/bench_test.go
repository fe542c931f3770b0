package mlpfamily_test

import (
	"testing"

	"github.com/adamnode/adamnode/bench/mlpfamily"
	"github.com/adamnode/adamnode/tensor"
)

// BenchmarkMLPFamily times one training iteration (forward solve, backward,
// Adam step) of every configuration of the family, one sub-benchmark each,
// named as the configuration. It reports the forward and backward NFE of the
// last iteration and the time per evaluation (µs/NFE: the iteration's time
// over forward + backward NFE). Run it with -cpu 1 for one thread, and with
// -tags openblas for the fast build (each problem's engine has GOMAXPROCS
// workers when it is built, so -cpu 1,2 times both counts):
//
//	go test -tags openblas -cpu 1,2 -run '^$' -bench MLPFamily -benchmem ./bench/...
//	go test -run '^$' -bench 'MLPFamily/adamnode_w64_l2_tanh_b512_adjoint$' -benchmem ./bench/...
//
// The problem trains while it is timed, so its NFE drift with b.N (the base
// adjoint: 26+26 at the start, 32+26 after 30 iterations); compare µs/NFE
// between runs, or use mlpbench, which times a fixed number of iterations.
// The side-by-side comparison with PyTorch is bench/compare_mlp.sh;
// BenchmarkMLPFamilyDType times the base in float32 and float64.
func BenchmarkMLPFamily(b *testing.B) {
	for _, c := range mlpfamily.Configs() {
		b.Run(c.Name, func(b *testing.B) { benchSteps[float32](b, c) })
	}
}

// BenchmarkMLPFamilyDType times the base configuration's training
// iteration in each dtype, sub-benchmarks named
// adamnode_w64_l2_tanh_b512_adjoint/dtype=float32 and .../dtype=float64,
// with BenchmarkMLPFamily's metrics, so that one run compares the two:
//
//	go test -run '^$' -bench 'MLPFamilyDType' -benchmem ./bench/mlpfamily
//
// The float64 problem is the float32 one unrounded (same seed, same draws);
// its NFE may differ a little, so compare µs/NFE as well as ns/op.
func BenchmarkMLPFamilyDType(b *testing.B) {
	c := mlpfamily.Base()
	for _, dt := range mlpfamily.DTypes {
		b.Run(c.Name+"/dtype="+dt, func(b *testing.B) {
			if dt == "float64" {
				benchSteps[float64](b, c.WithDType(dt))
				return
			}
			benchSteps[float32](b, c.WithDType(dt))
		})
	}
}

// benchSteps times training iterations of c's problem in T after one
// warm-up iteration and reports the last iteration's NFE and µs/NFE.
func benchSteps[T tensor.Float](b *testing.B, c mlpfamily.Config) {
	p, err := mlpfamily.NewOf[T](c)
	if err != nil {
		b.Fatal(err)
	}
	st, err := p.Step() // warm-up: buffers sized, tapes grown
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if st, err = p.Step(); err != nil {
			b.Fatal(err)
		}
	}
	perIter := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(st.FwdNFE), "fwd-NFE")
	b.ReportMetric(float64(st.BwdNFE), "bwd-NFE")
	b.ReportMetric(perIter/float64(st.FwdNFE+st.BwdNFE)*1e6, "µs/NFE")
}
