package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write replaces the content in one step, with the mode asked for (a
// setuid bit included), makes the folders asked for, and leaves no
// temporary file, whether it succeeds or not.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "f")
	if err := Write(p, []byte("one"), Options{}); err == nil {
		t.Fatal("wrote into a missing folder without DirPerm")
	}
	if err := Write(p, []byte("one"), Options{DirPerm: 0o700, Perm: 0o751 | os.ModeSetuid, Sync: true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder: %v %v", fi.Mode(), err)
	}
	if err := Write(p, []byte("two"), Options{Perm: 0o751 | os.ModeSetuid}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode()&os.ModeSetuid == 0 || fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	if err := Write(filepath.Join(p, "under-a-file"), nil, Options{}); err == nil {
		t.Fatal("wrote beneath a file")
	}
	if err := Write(filepath.Join(dir, "a"), []byte("x"), Options{}); err == nil {
		t.Fatal("replaced a folder")
	}
	filepath.WalkDir(dir, func(path string, _ os.DirEntry, _ error) error {
		if strings.Contains(filepath.Base(path), TempInfix) {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
	if err := Write(filepath.Join(dir, "plain"), []byte("x"), Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "plain")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("default mode %v", fi.Mode())
	}
}
