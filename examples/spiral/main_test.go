package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// TestSpiralLearns runs 300 iterations with the adjoint: the training loss
// falls epoch by epoch and the plot is written.
func TestSpiralLearns(t *testing.T) {
	rows, dev, err := run(300, odeblock.Adjoint{}, filepath.Join(t.TempDir(), "spiral.png"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want one per epoch of 100 iterations", len(rows))
	}
	if !(rows[2].Loss < rows[0].Loss) || rows[0].FwdNFE == 0 {
		t.Errorf("rows %+v: the loss did not fall, or no NFE", rows)
	}
	if !(dev > 0) {
		t.Errorf("distance from the true trajectory %g", dev)
	}
}
