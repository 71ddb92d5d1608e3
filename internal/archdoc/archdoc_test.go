package archdoc

import (
	"bufio"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tiny-agent/tiny-go/"

// TestArchitectureListsTheImports compares docs/architecture.md's imports
// list with the imports of every package's non-test Go files.
func TestArchitectureListsTheImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := actualImports(t, root)
	got, err := documentedImports(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if render(got) != render(want) {
		t.Errorf("docs/architecture.md's imports list is not the code's; it should read:\n%s", render(want))
	}
}

// actualImports maps each package directory (relative to root) to the
// module's packages it imports, both without the module prefix.
func actualImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "evals" || name == "docs") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files (or only tests) here
		}
		rel, _ := filepath.Rel(root, path)
		var deps []string
		for _, imp := range pkg.Imports {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				deps = append(deps, dep)
			}
		}
		slices.Sort(deps)
		out[filepath.ToSlash(rel)] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documentedImports reads the ```imports block: one "pkg: dep dep" a line.
func documentedImports(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```imports":
			in = true
		case in && line == "```":
			return out, nil
		case in && line != "":
			pkg, deps, _ := strings.Cut(line, ":")
			fields := strings.Fields(deps)
			slices.Sort(fields)
			out[strings.TrimSpace(pkg)] = fields
		}
	}
	return out, sc.Err()
}

func render(m map[string][]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + ":")
		for _, d := range m[k] {
			b.WriteString(" " + d)
		}
		b.WriteString("\n")
	}
	return b.String()
}
