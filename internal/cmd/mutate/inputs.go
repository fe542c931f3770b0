package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// changedLines parses a unified diff with no context (git diff -U0) and
// returns, per file of the new side, the lines it added or changed.
func changedLines(diff io.Reader) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	var file string
	sc := bufio.NewScanner(diff)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = ""
			if name, ok := strings.CutPrefix(l[4:], "b/"); ok {
				file = name
			}
		case strings.HasPrefix(l, "@@ ") && file != "":
			// @@ -a[,b] +c[,d] @@
			f := strings.Fields(l)
			if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
				return nil, fmt.Errorf("bad hunk header %q", l)
			}
			start, n := f[2][1:], "1"
			if s, c, ok := strings.Cut(start, ","); ok {
				start, n = s, c
			}
			a, err1 := strconv.Atoi(start)
			b, err2 := strconv.Atoi(n)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad hunk header %q", l)
			}
			if out[file] == nil {
				out[file] = map[int]bool{}
			}
			for i := a; i < a+b; i++ {
				out[file][i] = true
			}
		}
	}
	return out, sc.Err()
}

// resolveBase returns the commit to diff against for -diff auto: $MUTATE_BASE
// if set; else where HEAD left origin/main, when it has; else the previous
// commit. It returns "" and why when there is none (a shallow clone of
// one commit, no git).
func resolveBase(spec string) (base, why string) {
	git := func(args ...string) (string, bool) {
		out, err := exec.Command("git", args...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	if _, ok := git("rev-parse", "--git-dir"); !ok {
		return "", "not a git work tree (or no git)"
	}
	if spec != "auto" {
		if c, ok := git("rev-parse", "--verify", "-q", spec+"^{commit}"); ok {
			return c, ""
		}
		return "", fmt.Sprintf("no commit %q here (a shallow clone? fetch it, or set MUTATE_BASE)", spec)
	}
	if env := os.Getenv("MUTATE_BASE"); env != "" && env != "auto" {
		return resolveBase(env)
	}
	head, _ := git("rev-parse", "HEAD")
	if _, ok := git("rev-parse", "--verify", "-q", "origin/main^{commit}"); ok {
		if mb, ok := git("merge-base", "HEAD", "origin/main"); ok && mb != head {
			return mb, ""
		}
	}
	if c, ok := git("rev-parse", "--verify", "-q", "HEAD~1^{commit}"); ok {
		return c, ""
	}
	return "", "HEAD has no parent here (a shallow clone of one commit?) and MUTATE_BASE is not set"
}

// A block is a range of a file that a test's coverage profile marks run.
type block struct {
	file                 string // relative to the module root
	l0, c0, l1, c1, hits int
}

// readProfile parses a coverage profile (go test -coverprofile), naming
// files relative to the module root (the import path's module prefix cut).
func readProfile(r io.Reader, module string) ([]block, error) {
	var bs []block
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "mode:") || l == "" {
			continue
		}
		// file:l0.c0,l1.c1 nstmt count
		colon := strings.LastIndex(l, ":")
		if colon < 0 {
			return nil, fmt.Errorf("bad profile line %q", l)
		}
		var b block
		var n int
		if _, err := fmt.Sscanf(l[colon+1:], "%d.%d,%d.%d %d %d", &b.l0, &b.c0, &b.l1, &b.c1, &n, &b.hits); err != nil {
			return nil, fmt.Errorf("bad profile line %q: %v", l, err)
		}
		b.file = strings.TrimPrefix(l[:colon], module+"/")
		bs = append(bs, b)
	}
	return bs, sc.Err()
}

// contains reports whether the block holds the position line:col.
func (b block) contains(line, col int) bool {
	after := line > b.l0 || line == b.l0 && col >= b.c0
	before := line < b.l1 || line == b.l1 && col < b.c1
	return after && before
}

// readAccepted reads the accepted equivalent mutants: one per line, the
// fields of mutant.Key and a reason, tab-separated; '#' starts a comment
// line. An entry without a reason is an error.
func readAccepted(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 5 || strings.TrimSpace(f[4]) == "" {
			return nil, fmt.Errorf("line %d: want file, mutation, #n, source line and a reason, tab-separated: %q", n, l)
		}
		out[strings.Join(f[:4], "\t")] = f[4]
	}
	return out, sc.Err()
}
