package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// A mutant is one token of a library file replaced: an operator swapped
// for another, or a unary minus dropped.
type mutant struct {
	File      string // path relative to the module root, slash-separated
	Offset    int    // byte offset of the token in the file
	Line, Col int
	From, To  string // the token and its replacement ("" drops it)
	Kind      string // the class of mutation, as gremlins names them
	Text      string // the source line, trimmed
	Nth       int    // 1 + the number of tokens From earlier on the same line
	Global    bool   // outside every function body (a constant or variable's initialiser)
}

// Op is the mutation as written in reports and in the accepted list.
func (m mutant) Op() string {
	to := m.To
	if to == "" {
		to = "(dropped)"
	}
	return m.From + " -> " + to
}

// Key identifies the mutant in the accepted list without its line number
// (which other edits move): file, operation, occurrence on the line and the
// line's text.
func (m mutant) Key() string {
	return strings.Join([]string{m.File, m.Op(), "#" + strconv.Itoa(m.Nth), m.Text}, "\t")
}

// The replacements of each operator token, by kind.
var (
	arithmetic = map[token.Token]token.Token{token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL}
	boundary   = map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}
	negation   = map[token.Token]token.Token{token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR}
	logical    = map[token.Token]token.Token{token.LAND: token.LOR, token.LOR: token.LAND}
	assigns    = map[token.Token]token.Token{token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN}
	incdec     = map[token.Token]token.Token{token.INC: token.DEC, token.DEC: token.INC}
)

// findMutants returns the mutants of one Go source file (path is how
// reports name it), in source order.
func findMutants(path string, src []byte) ([]mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var bodies [][2]token.Pos
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			bodies = append(bodies, [2]token.Pos{fd.Body.Lbrace, fd.Body.Rbrace})
		}
	}
	var ms []mutant
	add := func(pos token.Pos, from token.Token, to, kind string) {
		p := fset.Position(pos)
		global := true
		for _, b := range bodies {
			if pos > b[0] && pos < b[1] {
				global = false
			}
		}
		ms = append(ms, mutant{File: path, Offset: p.Offset, Line: p.Line, Col: p.Column, From: from.String(), To: to, Kind: kind, Global: global})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			if n.Tok == token.IMPORT {
				return false
			}
		case *ast.BinaryExpr:
			if n.Op == token.ADD && (isString(n.X) || isString(n.Y)) {
				break // a string concatenation: "−" would not compile
			}
			if to, ok := arithmetic[n.Op]; ok {
				add(n.OpPos, n.Op, to.String(), "ARITHMETIC_BASE")
			}
			if to, ok := boundary[n.Op]; ok {
				add(n.OpPos, n.Op, to.String(), "CONDITIONALS_BOUNDARY")
			}
			if to, ok := negation[n.Op]; ok {
				add(n.OpPos, n.Op, to.String(), "CONDITIONALS_NEGATION")
			}
			if to, ok := logical[n.Op]; ok {
				add(n.OpPos, n.Op, to.String(), "INVERT_LOGICAL")
			}
		case *ast.AssignStmt:
			if to, ok := assigns[n.Tok]; ok {
				add(n.TokPos, n.Tok, to.String(), "INVERT_ASSIGNMENTS")
			}
		case *ast.IncDecStmt:
			add(n.TokPos, n.Tok, incdec[n.Tok].String(), "INCREMENT_DECREMENT")
		case *ast.UnaryExpr:
			if n.Op == token.SUB {
				add(n.OpPos, n.Op, "", "INVERT_NEGATIVES")
			}
		}
		return true
	})
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Offset < ms[j].Offset })
	lines := strings.Split(string(src), "\n")
	type tok struct {
		line int
		from string
	}
	count, last := map[tok]int{}, map[tok]int{}
	for i := range ms {
		m := &ms[i]
		m.Text = strings.TrimSpace(lines[m.Line-1])
		k := tok{m.Line, m.From}
		if n, ok := last[k]; !ok || n != m.Offset {
			count[k]++ // a new token (its other mutants share its number)
			last[k] = m.Offset
		}
		m.Nth = count[k]
	}
	return ms, nil
}

// isString reports whether e is a string literal (or a parenthesised one).
func isString(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.STRING
}

// apply returns src with the mutant's token replaced.
func apply(src []byte, m mutant) []byte {
	out := make([]byte, 0, len(src)+2)
	out = append(out, src[:m.Offset]...)
	out = append(out, m.To...)
	return append(out, src[m.Offset+len(m.From):]...)
}
