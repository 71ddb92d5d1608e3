package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolStateIsPrivate checks the modes of everything bash and bg create
// under .tiny-agent: directories 0700, logs and records 0600.
func TestToolStateIsPrivate(t *testing.T) {
	tools, dir := testTools(t)
	got := call(t, tools["bash"], map[string]any{"command": "seq 1 3000"})
	_, _, _, _, _, log := splitNotice(t, dir, got.Content)
	id, _ := bgStart(t, tools["bg"], "echo hi; exec sleep 30")
	waitStatus(t, tools["bg"], id, "running")
	call(t, tools["bg"], map[string]any{"action": "stop", "id": id})

	want := map[string]fs.FileMode{
		".tiny-agent":                    0o700,
		".tiny-agent/tool-output":        0o700,
		".tiny-agent/bg":                 0o700,
		strings.TrimPrefix(log, dir+"/"): 0o600,
		".tiny-agent/bg/" + id + ".log":  0o600,
		".tiny-agent/bg/" + id + ".json": 0o600,
	}
	seen := 0
	err := filepath.WalkDir(filepath.Join(dir, ".tiny-agent"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(path, dir+"/")
		perm := fi.Mode().Perm()
		if w, ok := want[rel]; ok {
			seen++
			if perm != w {
				t.Errorf("%s has mode %04o, want %04o", rel, perm, w)
			}
		}
		// Whatever else is there (process records, ...) is private too.
		if perm&0o077 != 0 {
			t.Errorf("%s has mode %04o: others can read it", rel, perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Fatalf("found %d of %d expected paths", seen, len(want))
	}
}

// TestPlantedSymlinksAreRefused plants symlinks for tool-output/ and bg/
// (pointing at a directory the attacker picked): bash keeps working but
// saves no log there, bg refuses to start, and nothing is written to the
// symlinks' target.
func TestPlantedSymlinksAreRefused(t *testing.T) {
	tools, dir := testTools(t)
	target := t.TempDir()
	state := filepath.Join(dir, ".tiny-agent")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool-output", "bg"} {
		if err := os.Symlink(target, filepath.Join(state, name)); err != nil {
			t.Fatal(err)
		}
	}
	got := call(t, tools["bash"], map[string]any{"command": "seq 1 3000"})
	if got.IsError || !strings.Contains(got.Content, "The full output could not be saved: ") || !strings.Contains(got.Content, "tool-output is not a directory (symlinks are refused)") {
		t.Fatalf("bash with a planted tool-output: %q", got.Content[max(0, len(got.Content)-200):])
	}
	res := call(t, tools["bg"], map[string]any{"action": "start", "command": "touch started"})
	if !res.IsError || !strings.Contains(res.Content, "bg is not a directory (symlinks are refused)") {
		t.Fatalf("bg start with a planted bg/: %+v", res)
	}
	if res := call(t, tools["bg"], map[string]any{"action": "list"}); !res.IsError {
		t.Fatalf("bg list read through the symlink: %+v", res)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Fatalf("the symlinks' target got %d entries", len(entries))
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Fatal("the bg command ran")
	}

	// The same for a planted .tiny-agent, and one that others can write.
	tools2, dir2 := testTools(t)
	if err := os.Symlink(target, filepath.Join(dir2, ".tiny-agent")); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tools2["bg"], map[string]any{"action": "start", "command": "true"}); !res.IsError || !strings.Contains(res.Content, ".tiny-agent is not a directory (symlinks are refused)") {
		t.Fatalf("bg start with a planted .tiny-agent: %+v", res)
	}
	tools3, dir3 := testTools(t)
	if err := os.Mkdir(filepath.Join(dir3, ".tiny-agent"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir3, ".tiny-agent"), 0o777)
	if res := call(t, tools3["bg"], map[string]any{"action": "start", "command": "true"}); !res.IsError || !strings.Contains(res.Content, "is writable by other users (mode 0777); refusing to use it") {
		t.Fatalf("bg start with a world-writable .tiny-agent: %+v", res)
	}
}
