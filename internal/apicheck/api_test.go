package apicheck

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite api/adamnode.txt from the code")

// goldenPath is the API file, relative to this package's folder.
const goldenPath = "../../api/adamnode.txt"

// TestAPI compares the exported API with api/adamnode.txt.
func TestAPI(t *testing.T) {
	got, err := moduleAPI()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := writeFile(goldenPath, []byte(strings.Join(got, "\n")+"\n")); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the exported API differs from api/adamnode.txt (-file +code):\n%s\n"+
			"If the change is meant: go test ./internal/apicheck -update, and say what a user sees in CHANGELOG.md.", diff)
	}
}

// writeFile writes b to path through a temporary file and a rename.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".api-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// publicPackages returns the import paths and folders of the module's
// public packages.
func publicPackages() (paths, dirs []string, err error) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}", "github.com/adamnode/adamnode/...").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w", err)
	}
	for l := range strings.Lines(string(out)) {
		p, d, _ := strings.Cut(strings.TrimSpace(l), "\t")
		rel := strings.TrimPrefix(p, "github.com/adamnode/adamnode")
		if rel == "" || slices.ContainsFunc([]string{"/internal", "/cmd", "/bench", "/examples"}, func(s string) bool {
			return strings.HasPrefix(rel, s+"/") || rel == s || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal")
		}) {
			continue
		}
		paths, dirs = append(paths, p), append(dirs, d)
	}
	return paths, dirs, nil
}

// moduleAPI returns the exported API of the public packages, a sorted line
// per name.
func moduleAPI() ([]string, error) {
	paths, dirs, err := publicPackages()
	if err != nil {
		return nil, err
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled, ctx.BuildTags = "linux", "amd64", false, nil
	var lines []string
	for i, dir := range dirs {
		bp, err := ctx.ImportDir(dir, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paths[i], err)
		}
		fset := token.NewFileSet()
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				for _, l := range declAPI(fset, d) {
					lines = append(lines, paths[i]+": "+l)
				}
			}
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// declAPI returns the exported names a declaration adds, a line each.
func declAPI(fset *token.FileSet, d ast.Decl) []string {
	str := func(n any) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		recv := ""
		if d.Recv != nil {
			rt := d.Recv.List[0].Type
			if !ast.IsExported(recvName(rt)) {
				return nil
			}
			recv = "(" + str(rt) + ") "
		}
		sig := str(typesOnly(d.Type))
		return []string{"func " + recv + d.Name.Name + strings.TrimPrefix(sig, "func")}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				head := "type " + s.Name.Name
				if s.TypeParams != nil {
					var ps []string
					for _, f := range s.TypeParams.List {
						var names []string
						for _, n := range f.Names {
							names = append(names, n.Name)
						}
						ps = append(ps, strings.Join(names, ", ")+" "+str(f.Type))
					}
					head += "[" + strings.Join(ps, ", ") + "]"
				}
				if s.Assign.IsValid() {
					head += " ="
				}
				switch t := s.Type.(type) {
				case *ast.StructType:
					out = append(out, head+" struct")
					for _, f := range t.Fields.List {
						for _, n := range f.Names {
							if n.IsExported() {
								out = append(out, head+" struct, "+n.Name+" "+str(f.Type))
							}
						}
						if len(f.Names) == 0 && ast.IsExported(recvName(f.Type)) {
							out = append(out, head+" struct, embedded "+str(f.Type))
						}
					}
				case *ast.InterfaceType:
					out = append(out, head+" interface")
					for _, m := range t.Methods.List {
						for _, n := range m.Names {
							if n.IsExported() {
								out = append(out, head+" interface, "+n.Name+strings.TrimPrefix(str(typesOnly(m.Type.(*ast.FuncType))), "func"))
							}
						}
						if len(m.Names) == 0 {
							out = append(out, head+" interface, embedded "+str(m.Type))
						}
					}
				default:
					out = append(out, head+" "+str(s.Type))
				}
			case *ast.ValueSpec:
				kind := d.Tok.String()
				for _, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					l := kind + " " + n.Name
					if s.Type != nil {
						l += " " + str(s.Type)
					}
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// typesOnly returns ft without its parameters' and results' names (a
// renamed parameter is no change of the API), one field per name.
func typesOnly(ft *ast.FuncType) *ast.FuncType {
	strip := func(l *ast.FieldList) *ast.FieldList {
		if l == nil {
			return nil
		}
		out := &ast.FieldList{}
		for _, f := range l.List {
			for range max(1, len(f.Names)) {
				out.List = append(out.List, &ast.Field{Type: f.Type})
			}
		}
		return out
	}
	return &ast.FuncType{TypeParams: ft.TypeParams, Params: strip(ft.Params), Results: strip(ft.Results)}
}

// recvName returns the name of a receiver's or an embedded field's type:
// T of T, *T, T[P] and *T[P].
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
