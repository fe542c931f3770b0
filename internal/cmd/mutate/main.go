// Command mutate is adamnode's mutation tester: it plants one-token bugs
// (mutants) in a package's library code, one at a time, and runs the tests
// that cover the mutated line, in order of their speed; a mutant that makes
// one fail (or run past its timeout) is killed, one that every covering
// test passes lived. The efficacy is killed / (killed + lived).
//
//	go run ./internal/cmd/mutate [flags] [packages]
//
// The packages default to tensor, autograd, layers, optim, odeblock and
// train. The mutations are gremlins' default ones (arithmetic operators,
// comparison boundaries and negations, ++/--, a dropped unary minus) with
// && ↔ || and += ↔ −=, *= ↔ /=. A mutant is compiled by go test -c with an
// -overlay of the mutated file (no copy of the module); one that does not
// compile is counted apart (not viable). The tests that cover a line come
// from one coverage profile per test, made first; a mutant in no function
// body (a constant's or a variable's initialiser) counts as covered by
// every test.
//
// With -budget the mutants of each package are tried in a random order
// (-seed) until the budget runs out: the figures are then those of a
// uniform sample. With -diff only the mutants of lines changed since a
// commit are tried ("auto": $MUTATE_BASE, else where HEAD left
// origin/main, else HEAD~1); it exits 1 when one of them lives and is not
// in the -accepted list of equivalent mutants, each with its reason.
// Without a base commit it says so and exits 0.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// The states of a mutant.
const (
	killed     = "KILLED"
	timedOut   = "TIMED OUT"
	lived      = "LIVED"
	notCovered = "NOT COVERED"
	notViable  = "NOT VIABLE"
	accepted   = "ACCEPTED"
	notRun     = "NOT RUN"
)

type options struct {
	budget, total time.Duration
	seed          uint64
	diff          string
	acceptedFile  string
	report        string
	coef          float64
	verbose       bool
}

