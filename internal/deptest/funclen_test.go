package deptest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds the body of every function (the lines between its
// braces) in the packages of funcLenScope, so that a reader can hold each
// in their head: the path of an action, its verification and the agent
// loop are read as named phases, not as one long function.
const maxFuncLines = 80

// funcLenScope lists the packages (relative to the module, with their
// subpackages) whose functions maxFuncLines bounds. Test files are out of
// scope: a table of cases may be long.
var funcLenScope = []string{"internal/broker", "audit", "agent"}

// longFuncs returns every function declared in f whose body is longer
// than limit lines, as "file:line name: N lines".
func longFuncs(fset *token.FileSet, f *ast.File, limit int) []string {
	var long []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line - 1
		if n <= limit {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			name = "(" + recvType(fd.Recv.List[0].Type) + ")." + name
		}
		pos := fset.Position(fd.Pos())
		long = append(long, fmt.Sprintf("%s:%d %s: %d lines", pos.Filename, pos.Line, name, n))
	}
	return long
}

// recvType is a method's receiver type as written, without type
// parameters.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// longFuncsUnder parses every non-test Go file under dir (testdata and
// hidden directories left out) and returns the functions longer than
// limit lines, and how many files it read.
func longFuncsUnder(dir string, limit int) (long []string, files int, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		long = append(long, longFuncs(fset, f, limit)...)
		return nil
	})
	return long, files, err
}

// TestFunctionLength fails for every function in funcLenScope whose body
// is longer than maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, p := range funcLenScope {
		long, files, err := longFuncsUnder(filepath.Join(root, filepath.FromSlash(p)), maxFuncLines)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if files == 0 {
			t.Fatalf("%s: no Go files read", p)
		}
		for _, l := range long {
			t.Errorf("%s is longer than %d lines: split it into named steps", l, maxFuncLines)
		}
	}
}

// TestLongFunctionsAreFound proves the length check is not vacuous: a
// function one line over the limit is found, by its name and receiver,
// and one at the limit is not.
func TestLongFunctionsAreFound(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	src := "package p\n\n" +
		"type T[K any] struct{}\n\n" +
		"func atLimit() {\n" + body(maxFuncLines) + "}\n\n" +
		"func overLimit() {\n" + body(maxFuncLines+1) + "}\n\n" +
		"func (t *T[K]) method() {\n" + body(maxFuncLines+1) + "}\n\n" +
		"func oneLine() { _ = 0 }\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := longFuncs(fset, f, maxFuncLines)
	want := []string{
		fmt.Sprintf("p.go:%d overLimit: %d lines", 5+maxFuncLines+3, maxFuncLines+1),
		fmt.Sprintf("p.go:%d (*T).method: %d lines", 5+maxFuncLines+3+maxFuncLines+4, maxFuncLines+1),
	}
	if strings.Join(long, "\n") != strings.Join(want, "\n") {
		t.Fatalf("longFuncs =\n%s\nwant\n%s", strings.Join(long, "\n"), strings.Join(want, "\n"))
	}
}
