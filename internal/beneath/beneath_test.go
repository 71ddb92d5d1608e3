package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Both ways (openat2, and the O_NOFOLLOW walk of older kernels) open
// real directories and refuse a symlink anywhere on the way or an escape.
func TestDirRefusesSymlinks(t *testing.T) {
	for _, walkOnly := range []bool{false, true} {
		noOpenat2.Store(walkOnly)
		t.Cleanup(func() { noOpenat2.Store(false) })
		root := t.TempDir()
		outside := t.TempDir()
		os.MkdirAll(filepath.Join(root, "a/b"), 0o755)
		os.Symlink(outside, filepath.Join(root, "a/out"))
		os.Symlink("b", filepath.Join(root, "a/inside"))
		rfd, err := Root(root)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(rfd)
		fd, err := Dir(rfd, "a/b")
		if err != nil {
			t.Fatalf("walk=%v: a real directory: %v", walkOnly, err)
		}
		unix.Close(fd)
		for _, rel := range []string{"a/out", "a/out/x", "a/inside", "../" + filepath.Base(outside), "/etc"} {
			if fd, err := Dir(rfd, rel); err == nil {
				unix.Close(fd)
				t.Fatalf("walk=%v: %s was opened", walkOnly, rel)
			}
		}
		if fd, err := MkdirAll(rfd, "a/out/new", 0o700); err == nil {
			unix.Close(fd)
			t.Fatalf("walk=%v: MkdirAll went through a symlink", walkOnly)
		}
		if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("walk=%v: created outside", walkOnly)
		}
		fd, err = MkdirAll(rfd, "c/d/e", 0o700)
		if err != nil {
			t.Fatalf("walk=%v: %v", walkOnly, err)
		}
		unix.Close(fd)
		os.RemoveAll(filepath.Join(root, "c"))
	}
}

// BenchmarkParent: opening the directory of a path three deep, as the
// apply does for each side of each change.
func BenchmarkParent(b *testing.B) {
	root := b.TempDir()
	os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755)
	rfd, err := Root(root)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(rfd)
	for b.Loop() {
		fd, _, err := Parent(rfd, "a/b/c/file", false)
		if err != nil {
			b.Fatal(err)
		}
		unix.Close(fd)
	}
}
