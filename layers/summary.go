package layers

import (
	"fmt"
	"strings"

	"github.com/adamnode/adamnode/tensor"
)

// Summary returns a table of m's parameters and buffers: each one's name,
// shape and number of elements, then the totals, as PyTorch users print a
// model to see what it holds.
func Summary[T tensor.Float](m HasParams[T]) string {
	var b strings.Builder
	width := len("name")
	state := State(m)
	for _, p := range state {
		width = max(width, len(p.Name))
	}
	fmt.Fprintf(&b, "%-*s  %-16s  %10s\n", width, "name", "shape", "elements")
	params, trained := len(m.Params()), 0
	bufs := 0
	for i, p := range state {
		n := p.Value.Len()
		kind := ""
		if i >= params {
			kind, bufs = "  (buffer)", bufs+n
		} else {
			trained += n
		}
		fmt.Fprintf(&b, "%-*s  %-16s  %10d%s\n", width, p.Name, fmt.Sprint(p.Value.Shape()), n, kind)
	}
	fmt.Fprintf(&b, "%d parameters (%d elements)", params, trained)
	if nb := len(state) - params; nb > 0 {
		fmt.Fprintf(&b, ", %d buffers (%d elements)", nb, bufs)
	}
	b.WriteString("\n")
	return b.String()
}