func main() {
	var o options
	flag.DurationVar(&o.budget, "budget", 0, "time for each package's mutants (0: no limit); past it the rest are not run")
	flag.DurationVar(&o.total, "total", 0, "time for the whole run (0: no limit)")
	flag.Uint64Var(&o.seed, "seed", 1, "the random order of the mutants")
	flag.StringVar(&o.diff, "diff", "", "only the mutants of lines changed since this commit (auto: $MUTATE_BASE, origin/main's merge base or HEAD~1)")
	flag.StringVar(&o.acceptedFile, "accepted", "bench/mutation-equivalent.txt", "accepted equivalent mutants, with reasons")
	flag.StringVar(&o.report, "report", "", "write a Markdown report here")
	flag.Float64Var(&o.coef, "timeout-coefficient", 10, "a test's timeout under a mutant: this many times its own time, plus 5 s")
	flag.BoolVar(&o.verbose, "v", false, "print every mutant's state")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./tensor", "./autograd", "./layers", "./optim", "./odeblock", "./train"}
	}
	if err := run(o, pkgs, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// pkgResult is one package's mutants and their states.
type pkgResult struct {
	path    string
	mutants []mutant
	state   []string
	why     []string // the test that killed it, or the build error
	elapsed time.Duration
}

func (r *pkgResult) count(s string) int {
	n := 0
	for _, v := range r.state {
		if v == s {
			n++
		}
	}
	return n
}

func run(o options, pkgs []string, out io.Writer) error {
	start := time.Now()
	acc := map[string]string{}
	if f, err := os.Open(o.acceptedFile); err == nil {
		acc, err = readAccepted(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", o.acceptedFile, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var changed map[string]map[int]bool
	if o.diff != "" {
		base, why := resolveBase(o.diff)
		if base == "" {
			fmt.Fprintf(out, "mutate: no base commit to diff against (%s): the diff-mode check is skipped\n", why)
			return nil
		}
		// The whole tree, not the packages' folders: git pairs a moved file
		// with its old path only when both are in the diff, so that a file
		// moved into a package counts only for the lines it changed.
		d, err := exec.Command("git", "diff", "-U0", "--no-color", "--no-ext-diff", "-M", base).Output()
		if err != nil {
			return fmt.Errorf("git diff %s: %w", base, err)
		}
		if changed, err = changedLines(bytes.NewReader(d)); err != nil {
			return err
		}
		fmt.Fprintf(out, "mutate: the lines changed since %.12s\n", base)
	}
	mod, err := goList("-m", "-f", "{{.Path}}\t{{.Dir}}")
	if err != nil {
		return err
	}
	module, root, _ := strings.Cut(mod, "\t")
	tmp, err := os.MkdirTemp("", "mutate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var results []*pkgResult
	failed := false
	for _, pkg := range pkgs {
		if o.total > 0 && time.Since(start) > o.total {
			fmt.Fprintf(out, "%s: not run (the -total budget is spent)\n", pkg)
			continue
		}
		r, err := mutatePackage(o, pkg, module, root, tmp, changed, acc, start, out)
		if err != nil {
			return fmt.Errorf("%s: %w", pkg, err)
		}
		if r == nil {
			continue
		}
		results = append(results, r)
		for i, m := range r.mutants {
			if r.state[i] == lived && o.diff != "" {
				failed = true
				fmt.Fprintf(out, "LIVED on a changed line: %s:%d:%d %s (%s): %s\n  (if equivalent, its entry: %q + \"\\t\" + the reason)\n", m.File, m.Line, m.Col, m.Op(), m.Kind, m.Text, m.Key())
			}
		}
	}
	if o.diff != "" && len(results) == 0 {
		fmt.Fprintln(out, "mutate: no mutants on the changed lines of these packages")
	}
	if o.report != "" {
		if err := os.WriteFile(o.report, []byte(report(o, results, time.Since(start))), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "mutate: wrote %s\n", o.report)
	}
	if failed {
		return fmt.Errorf("mutants of changed lines lived: add a test that kills each, or list it with its reason in %s (its key: file, mutation, #n and the line, tab-separated)", o.acceptedFile)
	}
	return nil
}

// goList runs go list and returns its output, trimmed.
func goList(args ...string) (string, error) {
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go list %v: %v: %s", args, err, ee.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// testRun is one test of a package's test binary, as the unmutated code
// runs it.
type testRun struct {
	name string
	dur  time.Duration
}

// goPackage is what mutatePackage reads of go list's description of a
// package.
type goPackage struct {
	ImportPath, Dir string
	GoFiles         []string
}

func mutatePackage(o options, pkg, module, root, tmp string, changed map[string]map[int]bool, acc map[string]string, start time.Time, out io.Writer) (*pkgResult, error) {
	lp, r, err := listMutants(pkg, module, root, changed)
	if err != nil {
		return nil, err
	}
	if len(r.mutants) == 0 {
		if changed == nil {
			fmt.Fprintf(out, "%s: no mutants\n", r.path)
		}
		return nil, nil
	}
	r.state, r.why = make([]string, len(r.mutants)), make([]string, len(r.mutants))
	pstart := time.Now()
	fmt.Fprintf(out, "%s: %d mutants; the coverage of each test...\n", r.path, len(r.mutants))
	tests, covers, err := testCoverage(pkg, lp, module, tmp, r.path, out)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s: %d tests, %.1fs\n", r.path, len(tests), time.Since(pstart).Seconds())

	// The mutants, in a random order.
	for _, i := range rand.New(rand.NewPCG(o.seed, 38)).Perm(len(r.mutants)) {
		m := r.mutants[i]
		if reason, ok := acc[m.Key()]; ok {
			r.state[i], r.why[i] = accepted, reason
			continue
		}
		var run []testRun
		for _, t := range tests {
			if m.Global || coveredBy(covers[t.name], m) {
				run = append(run, t)
			}
		}
		if len(run) == 0 {
			r.state[i] = notCovered
			continue
		}
		if o.budget > 0 && time.Since(pstart) > o.budget || o.total > 0 && time.Since(start) > o.total {
			r.state[i] = notRun
			continue
		}
		if r.state[i], r.why[i], err = tryMutant(o, m, run, pkg, root, tmp, lp.Dir); err != nil {
			return nil, err
		}
		if o.verbose || r.state[i] == lived {
			fmt.Fprintf(out, "%-11s %s:%d:%d %s  %s  %s\n", r.state[i], m.File, m.Line, m.Col, m.Op(), m.Text, r.why[i])
		}
	}
	r.elapsed = time.Since(pstart)
	fmt.Fprintf(out, "%s\n", summary(r))
	return r, nil
}

// listMutants returns the package pkg as go list describes it and its
// result with its mutants: all of them, or those of the lines in changed.
func listMutants(pkg, module, root string, changed map[string]map[int]bool) (goPackage, *pkgResult, error) {
	var lp goPackage
	info, err := goList("-json", pkg)
	if err != nil {
		return lp, nil, err
	}
	if err := json.Unmarshal([]byte(info), &lp); err != nil {
		return lp, nil, err
	}
	r := &pkgResult{path: strings.TrimPrefix(lp.ImportPath, module+"/")}
	for _, name := range lp.GoFiles {
		src, err := os.ReadFile(filepath.Join(lp.Dir, name))
		if err != nil {
			return lp, nil, err
		}
		rel, _ := filepath.Rel(root, filepath.Join(lp.Dir, name))
		ms, err := findMutants(filepath.ToSlash(rel), src)
		if err != nil {
			return lp, nil, err
		}
		for _, m := range ms {
			if changed == nil || changed[m.File][m.Line] {
				r.mutants = append(r.mutants, m)
			}
		}
	}
	return lp, r, nil
}

// testCoverage runs each test of the package once, unmutated, with a
// coverage profile: the tests that pass, fastest first, and the blocks each
// covers.
func testCoverage(pkg string, lp goPackage, module, tmp, path string, out io.Writer) ([]testRun, map[string][]block, error) {
	bin := filepath.Join(tmp, "cover.test")
	if b, err := exec.Command("go", "test", "-c", "-cover", "-covermode=set", "-coverpkg="+lp.ImportPath, "-o", bin, pkg).CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("go test -c -cover: %v\n%s", err, b)
	}
	listed, err := exec.Command(bin, "-test.list", ".*").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("listing the tests: %v", err)
	}
	var tests []testRun
	covers := map[string][]block{}
	for _, name := range strings.Fields(string(listed)) {
		if strings.HasPrefix(name, "Benchmark") || strings.HasPrefix(name, "ok ") {
			continue
		}
		prof := filepath.Join(tmp, "cover.out")
		t0 := time.Now()
		err := runTest(bin, lp.Dir, name, 30*time.Minute, "-test.coverprofile="+prof)
		d := time.Since(t0)
		if err != nil {
			fmt.Fprintf(out, "%s: %s fails without a mutant (%v): left out\n", path, name, err)
			continue
		}
		f, err := os.Open(prof)
		if err != nil {
			continue // an example without output is not run
		}
		bs, err := readProfile(f, module)
		f.Close()
		os.Remove(prof)
		if err != nil {
			return nil, nil, err
		}
		tests = append(tests, testRun{name, d})
		for _, b := range bs {
			if b.hits > 0 {
				covers[name] = append(covers[name], b)
			}
		}
	}
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].dur < tests[j].dur })
	return tests, covers, nil
}

