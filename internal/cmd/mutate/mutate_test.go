package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = `package p

import "fmt"

const c = -3 * 2

func f(a, b int, s string) int {
	if a < b && b >= 0 || a == b {
		a++
	}
	a += b - -a
	fmt.Println("x" + s)
	return a % b
}
`

// TestFindMutants: every mutation of the sample, in source order, with its
// kind, its occurrence on the line and whether it lies outside a function
// body; no mutant of a string concatenation or of the import.
func TestFindMutants(t *testing.T) {
	ms, err := findMutants("p/p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Line, Col int
		Op, Kind  string
		Nth       int
		Global    bool
	}
	var got []row
	for _, m := range ms {
		got = append(got, row{m.Line, m.Col, m.Op(), m.Kind, m.Nth, m.Global})
	}
	want := []row{
		{5, 11, "- -> (dropped)", "INVERT_NEGATIVES", 1, true},
		{5, 14, "* -> /", "ARITHMETIC_BASE", 1, true},
		{8, 7, "< -> <=", "CONDITIONALS_BOUNDARY", 1, false},
		{8, 7, "< -> >=", "CONDITIONALS_NEGATION", 1, false},
		{8, 11, "&& -> ||", "INVERT_LOGICAL", 1, false},
		{8, 16, ">= -> >", "CONDITIONALS_BOUNDARY", 1, false},
		{8, 16, ">= -> <", "CONDITIONALS_NEGATION", 1, false},
		{8, 21, "|| -> &&", "INVERT_LOGICAL", 1, false},
		{8, 26, "== -> !=", "CONDITIONALS_NEGATION", 1, false},
		{9, 4, "++ -> --", "INCREMENT_DECREMENT", 1, false},
		{11, 4, "+= -> -=", "INVERT_ASSIGNMENTS", 1, false},
		{11, 9, "- -> +", "ARITHMETIC_BASE", 1, false},
		{11, 11, "- -> (dropped)", "INVERT_NEGATIVES", 2, false},
		{13, 11, "% -> *", "ARITHMETIC_BASE", 1, false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mutants (-want +got):\n%s", d)
	}
	m := ms[len(ms)-3]
	if got, want := string(apply([]byte(sample), m)), strings.Replace(sample, "b - -a", "b + -a", 1); got != want {
		t.Errorf("applied %s:\n%s", m.Op(), got)
	}
	if got, want := m.Key(), "p/p.go\t- -> +\t#1\ta += b - -a"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
}

// TestChangedLines: the added and changed lines of a -U0 diff, per file;
// deletions add none.
func TestChangedLines(t *testing.T) {
	diff := `diff --git a/x/a.go b/x/a.go
--- a/x/a.go
+++ b/x/a.go
@@ -3 +3 @@ func f() {
-	a := 1
+	a := 2
@@ -10,0 +11,2 @@ func g() {
+	b++
+	b--
@@ -20,3 +21,0 @@
-	x
-	y
-	z
diff --git a/y.go b/y.go
deleted file mode 100644
--- a/y.go
+++ /dev/null
@@ -1,2 +0,0 @@
-package y
-
`
	got, err := changedLines(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]bool{"x/a.go": {3: true, 11: true, 12: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("changed lines (-want +got):\n%s", d)
	}
	if _, err := changedLines(strings.NewReader("+++ b/a.go\n@@ -1 +x @@\n")); err == nil {
		t.Error("a bad hunk header was accepted")
	}
}

// TestProfileBlocks: a coverage profile's blocks, named relative to the
// module, and which positions each holds (the end column excluded).
func TestProfileBlocks(t *testing.T) {
	prof := "mode: set\nexample.com/m/p/p.go:7.32,9.3 2 1\nexample.com/m/p/p.go:11.2,11.12 1 0\n"
	bs, err := readProfile(strings.NewReader(prof), "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	want := []block{{"p/p.go", 7, 32, 9, 3, 1}, {"p/p.go", 11, 2, 11, 12, 0}}
	if d := cmp.Diff(want, bs, cmp.AllowUnexported(block{})); d != "" {
		t.Errorf("blocks (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		line, col int
		in        bool
	}{{7, 31, false}, {7, 32, true}, {8, 1, true}, {9, 2, true}, {9, 3, false}, {10, 1, false}} {
		if got := bs[0].contains(c.line, c.col); got != c.in {
			t.Errorf("%d:%d in %v: %v", c.line, c.col, bs[0], got)
		}
	}
	if _, err := readProfile(strings.NewReader("p.go:1.1,2 1\n"), "m"); err == nil {
		t.Error("a bad profile line was accepted")
	}
}

// TestReadAccepted: entries keyed as mutant.Key, with their reasons;
// comments and blank lines skipped; an entry without a reason refused.
func TestReadAccepted(t *testing.T) {
	m := mutant{File: "p/p.go", From: "<", To: "<=", Nth: 1, Text: "if a < b {"}
	got, err := readAccepted(strings.NewReader("# a comment\n\n" + m.Key() + "\tequal when a == b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{m.Key(): "equal when a == b"}, got); d != "" {
		t.Errorf("accepted (-want +got):\n%s", d)
	}
	for _, bad := range []string{m.Key() + "\n", m.Key() + "\t \n", "p/p.go\t< -> <=\n"} {
		if _, err := readAccepted(strings.NewReader(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
