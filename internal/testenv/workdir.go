package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WorkRootEnv names the folder under which WorkDir makes the tests'
// working trees instead of /var/tmp.
const WorkRootEnv = "TINY_TEST_WORKROOT"

// OddName is a folder name with spaces and non-ASCII letters, as users
// name projects ("Mes Documents", "プロジェクト").
const OddName = "my project ünï 日本"

// WorkDir returns a new empty folder for a test's working tree, removed
// when the test ends. It lies where users keep projects rather than where
// tests usually do: outside TMPDIR and outside /tmp (under /var/tmp, or
// $TINY_TEST_WORKROOT), because a folder under the temporary directory is
// writable to commands for a reason that has nothing to do with the
// working tree, and hides bugs that every real project would meet. The
// folder can be entered by every user (0755), for tests that run tiny-go
// as an unprivileged user.
func WorkDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv(WorkRootEnv)
	if root == "" {
		root = "/var/tmp"
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatalf("testenv: the root of working trees: %v", err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatalf("testenv: the root of working trees: %v", err)
	}
	for _, tmp := range []string{os.Getenv("TMPDIR"), "/tmp"} {
		if tmp == "" {
			continue
		}
		if rt, err := filepath.EvalSymlinks(tmp); err == nil && within(real, rt) {
			t.Fatalf("testenv: %s lies in the temporary directory %s: set %s to another folder", root, tmp, WorkRootEnv)
		}
	}
	dir, err := os.MkdirTemp(real, "tiny-go-test-")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The tree is one level down, so a test that uses its parent (a
	// sibling directory, ../shared) has that parent to itself.
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return work
}

// OddWorkDir is WorkDir with a last element of OddName: spaces and
// non-ASCII letters.
func OddWorkDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(WorkDir(t), OddName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
