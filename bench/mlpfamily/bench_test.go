package mlpfamily_test

import (
	"testing"

	"github.com/adamnode/adamnode/bench/mlpfamily"
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
// The side-by-side comparison with PyTorch is bench/compare_mlp.sh.
func BenchmarkMLPFamily(b *testing.B) {
	for _, c := range mlpfamily.Configs() {
		b.Run(c.Name, func(b *testing.B) {
			p, err := mlpfamily.New(c)
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
		})
	}
}
