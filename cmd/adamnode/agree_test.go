package main

import (
	"flag"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/models"
	"github.com/google/go-cmp/cmp"
)

// TestDistributedAgreementCoversFlags checks that every flag of train is
// either among the settings the ranks of a distributed run must agree on
// or one of the few left out on purpose (paths, display, the device), so
// that a flag added later is not silently left out.
func TestDistributedAgreementCoversFlags(t *testing.T) {
	left := []string{"--data", "--out", "--device", "--quiet", "--replicas", "--distributed"}
	fs := newFlags("train")
	var f trainFlags
	addTrainFlags(fs, &f, "out")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	all := []string{"--model", "--distributed"} // parseTrain's own
	fs.VisitAll(func(fl *flag.Flag) { all = append(all, "--"+fl.Name) })
	s, err := f.resolve("train")
	if err != nil {
		t.Fatal(err)
	}
	var agreed []string
	for _, st := range s.agreement(models.AdamNODE) {
		agreed = append(agreed, st.Name)
	}
	var missing []string
	for _, name := range all {
		if !slices.Contains(agreed, name) && !slices.Contains(left, name) {
			missing = append(missing, name)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("flags neither agreed on nor left out on purpose (-want +got):\n%s", diff)
	}
	for _, name := range agreed {
		if slices.Contains(left, name) {
			t.Errorf("%s is both agreed on and left out", name)
		}
	}
}
