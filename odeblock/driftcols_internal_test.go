package odeblock

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDriftColumnsShares: driftColumns names the columns holding nine
// tenths of the squared drift, the largest first, summed over rows, the
// masked elements left out.
func TestDriftColumnsShares(t *testing.T) {
	z0 := []float64{0, 0, 0, 0, 0, 0} // [2, 3]
	for _, c := range []struct {
		name string
		zr   []float64
		mask []bool
		want []int
	}{
		{"one column", []float64{1, 0, 3, 0, 0, 4}, nil, []int{2}},     // 25 of 26
		{"two columns", []float64{2, 0, 3, 0, 0, 4}, nil, []int{2, 0}}, // 25 of 29, then 4
		{"by rows", []float64{0, 3, 0, 0, 3, 1}, nil, []int{1}},        // 18 of 19
		{"masked", []float64{1, 0, 3, 0, 0, 4}, []bool{false, false, true, false, false, true}, []int{0}},
		{"all three", []float64{1, 1, 1, 1, 1, 1}, nil, []int{0, 1, 2}},
	} {
		if d := cmp.Diff(c.want, driftColumns(c.zr, z0, c.mask, 3)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}
