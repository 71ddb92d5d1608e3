package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// Attack "rewind-through-symlink": a directory of the tree is a symlink
// to an outside folder when a rewind deletes, creates or writes below
// it. Nothing outside changes; each put fails instead.
func TestRewindPutDoesNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("keep\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	s, err := Open(dir, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, _, err := s.putBlob([]byte("pwned\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{
		{Path: "link/precious", To: File{Path: "link/precious", Absent: true}},
		{Path: "link/newdir", To: File{Path: "link/newdir", Dir: true, Mode: 0o755}},
		{Path: "link/precious", To: File{Path: "link/precious", Hash: h, Mode: 0o644}},
		{Path: "link/deep/file", To: File{Path: "link/deep/file", Hash: h, Mode: 0o644}},
	} {
		if err := s.put(a); err == nil {
			t.Fatalf("%s (%+v): put through a symlink", a.Path, a.To)
		}
	}
	entries, _ := os.ReadDir(outside)
	data, _ := os.ReadFile(filepath.Join(outside, "precious"))
	if len(entries) != 1 || string(data) != "keep\n" {
		t.Fatalf("the outside folder changed: %d entries, %q", len(entries), data)
	}
	// Inside, the same puts work.
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	if err := s.put(Action{Path: "real/deep/file", To: File{Path: "real/deep/file", Hash: h, Mode: 0o600}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "real/deep/file")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
}

// The stale temporary files of an interrupted rewind are removed in the
// tree, and never through a symlink to an outside folder.
func TestStaleTempsAreRemovedBeneathOnly(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink(outside, filepath.Join(dir, "link"))
	for _, p := range []string{filepath.Join(dir, "real", ".f.tiny-tmp-1"), filepath.Join(outside, ".f.tiny-tmp-1"), filepath.Join(dir, ".g.tiny-tmp-2")} {
		os.WriteFile(p, nil, 0o644)
	}
	s, err := Open(dir, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.removeStaleTemps([]Action{{Path: "real/f"}, {Path: "link/f"}, {Path: "g"}})
	for p, want := range map[string]bool{filepath.Join(dir, "real", ".f.tiny-tmp-1"): false, filepath.Join(dir, ".g.tiny-tmp-2"): false, filepath.Join(outside, ".f.tiny-tmp-1"): true} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Fatalf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
}

// A FIFO and a socket are made again beneath the tree with their mode and
// modification time, a file gets its mtime back, and none of them is made
// through a directory swapped for a symlink.
func TestRewindPutSpecialAndMTimeBeneath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "link"))
	s, err := Open(dir, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, _, err := s.putBlob([]byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	const mtime = int64(981173106123456789)
	for _, kind := range []string{"fifo", "socket"} {
		a := Action{Path: "link/" + kind, To: File{Path: "link/" + kind, Special: kind, Mode: 0o640, MTime: mtime}}
		if err := s.put(a); err == nil {
			t.Fatalf("%s: made through a symlink", kind)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("%d entries made outside", len(entries))
	}
	want := map[string]os.FileMode{"d/fifo": os.ModeNamedPipe, "d/sock": os.ModeSocket, "d/file": 0}
	for _, a := range []Action{
		{Path: "d/fifo", To: File{Path: "d/fifo", Special: "fifo", Mode: 0o640, MTime: mtime}},
		{Path: "d/sock", To: File{Path: "d/sock", Special: "socket", Mode: 0o640, MTime: mtime}},
		{Path: "d/file", To: File{Path: "d/file", Hash: h, Mode: 0o640, MTime: mtime}},
	} {
		if err := s.put(a); err != nil {
			t.Fatalf("%s: %v", a.Path, err)
		}
		fi, err := os.Lstat(filepath.Join(dir, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != want[a.Path] || fi.Mode().Perm() != 0o640 || fi.ModTime().UnixNano() != mtime {
			t.Fatalf("%s: %v %v, want type %v mode 0640 mtime %d", a.Path, fi.Mode(), fi.ModTime().UnixNano(), want[a.Path], mtime)
		}
	}
}
