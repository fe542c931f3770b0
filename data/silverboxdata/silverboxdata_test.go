package silverboxdata_test

import (
	"math"
	"testing"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/data/silverboxdata"
)

// TestLoad reads the embedded recording and checks its size, its first and
// last rows (read from the CSV with head and tail) and the reference
// preprocessing's means.
func TestLoad(t *testing.T) {
	raw, err := silverboxdata.Load(data.SilverboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 131072
	if raw.Len() != rows {
		t.Fatalf("%d samples, want %d", raw.Len(), rows)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"V1[0]", raw.V1[0], 0.0057756},
		{"V2[0]", raw.V2[0], 0.0093978},
		{"V1[last]", raw.V1[rows-1], 0.0096732},
		{"V2[last]", raw.V2[rows-1], -0.0072247},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	ref, err := silverboxdata.Load(data.SilverboxReference())
	if err != nil {
		t.Fatal(err)
	}
	if want := (0.0093978 - ref.Mean[1]) * 100; math.Abs(ref.V2[0]-want) > 1e-12 {
		t.Errorf("reference V2[0] = %v, want %v", ref.V2[0], want)
	}
}