// tryMutant builds the test binary with the mutant m planted (through an
// overlay) and runs the tests run until one fails: the mutant's state and
// the test that decided it (or, not viable, the compiler's first line).
func tryMutant(o options, m mutant, run []testRun, pkg, root, tmp, dir string) (state, why string, err error) {
	src, err := os.ReadFile(filepath.Join(root, m.File))
	if err != nil {
		return "", "", err
	}
	mfile := filepath.Join(tmp, "mutant_"+filepath.Base(m.File))
	if err := os.WriteFile(mfile, apply(src, m), 0o644); err != nil {
		return "", "", err
	}
	overlay := filepath.Join(tmp, "overlay.json")
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, m.File): mfile}})
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		return "", "", err
	}
	mbin := filepath.Join(tmp, "mutant.test")
	if b, err := exec.Command("go", "test", "-c", "-overlay", overlay, "-o", mbin, pkg).CombinedOutput(); err != nil {
		return notViable, firstLine(string(b)), nil
	}
	for _, t := range run {
		err := runTest(mbin, dir, t.name, time.Duration(o.coef*float64(t.dur))+5*time.Second, "")
		if errors.Is(err, context.DeadlineExceeded) {
			return timedOut, t.name, nil
		}
		if err != nil {
			return killed, t.name, nil
		}
	}
	return lived, "", nil
}

