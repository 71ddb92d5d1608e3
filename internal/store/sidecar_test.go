package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSidecarDirBesideTheSession(t *testing.T) {
	cwd := t.TempDir()
	s, err := Create(cwd, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir, err := SidecarDir(s.Path(), false)
	if err == nil {
		t.Fatalf("SidecarDir without create found %s before it was made", dir)
	}
	dir, err = SidecarDir(s.Path(), true)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(s.Path(), ".jsonl") + ".d"; dir != want {
		t.Fatalf("sidecar dir %s, want %s", dir, want)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Fatalf("sidecar dir mode %v, err %v; want a 0700 directory", fi.Mode(), err)
	}
	f, err := OpenSidecarFile(dir, "reasoning.jsonl", os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ = os.Stat(filepath.Join(dir, "reasoning.jsonl"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("sidecar file mode %v, want 0600", fi.Mode().Perm())
	}
	// The sidecar directory is no session: listing and lookup pass it by.
	list, err := List(cwd)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d sessions, %v; want exactly the one session", len(list), err)
	}
}

func TestSidecarRefusesSymlinksAndSharedDirs(t *testing.T) {
	cwd := t.TempDir()
	s, err := Create(cwd, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target := t.TempDir()
	link := strings.TrimSuffix(s.Path(), ".jsonl") + ".d"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := SidecarDir(s.Path(), true); err == nil || !strings.Contains(err.Error(), "symlinks are refused") {
		t.Fatalf("a symlinked sidecar dir: err %v, want a refusal", err)
	}
	os.Remove(link)
	dir, err := SidecarDir(s.Path(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "x"), filepath.Join(dir, "fork.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSidecarFile(dir, "fork.json", os.O_CREATE|os.O_WRONLY); err == nil {
		t.Fatal("OpenSidecarFile followed a planted symlink")
	}
	if _, err := os.Stat(filepath.Join(target, "x")); err == nil {
		t.Fatal("a file was created through the planted symlink")
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := SidecarDir(s.Path(), false); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable sidecar dir: err %v, want a refusal", err)
	}
}

func TestStateDirOwnership(t *testing.T) {
	cwd := t.TempDir()
	dir, err := StateDir(cwd, "checkpoints", true)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cwd, ".tiny-agent", "checkpoints") {
		t.Fatalf("StateDir = %s", dir)
	}
	if _, err := StateDir(cwd, "../x", true); err == nil {
		t.Fatal("StateDir accepted a name with a slash")
	}
	if os.Geteuid() != 0 {
		t.Skip("changing a directory's owner needs root")
	}
	if err := unix.Chown(dir, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	if _, err := StateDir(cwd, "checkpoints", false); err == nil || !strings.Contains(err.Error(), "owned by another user") {
		t.Fatalf("a directory of another user: err %v, want a refusal", err)
	}
}
