package archdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCLIPackageLines bounds each package of the command line (issue 46):
// the root only builds the command tree, and each command group, front end
// and part of the agent's assembly is a package a reader can take in.
const maxCLIPackageLines = 1500

// TestCLIPackagesStaySmall fails when internal/cli or a package under it
// has more than maxCLIPackageLines non-test lines.
func TestCLIPackagesStaySmall(t *testing.T) {
	root, err := filepath.Abs("../../internal/cli")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{root}
	subs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range subs {
		if d.IsDir() && d.Name() != "testdata" {
			dirs = append(dirs, filepath.Join(root, d.Name()))
		}
	}
	for _, dir := range dirs {
		n := packageLines(t, dir)
		rel, _ := filepath.Rel(filepath.Dir(filepath.Dir(root)), dir)
		if n > maxCLIPackageLines {
			t.Errorf("%s: %d non-test lines (at most %d: move a concern into a package of its own)", rel, n, maxCLIPackageLines)
		}
	}
}

func packageLines(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(src, []byte("\n"))
	}
	return n
}
