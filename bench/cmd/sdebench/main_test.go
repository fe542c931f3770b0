package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/sde"
)

// TestCheckFile: the check file of a small problem holds the weights, the
// data, one increment per step and Go's float64 loss and gradients; the
// loss equals a solve on the Brownian tree the increments came from (the
// replay is that path), and every gradient is nonzero, for both methods.
func TestCheckFile(t *testing.T) {
	for _, method := range []string{sde.ReversibleHeun, sde.EulerMaruyama} {
		t.Run(method, func(t *testing.T) {
			c := Config{Method: method, Batch: 4, Dim: 3, Width: 5, Steps: 8, Seed: 2, LR: 1e-3}
			name := filepath.Join(t.TempDir(), "check.json")
			p := newProblem(c)
			if err := writeCheck(p, name); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var f CheckFile
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			if len(f.DW) != c.Steps || len(f.DW[0]) != c.Batch*c.Dim || len(f.Params) != len(Names) || len(f.Grads) != len(Names) {
				t.Fatalf("check file: %d steps of %d, %d params, %d grads", len(f.DW), len(f.DW[0]), len(f.Params), len(f.Grads))
			}
			for _, n := range Names {
				nonzero := false
				for _, v := range f.Grads[n] {
					nonzero = nonzero || v != 0
				}
				if !nonzero {
					t.Errorf("gradient of %s is zero", n)
				}
			}
			tree, err := sde.NewBrownian[float64](0, 1, []int{c.Batch, c.Dim}, sde.BrownianOptions{Seed: c.Seed + 1<<32})
			if err != nil {
				t.Fatal(err)
			}
			tp := autograd.NewTape(p.eng)
			defer tp.Release()
			tp.SetNoGrad(true)
			l, err := p.Loss(tp, tree)
			if err != nil {
				t.Fatal(err)
			}
			if l.Item() != f.Loss {
				t.Errorf("loss %.17g on the tree, %.17g in the check file", l.Item(), f.Loss)
			}
			if err := run(c, "", false, 1, 1, ""); err != nil {
				t.Fatal(err)
			}
		})
	}
}
