package odeblock

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
)

// TestRowLayout: Block.RowErrors' rows are the leading axis split into
// the dynamics' parts (one for dynamics that are not shardable), each row
// the rest of the shape; an empty state has none; a leading axis the
// parts do not divide is an error naming the shape and the parts.
func TestRowLayout(t *testing.T) {
	field := FieldFunc[float64](nil, func(_ *autograd.Tape[float64], _ float64, h autograd.Var[float64]) autograd.Var[float64] { return h })
	adam := NewAdamNODE[float64](field, -1, 1, ScaleSoftplus)
	node := &NODE[float64]{F: field}
	type layout struct{ Rows, W int }
	for _, c := range []struct {
		name  string
		d     Dynamics[float64]
		shape []int
		want  layout
		err   string
	}{
		{"node [4 3]", node, []int{4, 3}, layout{4, 3}, ""},
		{"node [6]", node, []int{6}, layout{6, 1}, ""},
		{"adamnode [12 2 5]", adam, []int{12, 2, 5}, layout{4, 10}, ""},
		{"adamnode [3 7]", adam, []int{3, 7}, layout{1, 7}, ""},
		{"not shardable [5 2]", &CDE[float64]{F: field}, []int{5, 2}, layout{5, 2}, ""},
		{"empty shape", adam, []int{}, layout{}, ""},
		{"no rows", adam, []int{0, 3}, layout{}, ""},
		{"no columns", node, []int{4, 0}, layout{}, ""},
		{"adamnode [10 3]", adam, []int{10, 3}, layout{}, "a state of shape [10 3] does not split into the dynamics' 3 parts"},
	} {
		rows, w, err := rowLayout(c.d, c.shape)
		if got := errString(err); got != c.err && (c.err == "" || !strings.Contains(got, c.err)) {
			t.Errorf("%s: error %q, want %q", c.name, got, c.err)
		}
		if diff := cmp.Diff(c.want, layout{rows, w}); diff != "" {
			t.Errorf("%s: layout (-want +got):\n%s", c.name, diff)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
