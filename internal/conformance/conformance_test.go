package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirFindsTheSessionSuite(t *testing.T) {
	dir := Dir(t)
	if _, err := os.Stat(filepath.Join(dir, "session", "fixtures", "manifest.json")); err != nil {
		t.Fatalf("%s has no session fixtures: %v", dir, err)
	}
}

func TestLocateOutsideTheRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Locate()
	if err == nil || !strings.HasPrefix(err.Error(), "shared conformance folder not found") {
		t.Fatalf("Locate outside the repository: %v", err)
	}
}

func TestLocateWithoutSharedFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "sub"))
	_, err := Locate()
	want := "shared conformance folder not found at " + filepath.Join(filepath.Dir(root), "shared", "conformance")
	if err == nil || err.Error() != want {
		t.Fatalf("Locate = %v, want %q", err, want)
	}
}
