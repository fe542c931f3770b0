package apicheck

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeclAPI: what a declaration adds to the API file — exported names
// only, signatures without parameter names, struct fields and interface
// methods a line each.
func TestDeclAPI(t *testing.T) {
	const src = `package p
type S[T any] struct {
	A, b int
	Embedded
	c    string
}
type hidden struct{ X int }
type I interface {
	M(x, y int) (n int, err error)
	m()
}
type Alias = S[int]
type N int
const C, d = 1, 2
var V float64
func F[T any](a, b T, c ...int) (T, error) { var z T; return z, nil }
func f() {}
func (s *S[T]) Method(x int) {}
func (h hidden) Method() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range f.Decls {
		got = append(got, declAPI(fset, d)...)
	}
	want := []string{
		"type S[T any] struct",
		"type S[T any] struct, A int",
		"type S[T any] struct, embedded Embedded",
		"type I interface",
		"type I interface, M(int, int) (int, error)",
		"type Alias = S[int]",
		"type N int",
		"const C",
		"var V float64",
		"func F[T any](T, T, ...int) (T, error)",
		"func (*S[T]) Method(int)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("declAPI (-want +got):\n%s", diff)
	}
}
