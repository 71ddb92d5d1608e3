// Package conformance locates the shared conformance suite
// (../shared/conformance relative to the repository root) for tests.
package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the shared conformance folder. It finds
// the repository root by walking up from the working directory to go.mod,
// and fails the test when the folder is not there.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Locate is Dir without a test: it returns the folder or an error saying
// where it was looked for.
func Locate() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("shared conformance folder not found: no go.mod in %s or above", wd)
		}
		root = parent
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "conformance")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", &NotFoundError{Path: dir}
	}
	return dir, nil
}

// NotFoundError says where the folder was expected.
type NotFoundError struct{ Path string }

func (e *NotFoundError) Error() string { return "shared conformance folder not found at " + e.Path }
