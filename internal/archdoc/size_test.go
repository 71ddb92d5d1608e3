package archdoc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The house rules: a file a reader can hold in their head, a function that
// fits on a screen. Tables and generated code are the only exceptions, and
// generated files say so in their header (the Go convention).
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// TestFilesAndFunctionsStaySmall fails when a non-test Go file has more than
// maxFileLines lines or a function more than maxFuncLines.
func TestFilesAndFunctionsStaySmall(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range oversized(t, root) {
		t.Error(p)
	}
}

// oversized lists, one line each, the files and functions over the limits.
func oversized(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			out = append(out, fmt.Sprintf("%s: %d lines (at most %d: split it along a seam, one concept a file)", rel, n, maxFileLines))
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := end - start + 1; n > maxFuncLines {
				out = append(out, fmt.Sprintf("%s:%d: func %s is %d lines (at most %d: name its phases as functions)", rel, start, fn.Name.Name, n, maxFuncLines))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
