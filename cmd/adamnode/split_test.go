package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/train"
)

// TestCheckpointSummary: the closing line names the checkpoints the run
// wrote, all, none or some.
func TestCheckpointSummary(t *testing.T) {
	res := func(kind models.Kind, wrote bool) compareResult {
		return compareResult{trainResult: trainResult{Result: &train.Result{WroteCheckpoint: wrote}, kind: kind}}
	}
	for _, c := range []struct {
		results []compareResult
		want    string
	}{
		{[]compareResult{res(models.NODE, true), res(models.HBNODE, true)}, "and each model's CSV and checkpoint"},
		{[]compareResult{res(models.NODE, false), res(models.HBNODE, false)}, "and each model's CSV (from its checkpoint)"},
		{[]compareResult{res(models.NODE, false), res(models.HBNODE, true)}, "each model's CSV, and the checkpoints of " + models.HBNODE.String()},
	} {
		if got := checkpointSummary(c.results); got != c.want {
			t.Errorf("checkpointSummary = %q, want %q", got, c.want)
		}
	}
}

// TestSilverboxTableNotes: the table lists the solves that failed, and
// says which setting it shows.
func TestSilverboxTableNotes(t *testing.T) {
	n := silverboxNorms{logH: map[string][]float64{}, logZ: map[string][]float64{}, notes: []string{"hbnode init 3: blow-up"}}
	for _, fam := range silverboxFamilies {
		n.logH[fam.Name], n.logZ[fam.Name] = []float64{0, 1}, []float64{0, 2}
	}
	for setting, want := range map[string]string{settingAuthors: "in the authors' setting", settingZeroVelocity: "zero-velocity setting: f = Linear([h, V1(t)]), dim h = 3"} {
		md := silverboxOptions{setting: setting, steps: 2, inits: 1, dim: 3, tol: 1e-7, meanKind: "arithmetic"}.table("x.csv", n)
		if !strings.Contains(md, want) || !strings.Contains(md, "Solves that failed") || !strings.Contains(md, "- hbnode init 3: blow-up\n") {
			t.Errorf("%s: table\n%s", setting, md)
		}
	}
}

// TestSilverboxNormsCancelled: a cancelled context stops the solves.
func TestSilverboxNormsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (silverboxOptions{inits: 1, steps: 2}).norms(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("norms after cancel: %v", err)
	}
}