// coveredBy reports whether one of the blocks holds the mutant.
func coveredBy(bs []block, m mutant) bool {
	for _, b := range bs {
		if b.file == m.File && b.contains(m.Line, m.Col) {
			return true
		}
	}
	return false
}

// runTest runs one top-level test of a test binary in dir, with a timeout.
func runTest(bin, dir, name string, timeout time.Duration, extra string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-test.run", "^" + name + "$", "-test.count=1", "-test.timeout=" + (timeout + 10*time.Second).String()}
	if extra != "" {
		args = append(args, extra)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

// efficacy returns killed (timed out included) / (killed + lived), in percent.
func efficacy(r *pkgResult) (float64, int, int) {
	k, l := r.count(killed)+r.count(timedOut), r.count(lived)
	if k+l == 0 {
		return 0, k, l
	}
	return 100 * float64(k) / float64(k+l), k, l
}

// percent formats an efficacy, "-" when no mutant ran.
func percent(e float64, run int) string {
	if run == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", e)
}

func summary(r *pkgResult) string {
	e, k, l := efficacy(r)
	return fmt.Sprintf("%s: efficacy %s (%d killed of %d run; %d timed out among the killed), %d lived, %d accepted as equivalent, %d not covered, %d not viable, %d not run (budget), %d mutants in all; %.0fs",
		r.path, percent(e, k+l), k, k+l, r.count(timedOut), l, r.count(accepted), r.count(notCovered), r.count(notViable), r.count(notRun), len(r.mutants), r.elapsed.Seconds())
}

// report is the Markdown report of a run.
func report(o options, rs []*pkgResult, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Mutation testing\n\n")
	fmt.Fprintf(&b, "`go run ./internal/cmd/mutate %s` (%s, %s/%s, %d CPUs; %s, %.0f minutes).\n\n",
		strings.Join(os.Args[1:], " "), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().Format("2006-01-02"), elapsed.Minutes())
	fmt.Fprintf(&b, "Efficacy is killed / (killed + lived) of the mutants run (a timeout counts as killed). ")
	if o.budget > 0 {
		fmt.Fprintf(&b, "Each package had %v: its covered mutants were tried in a random order (seed %d) until it ran out, so its figures are those of a uniform sample.", o.budget, o.seed)
	}
	fmt.Fprintf(&b, "\n\n| package | efficacy | killed | lived | run | accepted | not covered | not viable | not run | mutants |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		e, k, l := efficacy(r)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", r.path, percent(e, k+l), k, l, k+l, r.count(accepted), r.count(notCovered), r.count(notViable), r.count(notRun), len(r.mutants))
	}
	for _, r := range rs {
		if r.count(lived) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: the mutants that lived\n\n", r.path)
		for i, m := range r.mutants {
			if r.state[i] == lived {
				fmt.Fprintf(&b, "- `%s:%d` %s: `%s`\n", m.File, m.Line, m.Op(), m.Text)
			}
		}
	}
	return b.String()
}
